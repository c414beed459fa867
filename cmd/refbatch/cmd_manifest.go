package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/manifest"
)

// manifestCommand is `refbatch manifest DIR`: a manifest scaffold for a
// folder of PDFs, on stdout.
func manifestCommand() *cli.Command {
	return &cli.Command{
		Name:      "manifest",
		Usage:     "print a manifest scaffold for a folder of PDFs, to fill and run",
		ArgsUsage: "DIR",
		Description: `Prints on stdout a manifest with one row per file named *.pdf (any case)
beneath DIR, in path order: source_id the file name without its extension,
path relative to DIR, sha256 the file's SHA-256; participant_id,
referral_date and consent are left empty for you to fill. Save it in DIR
(the manifest's paths are relative to its own folder), or run it with
--root DIR:

  refbatch manifest scans/ > scans/manifest.csv

Two files that would take the same source_id (names that differ only in
case or extension, or the same name in two subfolders) are refused, naming
both, and nothing is printed. It reads the files and writes nothing.

Exit status: 0 printed; 1 unexpected failure (a file that cannot be read);
2 usage error (no folder, or colliding names); 3 interrupted.`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("manifest takes exactly one argument, the folder of PDFs", "refbatch manifest DIR > manifest.csv")
			}
			dir := c.Args().First()
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usageErr(fmt.Sprintf("%s is not a folder", dir), "refbatch manifest DIR > manifest.csv")
			}
			var buf bytes.Buffer
			n, err := manifest.Scaffold(dir, &buf)
			var ce *manifest.CollisionError
			if errors.As(err, &ce) {
				return usageErr(ce.Error(), "rename one of the files: a source_id names one document")
			}
			if err != nil {
				return err
			}
			if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "refbatch: %d row%s; fill participant_id, referral_date and consent; the paths are relative to %s\n", n, plural(n), dir)
			return nil
		},
	}
}
