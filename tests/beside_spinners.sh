#!/bin/bash
# Runs a command beside N busy loops (programs that spin on every CPU and
# never call the shim), which stop when it ends; exits with its status.
# usage: beside_spinners.sh N COMMAND [ARGS...]
set -u
n=$1
shift
spinners=()
for _ in $(seq "$n"); do
  (while :; do :; done) &
  spinners+=($!)
done
trap 'kill "${spinners[@]}" 2>/dev/null' EXIT
"$@"
