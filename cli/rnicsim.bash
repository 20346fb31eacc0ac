# bash completion for rnicsim: subcommands, options, an option's choices and the
# paths of --set (from the scenario key tables, with the named scenario file's
# hosts, links and workloads). The candidates come from the rnicsim being
# completed (`rnicsim complete -- WORDS`), so they are always its own; where it
# has none (a file argument), bash completes file names.
# Load it with: source build/share/bash-completion/completions/rnicsim
_rnicsim() {
  local out
  out=$("${COMP_WORDS[0]}" complete -- "${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null) || return 0
  COMPREPLY=()
  [[ -n $out ]] && mapfile -t COMPREPLY <<< "$out"
  # A --set path ends in '=': the value follows without a space.
  [[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
  return 0
}
complete -o default -F _rnicsim rnicsim
