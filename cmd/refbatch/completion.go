package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionScripts are the shell scripts `refbatch completion` prints.
// Both ask refbatch itself what fits where the cursor is, through urfave's
// --generate-bash-completion protocol: the words typed so far (the current
// one only when it starts a flag), then that flag; refbatch answers one
// command or flag per line without running anything. When it has nothing to
// offer (a flag's value, the manifest), the shell completes file names.
// Neither script evaluates what was typed, and neither asks after a "--",
// which would make refbatch run the command instead.
var completionScripts = map[string]string{
	"bash": `# bash completion for refbatch, from refbatch completion bash
_refbatch() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local args=("${COMP_WORDS[@]:1:COMP_CWORD-1}") a
	COMPREPLY=()
	for a in "${args[@]}"; do
		# After --, refbatch would run the command rather than complete it.
		[[ $a == -- ]] && return
	done
	if [[ $cur == -* ]]; then
		args+=("$cur")
	fi
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${args[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _refbatch refbatch
`,
	"zsh": `#compdef refbatch
# zsh completion for refbatch, from refbatch completion zsh
_refbatch() {
	local cur=${words[CURRENT]}
	local -a args opts
	args=("${(@)words[2,CURRENT-1]}")
	if (( ${args[(Ie)--]} )); then
		# After --, refbatch would run the command rather than complete it.
		_files
		return
	fi
	if [[ $cur == -* ]]; then
		args+=("$cur")
	fi
	opts=("${(@f)$(${words[1]} "${args[@]}" --generate-bash-completion 2>/dev/null)}")
	if [[ -n ${opts[1]} ]]; then
		_describe refbatch opts
	else
		_files
	fi
}
if [[ ${funcstack[1]} == _refbatch ]]; then
	_refbatch "$@"
else
	compdef _refbatch refbatch
fi
`,
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: `Prints a script that completes refbatch's commands and flags; file names
where a command takes a file. make install installs both.

  source <(refbatch completion bash)                     # bash, this shell
  refbatch completion bash > ~/.local/share/bash-completion/completions/refbatch
  refbatch completion zsh > ~/.zfunc/_refbatch           # zsh: a folder in $fpath

Exit status: 0 printed; 2 usage error (another shell).`,
		Action: func(c *cli.Context) error {
			const hint = "refbatch completion bash, or refbatch completion zsh"
			script, ok := completionScripts[c.Args().First()]
			switch {
			case c.NArg() == 0:
				return usageErr("completion needs a shell: bash or zsh", hint)
			case c.NArg() > 1 || !ok:
				return usageErr(fmt.Sprintf("completion knows bash and zsh, not %q", strings.Join(c.Args().Slice(), " ")), hint)
			}
			_, err := io.WriteString(c.App.Writer, script)
			return err
		},
	}
}
