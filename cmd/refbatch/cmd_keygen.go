package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"filippo.io/age"
	"github.com/urfave/cli/v2"
)

// keygenOptions are the flags of `refbatch keygen`.
type keygenOptions struct {
	out    string
	stdout bool
}

func keygenCommand() *cli.Command {
	var o keygenOptions
	return &cli.Command{
		Name:  "keygen",
		Usage: "create an age identity for artifact encryption and print its recipient",
		Description: `Writes a new age X25519 identity to --out (mode 0600, never overwritten) and
prints its public key (the recipient) on stdout. Keep the identity file away
from the batch: it is what decrypts the artifacts.

--stdout prints the identity itself on stdout instead, and the recipient on
stderr: the one deliberate way to send it elsewhere (a secrets manager, a
pipe). --out - is refused rather than read as stdout.

Exit status: 0 written; 1 unexpected failure; 2 usage error (no --out, or
the file exists); 3 interrupted, or the disk is full.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "identity file to create `FILE`", Destination: &o.out},
			&cli.BoolFlag{Name: "stdout", Usage: "print the identity on stdout (and the recipient on stderr) instead of writing a file", Destination: &o.stdout},
		},
		Action: func(c *cli.Context) error {
			const usage = "refbatch keygen --out FILE (or --stdout to print the identity)"
			switch {
			case c.NArg() != 0:
				return usageErr("keygen takes no arguments", usage)
			case o.out == "-":
				return usageErr("--out - would name the identity file -", "to print the identity on stdout, pass --stdout instead of --out")
			case o.out != "" && o.stdout:
				return usageErr("--out and --stdout both given", "choose one: a file, or stdout")
			case o.out == "" && !o.stdout:
				return usageErr("keygen needs --out FILE, the identity file to create", usage)
			}
			return runKeygen(o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runKeygen(o keygenOptions, stdout, stderr io.Writer) error {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return err
	}
	content := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n", time.Now().UTC().Format(time.RFC3339), id.Recipient(), id)
	if o.stdout {
		if _, err := io.WriteString(stdout, content); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "refbatch: recipient: %s\n", id.Recipient())
		return nil
	}
	f, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return usageErr(fmt.Sprintf("%s already exists", o.out), "keygen never overwrites an identity; choose another --out")
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(o.out)
		return err
	}
	fmt.Fprintln(stdout, id.Recipient())
	return nil
}
