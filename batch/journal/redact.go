package journal

import (
	"net/url"
	"regexp"
	"strings"
)

// This file is the one redaction of connection strings: every message,
// log line, report field and status line that names a journal, and every
// error that opening one returns, goes through it, so that no password
// given in a --journal URL (or in REFBATCH_JOURNAL) is ever printed.

// mask is what a secret is printed as.
const mask = "xxxxx"

// secretParam reports whether a connection parameter's value is secret, or
// names key material, and is masked: password, sslpassword and sslkey, and
// generously any parameter whose name speaks of a password, a secret or a
// token.
func secretParam(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	switch k {
	case "sslkey", "sslpassword", "password", "passwd", "pass":
		return true
	}
	return strings.Contains(k, "password") || strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// Redact returns location with every secret masked as "xxxxx", for
// messages and logs: the password of a postgres:// URL's user, the value of
// each secret query parameter (?password=, ?sslpassword=, ?sslkey=, ...),
// and the same parameters in libpq's key=value form. A URL that does not
// parse is not shown at all; a file path is returned as it is.
func Redact(location string) string {
	if !IsURL(location) {
		return redactKV(location)
	}
	u, err := url.Parse(location)
	if err != nil {
		return "postgres://(unreadable URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), mask)
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = mask, ""
	}
	return u.String()
}

// redactQuery masks the values of the secret parameters of a raw query,
// keeping the others byte for byte and in order.
func redactQuery(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, has := strings.Cut(p, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if has && secretParam(k) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + mask
		}
	}
	return strings.Join(parts, "&")
}

// kvSecret matches a secret parameter of libpq's key=value form, its value
// in single quotes (escapes included) or up to the next space.
var kvSecret = regexp.MustCompile(`(?i)\b([a-z_]*(?:password|secret|token|sslkey|passwd)[a-z_]*)\s*=\s*(?:'(?:[^'\\]|\\.|'')*'?|[^\s]*)`)

// redactKV masks the secret parameters of a key=value connection string;
// any other string has none and is returned as it is.
func redactKV(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	return kvSecret.ReplaceAllString(s, "${1}="+mask)
}

// secrets returns the secret values location holds, raw and decoded, for
// scrubbing them out of messages that a driver wrote (redactErr).
func secrets(location string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= 2 && v != mask {
			out = append(out, v)
		}
	}
	if IsURL(location) {
		if u, err := url.Parse(location); err == nil {
			if pw, has := u.User.Password(); has {
				add(pw)
				add(url.PathEscape(pw))
				add(url.QueryEscape(pw))
			}
			for _, p := range strings.Split(u.RawQuery, "&") {
				k, v, _ := strings.Cut(p, "=")
				if dk, err := url.QueryUnescape(k); err == nil && secretParam(dk) {
					add(v)
					if dv, err := url.QueryUnescape(v); err == nil {
						add(dv)
					}
				}
			}
			add(u.Fragment)
		}
	}
	for _, m := range kvSecret.FindAllStringSubmatch(location, -1) {
		_, v, _ := strings.Cut(m[0], "=")
		v = strings.TrimSpace(v)
		add(v)
		add(strings.Trim(v, "'"))
	}
	return out
}

// redactErr returns err with every secret of location, and the location
// itself, masked in its message: a driver's connection errors may quote
// the connection string. Errors wrapped in it stay visible to errors.Is
// and errors.As.
func redactErr(location string, err error) error {
	if err == nil {
		return nil
	}
	s := secrets(location)
	if len(s) == 0 && !strings.Contains(err.Error(), location) {
		return err
	}
	return &redactedError{err: err, location: location, secrets: s}
}

// redactedError is an error whose message is scrubbed of secrets.
type redactedError struct {
	err      error
	location string
	secrets  []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	if e.location != "" {
		msg = strings.ReplaceAll(msg, e.location, Redact(e.location))
	}
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, mask)
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
