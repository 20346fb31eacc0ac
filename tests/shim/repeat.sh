#!/bin/bash
# Runs run_pair.sh COUNT times in a row with the same arguments and passes only
# if every run passed: for races that a single run seldom shows.
# usage: repeat.sh COUNT RUN_PAIR_ARGS...   (as run_pair.sh takes them)
set -u
count=$1
shift
passed=0
for i in $(seq "$count"); do
  if "$(dirname "$0")/run_pair.sh" "$@" > "$2.run.txt" 2>&1; then
    passed=$((passed + 1))
  else
    # The whole run is kept beside its directory, which the next run reuses.
    rm -rf "$2.failed-$i"
    cp -r "$2" "$2.failed-$i"
    cp "$2.run.txt" "$2.failed-$i/run_pair.txt"
    echo "run $i of $count failed (kept in $2.failed-$i):"
    tail -n 40 "$2.run.txt"
  fi
done
echo "$passed passed, $((count - passed)) failed"
[ "$passed" -eq "$count" ]
