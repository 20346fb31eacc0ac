#!/bin/sh
# A scenario, or a file a scenario names, that is not a regular file (a FIFO, a
# device, a directory) gets exit 2 and a message naming what it is, at once:
# nothing may wait on a FIFO, read /dev/zero forever or take a directory for empty.
# usage: special_files.sh RNICSIM WORKDIR
set -u
rnicsim=$1; dir=$2
rm -rf "$dir"; mkdir -p "$dir/a_directory"
mkfifo "$dir/fifo.yaml" "$dir/flows_fifo.csv"
fail=0
# expect CMD... : exit 2 within 10 s, stderr containing TEXT ($want).
check() {
  out=$(timeout 10 "$@" 2>&1 >/dev/null); rc=$?
  case "$rc:$out" in
    2:*"$want"*) echo "ok   $*: $out" ;;
    *) echo "FAIL $*: exit $rc, expected 2 and '$want': $out"; fail=$((fail + 1)) ;;
  esac
}
for cmd in run validate; do
  want="$dir/fifo.yaml:0:0: is a FIFO, not a regular file" check "$rnicsim" $cmd "$dir/fifo.yaml"
  want="/dev/zero:0:0: is a character device, not a regular file" check "$rnicsim" $cmd /dev/zero
  want="$dir/a_directory:0:0: is a directory, not a regular file" check "$rnicsim" $cmd "$dir/a_directory"
done
# A regular file, but larger than any scenario (sparse: it costs no disk).
truncate -s 17M "$dir/huge.yaml"
want="$dir/huge.yaml:0:0: the file is larger than 16 MiB" check "$rnicsim" validate "$dir/huge.yaml"
want="$dir/fifo.yaml:0:0: is a FIFO" check "$rnicsim" serve "$dir/fifo.yaml" --socket "$dir/daemon.sock" --idle-exit 1

# Files the scenario reads: a flow CSV, an ns-3 flow file, a CDF file.
head='hosts: [{name: h0}, {name: h1}, {name: h2}]
topology: {kind: single_switch}'
printf '%s\nworkloads: [{pattern: flows, flows: flows_fifo.csv}]\n' "$head" > "$dir/csv.yaml"
printf '%s\nworkloads: [{pattern: flows, flows: {file: a_directory, format: ns3}}]\n' "$head" > "$dir/ns3.yaml"
printf '%s\nworkloads: [{pattern: flows, flows: {generate: poisson, load: 0.5, cdf: /dev/zero, count: 10}}]\n' "$head" > "$dir/cdf.yaml"
for cmd in run validate; do
  want="$dir/flows_fifo.csv:0:0: is a FIFO" check "$rnicsim" $cmd "$dir/csv.yaml"
  want="$dir/a_directory:0:0: is a directory" check "$rnicsim" $cmd "$dir/ns3.yaml"
  want="/dev/zero:0:0: is a character device" check "$rnicsim" $cmd "$dir/cdf.yaml"
done
[ $fail -eq 0 ]
