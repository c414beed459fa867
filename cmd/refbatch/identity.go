package main

import (
	"fmt"
	"io"
	"os"
)

// warnOpenIdentity warns on stderr, as ssh does for a private key, when
// the identity file f is readable (or writable) by its group or by
// others: whoever reads it decrypts every artifact of the batch. It does
// not refuse the file: the person running the command may not own it (a
// shared service account's key, a file on a mount whose modes lie), and
// refusing would only stop the work, not protect the key.
func warnOpenIdentity(f *os.File, stderr io.Writer) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		fmt.Fprintf(stderr, "refbatch: warning: identity file %s is open to others (mode %04o): whoever reads it can decrypt every artifact; chmod 600 %s\n",
			termText(f.Name()), perm, termText(f.Name()))
	}
}
