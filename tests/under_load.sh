#!/bin/bash
# The emulation tests (shim_*, rdmacm_*: real programs through the daemon)
# again and again, under the load CI puts on the machine: ctest runs them as
# many at a time as there are CPUs, as CI's run does. Stops at the first
# failure, with its output. Run it after a change to the daemon or the shims,
# so that a test that fails only under load is found before CI finds it.
# usage: tests/under_load.sh [--rounds N] [--spinners S] [--regex R] [BUILD_DIR]
#   --rounds N: rounds (default 20);
#   --spinners S: S busy loops beside them besides (default 0), a harsher load;
#   --regex R: the tests to run (default ^(shim|rdmacm)_; the slow ones are left out).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=20 spinners=0 regex='^(shim|rdmacm)_'
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --spinners) spinners=$2; shift 2 ;;
    --regex) regex=$2; shift 2 ;;
    *) break ;;
  esac
done
build=${1:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
exec "$root/tests/beside_spinners.sh" "$spinners" \
  ctest --test-dir "$build" -R "$regex" -LE slow -j "$jobs" --repeat "until-fail:$rounds" --output-on-failure
