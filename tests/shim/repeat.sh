#!/bin/bash
# Runs run_pair.sh COUNT times in a row with the same arguments and passes only
# if every run passed: for races that a single run seldom shows.
# usage: repeat.sh COUNT RUN_PAIR_ARGS...   (as run_pair.sh takes them)
set -u
count=$1
shift
passed=0
for i in $(seq "$count"); do
  if "$(dirname "$0")/run_pair.sh" "$@" > /dev/null; then
    passed=$((passed + 1))
  else
    echo "run $i of $count failed:"
    tail -n 5 "$2"/*.log
  fi
done
echo "$passed passed, $((count - passed)) failed"
[ "$passed" -eq "$count" ]
