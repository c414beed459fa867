package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/ocr/page"
)

// pageFlags are the page policy's flags, bound to p: run and eval offer
// them for the batch, `review retry` for one document's next reading.
// Each flag's name is its setting's (page.Policy's JSON name) with dashes,
// but --no-cascade, which sets cascade off: it is the default since the
// cascade read 11 pt letters twice, and is still accepted.
func pageFlags(p *page.Policy) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "dpi", Usage: "render resolution", Value: page.DefaultDPI, Destination: &p.DPI},
		&cli.Int64Flag{Name: "max-page-pixels", Usage: fmt.Sprintf("largest page in pixels; bigger pages render at a lower DPI down to %d (or --dpi if lower), else page_too_large; so is any image bigger than this, inline or by its codec's own header", page.DefaultMinDPI), Value: page.DefaultMaxPagePixels, Destination: &p.MaxPagePixels},
		&cli.StringFlag{Name: "lang", Usage: "Tesseract language(s), e.g. eng or eng+deu `LANG`", Value: page.DefaultLang, Destination: &p.Lang},
		&cli.BoolFlag{Name: "force-ocr", Usage: "recognise every page, even one with a text layer that matches the page", Destination: &p.ForceOCR},
		&cli.BoolFlag{Name: "no-orientation", Usage: "do not detect pages turned 90/180/270 degrees", Destination: &p.NoOrientation},
		&cli.BoolFlag{Name: "no-deskew", Usage: "do not straighten skewed pages", Destination: &p.NoDeskew},
		&cli.BoolFlag{Name: "no-despeckle", Usage: "do not paint over specks (marks a few pixels across) before recognition", Destination: &p.NoDespeckle},
		&cli.BoolFlag{Name: "no-coverage", Usage: "do not look for print the reading left out (faint or small print, columns), nor read it again", Destination: &p.NoCoverage},
		&cli.BoolFlag{Name: "no-recovery", Usage: "measure the print the reading left out, but do not read it again (to measure what recovery adds)", Destination: &p.NoRecovery},
		&cli.IntFlag{Name: "cover-confidence", Usage: "least confidence (1-100) of a word for the ink under it to count as read, and of a word recovery adds (calibrated on testdata/eval: eval's suggested line)", Value: page.DefaultCoverConfidence, Destination: &p.CoverConfidence},
		&cli.IntFlag{Name: "first-dpi", Usage: "with --cascade, the resolution of a page's first reading", Value: page.DefaultFirstDPI, Destination: &p.FirstDPI,
			Action: func(c *cli.Context, _ int) error {
				if !c.Bool("cascade") {
					return usageErr("--first-dpi is the resolution of the cascade's first reading, and the cascade is off", "add --cascade, or leave out --first-dpi")
				}
				return nil
			}},
		&cli.BoolFlag{Name: "cascade", Usage: "read each page first at --first-dpi and again at --dpi only when that reading asks (low confidence, small or unread print): faster on large print, slower on 11 pt letters", Destination: &p.Cascade},
		&cli.BoolFlag{Name: "no-cascade", Usage: "read every page once, at --dpi (the default)",
			Action: func(c *cli.Context, off bool) error {
				if off && c.Bool("cascade") {
					return usageErr("--cascade and --no-cascade both given", "choose one: --no-cascade is the default")
				}
				p.Cascade = p.Cascade && !off
				return nil
			}},
	}
}
