package main

import (
	"github.com/gen2brain/go-fitz"
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/view"
)

// workerCommand, admitCommand, exportChildCommand and viewChildCommand
// are the hidden commands that run the child processes `refbatch run`,
// `refbatch export` and `refbatch desk` start: an OCR engine, admission's
// PDF checks, the export's PDF parsing, and the desk's page images. They
// talk over inherited pipes, not the terminal.
const (
	workerCommand      = "__worker"
	admitCommand       = "__admit"
	exportChildCommand = "__export"
	viewChildCommand   = "__view"
)

func workerMain() int { return ocr.ServeMain() }

func admitMain() int { return admit.ServeMain() }

// exportChildMain serves export's child, which straightens pages with
// MuPDF when asked (export itself links no engine).
func exportChildMain() int {
	export.OpenPages = func(src []byte) (export.PageRenderer, error) {
		doc, err := fitz.NewFromMemory(src)
		if err != nil {
			return nil, err
		}
		return doc, nil
	}
	return export.ServeMain()
}

func viewChildMain() int { return view.ServeMain() }

func workerCmds() []*cli.Command {
	return []*cli.Command{{
		Name:   workerCommand,
		Hidden: true,
		Usage:  "internal: OCR engine child process",
		Action: func(*cli.Context) error {
			return usageErr("the worker mode is started by `refbatch run`, not by hand", "")
		},
	}, {
		Name:   admitCommand,
		Hidden: true,
		Usage:  "internal: admission child process",
		Action: func(*cli.Context) error {
			return usageErr("the admission mode is started by `refbatch run`, not by hand", "")
		},
	}, {
		Name:   exportChildCommand,
		Hidden: true,
		Usage:  "internal: export's PDF child process",
		Action: func(*cli.Context) error {
			return usageErr("the export child mode is started by `refbatch export`, not by hand", "")
		},
	}, {
		Name:   viewChildCommand,
		Hidden: true,
		Usage:  "internal: the desk's page view child process",
		Action: func(*cli.Context) error {
			return usageErr("the page view mode is started by `refbatch desk`, not by hand", "")
		},
	}}
}
