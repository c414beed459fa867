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

func keygenCommand() *cli.Command {
	var out string
	return &cli.Command{
		Name:  "keygen",
		Usage: "create an age identity for artifact encryption and print its recipient",
		Description: `Writes a new age X25519 identity to --out (mode 0600, never overwritten) and
prints its public key (the recipient) on stdout. Keep the identity file away
from the batch: it is what decrypts the artifacts.

Exit status: 0 written; 1 unexpected failure; 2 usage error (e.g. the file exists).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "identity file to create `FILE`", Required: true, Destination: &out},
		},
		Action: func(c *cli.Context) error { return runKeygen(out, c.App.Writer) },
	}
}

func runKeygen(path string, stdout io.Writer) error {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return usageErr(fmt.Sprintf("%s already exists", path), "keygen never overwrites an identity; choose another --out")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "# created: %s\n# public key: %s\n%s\n", time.Now().UTC().Format(time.RFC3339), id.Recipient(), id)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	fmt.Fprintln(stdout, id.Recipient())
	return nil
}
