#!/bin/sh
# scenario/ reads top-down: a file includes headers of scenario/ of a lower
# layer, or of its own layer listed before it, so no include runs back up and
# no two files include each other. The layers, lowest first:
#   words    the language's vocabulary (errors, units, files, key tables)
#   spec     what a scenario is and what a run of it measured; no YAML, no run
#   loaders  YAML into the spec: the reader, one loader per section, sweeps
#   world    the simulated world and its host software (the workloads)
#   run      running a scenario and writing what it measured
# A new file of scenario/ goes into a layer here.
# usage: scenario_layers.sh SOURCE_DIR
set -u
cd "$1" || exit 2
layers='
words: error units text_file keys
spec: workload_ops workload_counts spec summary
loaders: yaml_reader fault_keys nic_keys fabric_keys flow_sources workload_keys expect scenario params
world: partition_map world timeline host_cores workload perftest flows workloads timeseries progress
run: unit_reports outputs runner sweep
'
# Prints one line per file not in a layer and per include that runs back up.
check() {
  awk -v layers="$layers" '
    BEGIN {
      n = split(layers, lines, "\n")
      for (i = 1; i <= n; i++) {
        m = split(lines[i], w, " ")
        if (m < 2) continue
        name = w[1]; sub(/:$/, "", name)
        for (j = 2; j <= m; j++) { pos[w[j]] = ++k; layer[w[j]] = name }
      }
    }
    FNR == 1 {
      f = FILENAME; s = f; sub(/.*\//, "", s); sub(/\.[ch]pp$/, "", s)
      if (!(s in pos)) print f ": in no layer of tests/scenario_layers.sh"
    }
    /^[ \t]*#[ \t]*include[ \t]*"scenario\// {
      h = $0; sub(/^[^"]*"scenario\//, "", h); sub(/".*/, "", h)
      t = h; sub(/\.[ch]pp$/, "", t)
      if (!(t in pos)) print f ":" FNR ": includes scenario/" h ", in no layer"
      else if ((s in pos) && pos[t] > pos[s])
        print f ":" FNR ": includes scenario/" h " (" layer[t] "), which comes after " s " (" layer[s] ")"
    }' "$@"
}
found=$(check scenario/*.hpp scenario/*.cpp)
if [ -n "$found" ]; then
  echo "FAIL: an include runs back up in scenario/ (or a file is in no layer):"
  echo "$found"
  exit 1
fi
# The check itself finds what it looks for: a spec header including the
# runner, a loader including a later loader, and a file in no layer.
probe=$(mktemp -d) || exit 2
trap 'rm -rf "$probe"' EXIT
mkdir "$probe/scenario"
printf '#pragma once\n#include "scenario/runner.hpp"\n' > "$probe/scenario/spec.hpp"
printf '#include "scenario/fault_keys.hpp"\n  #  include "scenario/scenario.hpp"\n' > "$probe/scenario/fault_keys.cpp"
printf '#include "scenario/spec.hpp"\n' > "$probe/scenario/stray.cpp"
n=$(check "$probe"/scenario/*.hpp "$probe"/scenario/*.cpp | wc -l)
[ "$n" -eq 3 ] || { echo "FAIL: the check misses an include that runs back up"; exit 1; }
echo "PASS: every include of scenario/ runs down its layers"
