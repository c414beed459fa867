// Package notify signs, verifies and delivers refbatch's notifications:
// the JSON events a batch owes its receivers (batch_finished,
// batch_interrupted, rows_need_person, batch_stalled), sent by POST to a
// webhook or on the standard input of a local command.
//
// # Signature
//
// Every request carries the header
//
//	Refbatch-Signature: t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// where t is the Unix time of the attempt and v1 the lowercase hex
// HMAC-SHA256, keyed with the shared secret, of t, a dot and the body
// byte for byte ("1767225600.{...}"). A receiver recomputes it over the
// raw body (before any JSON parsing) and compares in constant time, and
// refuses a t outside its tolerance: a request captured and sent again
// later is refused then. Verify does both. Within the tolerance, and for
// the retries at-least-once delivery makes, the receiver deduplicates on
// the event's "id", which never changes between attempts.
//
// The package imports nothing of refbatch, so that a receiver written in
// Go may import it for Verify alone.
package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the request header that carries the signature.
const Header = "Refbatch-Signature"

// DefaultTolerance is how far from the receiver's clock Verify accepts a
// signature's time by default.
const DefaultTolerance = 5 * time.Minute

// Errors Verify returns; each wrapped with the detail.
var (
	// ErrBadSignature: the header is missing or malformed, or no v1
	// signature in it matches the body under the secret (a forgery, a
	// body changed in transit, or another secret).
	ErrBadSignature = errors.New("refbatch signature does not match")
	// ErrStale: the signature is sound but its time is outside the
	// tolerance: a replay, or a clock far off.
	ErrStale = errors.New("refbatch signature outside the time tolerance")
)

// Sign returns the header value for body, signed with secret at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a request's Refbatch-Signature header against its raw
// body: nil when a v1 signature matches under secret and its time is
// within tolerance of now (DefaultTolerance when tolerance is 0). It
// returns ErrBadSignature for a forgery and ErrStale for a replay.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return fmt.Errorf("%w: malformed header", ErrBadSignature)
		case k == "t":
			ts = v
		case k == "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: no t= or no v1= in the header", ErrBadSignature)
	}
	want := []byte(mac(secret, ts, body))
	matched := false
	for _, s := range sigs {
		matched = matched || hmac.Equal([]byte(s), want)
	}
	if !matched {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrStale, d.Round(time.Second))
	}
	return nil
}
