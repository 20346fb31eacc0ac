#!/bin/sh
# usage: run_fuzzer.sh ARTIFACT_PREFIX FUZZER ARGS...
# Runs a libFuzzer binary; if it fails, prints each input it saved (base64), so
# that a failure on a machine whose build tree is gone can be replayed.
prefix=$1; shift
rm -f "$prefix"crash-* "$prefix"leak-* "$prefix"timeout-* "$prefix"oom-*
"$@" -artifact_prefix="$prefix"
rc=$?
if [ "$rc" -ne 0 ]; then
  for f in "$prefix"crash-* "$prefix"leak-* "$prefix"timeout-* "$prefix"oom-*; do
    [ -f "$f" ] || continue
    echo "== the failing input, $(wc -c < "$f") bytes, base64 (base64 -d > input; FUZZER input):"
    base64 "$f"
  done
fi
exit "$rc"
