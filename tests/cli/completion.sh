#!/bin/bash
# The bash completion file, driven as bash drives it: COMP_WORDS and COMP_CWORD
# set, the function called, COMPREPLY checked.
set -u
rnicsim=$1 completion=$2 scenario=$3
source "$completion" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# complete WORD...: runs the completion with the last word as the one under the cursor.
complete_words() {
  COMP_WORDS=("$rnicsim" "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _rnicsim
}
has() { local c; for c in "${COMPREPLY[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }

complete_words run --set nic.
[ ${#COMPREPLY[@]} -gt 20 ] || fail "run --set nic.: ${COMPREPLY[*]}"
has nic.mtu= && has nic.pcie.lanes= && has nic.congestion_control.algorithm= || fail "nic.: ${COMPREPLY[*]}"
for c in "${COMPREPLY[@]}"; do [[ $c == nic.*= ]] || fail "run --set nic. offers $c"; done

# The scenario file's own elements: its workloads by name, its links by index.
complete_words run "$scenario" --set workloads.write
has workloads.write_stream.size= || fail "workloads.write: ${COMPREPLY[*]}"
complete_words validate --set nic.mtu = 9000 "$scenario" --set links.0.lo  # bash splits at '=' 
[ "${COMPREPLY[*]}" = "links.0.loss=" ] || fail "links.0.lo: ${COMPREPLY[*]}"

complete_words ru
[ "${COMPREPLY[*]}" = "run" ] || fail "ru: ${COMPREPLY[*]}"
complete_words ''
has serve && has exec && has --version || fail "subcommands: ${COMPREPLY[*]}"
has complete && fail "the hidden complete subcommand is offered"
complete_words serve --idle
[ "${COMPREPLY[*]}" = "--idle-exit" ] || fail "serve --idle: ${COMPREPLY[*]}"
complete_words serve --payload-mover ''
[ "${COMPREPLY[*]}" = "off on" ] || fail "--payload-mover: ${COMPREPLY[*]}"
complete_words run "$scenario" --log-level d
[ "${COMPREPLY[*]}" = "debug" ] || fail "--log-level d: ${COMPREPLY[*]}"
# File arguments and exec's program are bash's to complete (nothing offered).
complete_words run --timeline-
[ "${COMPREPLY[*]}" = "--timeline-qps --timeline-window" ] || fail "run --timeline-: ${COMPREPLY[*]}"
complete_words serve --timel
has --timeline && has --timeline-qps && has --timeline-window || fail "serve --timel: ${COMPREPLY[*]}"
complete_words run --timeline ''
[ ${#COMPREPLY[@]} -eq 0 ] || fail "--timeline: ${COMPREPLY[*]}"
complete_words run --pcap ''
[ ${#COMPREPLY[@]} -eq 0 ] || fail "--pcap: ${COMPREPLY[*]}"
complete_words exec -- ibv_rc_pingpong --
[ ${#COMPREPLY[@]} -eq 0 ] || fail "exec's program: ${COMPREPLY[*]}"
echo "completion ok"
