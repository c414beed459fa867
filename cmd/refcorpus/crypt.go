package main

import (
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// stdSecurity is the PDF standard security handler with RC4 (ISO 32000-1
// 7.6.3, algorithms 1 to 5): revision 2 with a 40-bit key or revision 3
// with a 128-bit key. It is written here rather than by pdfcpu because
// pdfcpu draws the file ID at random, and the corpus must be
// byte-identical run after run: the ID is fixed by the caller instead.
type stdSecurity struct {
	rev  int // 2 or 3
	key  []byte
	o, u []byte
	p    int32
	id   []byte
}

// passwordPad is the padding string of algorithm 2, step a.
var passwordPad = []byte{
	0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08,
	0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
}

// permissions grants everything: readers open the file with the user
// password alone either way, and only that matters here.
const permissions = -4

// newStdSecurity sets up encryption with the given passwords and file ID.
// An empty user password makes a file every reader opens silently, yet it
// is still encrypted.
func newStdSecurity(rev int, userPW, ownerPW string, id []byte) (*stdSecurity, error) {
	if rev != 2 && rev != 3 {
		return nil, fmt.Errorf("security handler revision %d is not 2 or 3", rev)
	}
	if ownerPW == "" {
		ownerPW = userPW
	}
	s := &stdSecurity{rev: rev, p: permissions, id: id}
	n := 5
	if rev == 3 {
		n = 16
	}

	// Algorithm 3: the owner entry.
	h := md5.Sum(padPassword(ownerPW))
	if rev == 3 {
		for range 50 {
			h = md5.Sum(h[:])
		}
	}
	s.o = rc4Rounds(h[:n], padPassword(userPW), rev)

	// Algorithm 2: the file key.
	m := md5.New()
	m.Write(padPassword(userPW))
	m.Write(s.o)
	var p [4]byte
	binary.LittleEndian.PutUint32(p[:], uint32(s.p))
	m.Write(p[:])
	m.Write(id)
	key := m.Sum(nil)
	if rev == 3 {
		for range 50 {
			k := md5.Sum(key[:n])
			key = k[:]
		}
	}
	s.key = key[:n]

	// Algorithms 4 and 5: the user entry.
	if rev == 2 {
		s.u = rc4Rounds(s.key, passwordPad, rev)
	} else {
		uh := md5.Sum(append(append([]byte{}, passwordPad...), id...))
		s.u = append(rc4Rounds(s.key, uh[:], rev), make([]byte, 16)...)
	}
	return s, nil
}

// padPassword is a password cut or padded to 32 bytes.
func padPassword(pw string) []byte {
	b := []byte(pw)
	if len(b) > 32 {
		b = b[:32]
	}
	return append(b, passwordPad[:32-len(b)]...)
}

// rc4Rounds encrypts data with key once (revision 2), or 20 times with the
// key XORed with 0 to 19 (revision 3).
func rc4Rounds(key, data []byte, rev int) []byte {
	out := rc4Crypt(key, data)
	if rev == 3 {
		k := make([]byte, len(key))
		for i := byte(1); i <= 19; i++ {
			for j := range key {
				k[j] = key[j] ^ i
			}
			out = rc4Crypt(k, out)
		}
	}
	return out
}

func rc4Crypt(key, data []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err) // the key length is always 5 to 16 bytes
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// encrypt encrypts one stream of object num (generation 0) with its
// object key (algorithm 1).
func (s *stdSecurity) encrypt(num int, data []byte) []byte {
	b := append([]byte{}, s.key...)
	b = append(b, byte(num), byte(num>>8), byte(num>>16), 0, 0)
	h := md5.Sum(b)
	return rc4Crypt(h[:min(len(s.key)+5, 16)], data)
}

// dict is the encryption dictionary.
func (s *stdSecurity) dict() string {
	v, bits := 1, 40
	if s.rev == 3 {
		v, bits = 2, 128
	}
	return fmt.Sprintf("<< /Filter /Standard /V %d /R %d /Length %d /O <%s> /U <%s> /P %d >>",
		v, s.rev, bits, hex.EncodeToString(s.o), hex.EncodeToString(s.u), s.p)
}
