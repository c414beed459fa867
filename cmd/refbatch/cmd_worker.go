package main

import (
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/ocr"
)

// workerCommand and admitCommand are the hidden commands that run the
// child processes `refbatch run` starts: an OCR engine, and admission's
// PDF checks. They talk over inherited pipes, not the terminal.
const (
	workerCommand = "__worker"
	admitCommand  = "__admit"
)

func workerMain() int { return ocr.ServeMain() }

func admitMain() int { return admit.ServeMain() }

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
	}}
}
