#!/bin/bash
# Behaviour fingerprint of the model: runs every scenario of the project and
# hashes what it writes (capture, summary and stats, CSVs, the printed report
# without its wall-clock line, the exit code). A change meant to restructure
# only must leave every hash as recorded in CHECKSUMS. The calibration sweeps
# and the scale scenarios write captures of tens of GB: their outputs are
# hashed, their captures not.
# usage: behaviour.sh RNICSIM SOURCE_DIR CHECKSUMS WORKDIR [--record] [-- RUN_ARGS...]
# (the test behaviour_unchanged runs it; --record writes CHECKSUMS anew).
# RUN_ARGS go to every run: with --partitions and --threads, every output must
# be what one partition wrote (the test behaviour_in_partitions). The
# environment's BEHAVIOUR_ONLY (an extended regex) picks scenarios by path.
set -u
rnicsim=$1; src=$2; sums=$3; dir=$4; shift 4
mode=check
if [ "${1:-}" = --record ]; then mode=--record; shift; fi
[ "${1:-}" = -- ] && shift
run_args=("$@")
rm -rf "$dir"; mkdir -p "$dir"
scenarios() {
  (cd "$src" && find scenarios tests/e2e/scenarios -name '*.yaml' -not -path '*/presets/*' | LC_ALL=C sort) |
    grep -E "${BEHAVIOUR_ONLY:-.}"
}
fingerprint() {  # scenario -> "scenario file sha" lines
  local s=$1 w="$dir/run" rc
  local capture=(--pcap "$w/capture.pcap")
  case $s in scenarios/calibration/* | scenarios/scale/*) capture=() ;; esac
  rm -rf "$w"; mkdir -p "$w/out"
  (cd "$src/$(dirname "$s")" && "$rnicsim" run "$(basename "$s")" --seed 7 "${capture[@]}" \
      --out "$w/out" --progress never "${run_args[@]}" > "$w/report.txt" 2> "$w/errors.txt")
  rc=$?
  echo "$s exit $rc"
  grep -v '^simulated' "$w/report.txt" > "$w/report.sum"
  rm "$w/report.txt" "$w/errors.txt"
  (cd "$w" && find . -type f | LC_ALL=C sort | while read -r f; do
     echo "$s ${f#./} $(sha256sum < "$f" | cut -c1-16)"; done)
}
scenarios | while read -r s; do fingerprint "$s"; done > "$dir/now.txt"
if [ "$mode" = --record ]; then
  cp "$dir/now.txt" "$sums"; echo "recorded $(wc -l < "$sums") fingerprints"; exit 0
fi
awk -v only="${BEHAVIOUR_ONLY:-.}" '$1 ~ only' "$sums" > "$dir/recorded.txt"
if diff "$dir/recorded.txt" "$dir/now.txt" > "$dir/diff.txt"; then
  echo "behaviour unchanged: $(grep -c ' exit ' "$dir/recorded.txt") scenarios, $(wc -l < "$dir/recorded.txt") fingerprints"
else
  echo "FAIL: behaviour changed (< recorded, > now):"; cat "$dir/diff.txt"; exit 1
fi
