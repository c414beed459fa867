package main

import (
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/ocr"
)

// workerCommand is the hidden command that runs an OCR engine child
// process. `refbatch run` starts it; it talks over inherited pipes, not the
// terminal.
const workerCommand = "__worker"

func workerMain() int { return ocr.ServeMain() }

func workerCmd() *cli.Command {
	return &cli.Command{
		Name:   workerCommand,
		Hidden: true,
		Usage:  "internal: OCR engine child process",
		Action: func(*cli.Context) error {
			return usageErr("the worker mode is started by `refbatch run`, not by hand", "")
		},
	}
}
