package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Target is a receiver of events.
type Target interface {
	// Key names the target in the journal, in status, the report and the
	// logs: stable for the same URL or command, and holding no secret a
	// URL's path or query may carry and no command line.
	Key() string
	// Deliver sends one event's body, signed at now; nil means the
	// receiver took it. ctx bounds the attempt.
	Deliver(ctx context.Context, eventID string, body []byte, now time.Time) error
}

// digest is a short stable name for s that does not reveal it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Webhook posts events to an HTTP(S) URL, signed with Secret.
type Webhook struct {
	URL    *url.URL
	Secret []byte
	Client *http.Client // nil: a client that follows no redirect
}

// NewWebhook parses raw as an http or https URL with a host.
func NewWebhook(raw string, secret []byte) (*Webhook, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL with a host", raw)
	}
	return &Webhook{URL: u, Secret: secret}, nil
}

// Key is the URL's scheme and host, and a digest of the whole URL.
func (w *Webhook) Key() string {
	return w.URL.Scheme + "://" + w.URL.Host + "#" + digest(w.URL.String())
}

// Deliver posts body with the headers Refbatch-Signature and
// Refbatch-Event-Id. A 2xx answer is delivery; anything else, a redirect
// included, is an error naming the status.
func (w *Webhook) Deliver(ctx context.Context, eventID string, body []byte, now time.Time) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "refbatch")
	req.Header.Set(Header, Sign(w.Secret, now, body))
	req.Header.Set("Refbatch-Event-Id", eventID)
	client := w.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := client.Do(req)
	if err != nil {
		// url.Error repeats the whole URL, whose path or query may be a
		// secret: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("no answer within the timeout")
		}
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// Command runs a shell command per event, with the event's JSON on its
// standard input, for a site without an HTTP receiver (to send a mail,
// say). Its environment adds REFBATCH_EVENT_ID and, with a Secret,
// REFBATCH_SIGNATURE (the header's value). Exit status 0 is delivery.
type Command struct {
	Line   string
	Secret []byte
}

// Key is "cmd" and a digest of the command line.
func (c *Command) Key() string { return "cmd#" + digest(c.Line) }

// Deliver runs the command under sh -c; when ctx ends first, its whole
// process group is killed. Its output is discarded: it is the site's own
// command, and what it prints is not refbatch's to log.
func (c *Command) Deliver(ctx context.Context, eventID string, body []byte, now time.Time) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Line)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(os.Environ(), "REFBATCH_EVENT_ID="+eventID)
	if len(c.Secret) > 0 {
		cmd.Env = append(cmd.Env, "REFBATCH_SIGNATURE="+Sign(c.Secret, now, body))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return errors.New("the command did not end within the timeout")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("the command %s", ee.ProcessState)
	}
	return err
}
