#!/usr/bin/env python3
"""docs/SCENARIOS.md names every key `rnicsim params` lists (the scenario's key
tables, which the loaders check maps against, and the NIC parameter tables) and
every expect: metric.
usage: scenario_docs.py SOURCE_DIR RNICSIM"""
import re
import subprocess
import sys

src, rnicsim = sys.argv[1], sys.argv[2]
params = subprocess.run([rnicsim, 'params'], capture_output=True, text=True, check=True).stdout
keys_part, metrics_part = params.split('# expect: metrics')
# A key row starts with its path (pfc.xoff, links[].down[].from, seed); the key is its last part.
paths = [line.split()[0] for line in keys_part.splitlines() if line.strip() and not line.startswith('#')]
keys = {p.split('.')[-1].removesuffix('[]') for p in paths}
assert len(paths) > 180 and len(keys) > 120, f'rnicsim params lists only {len(paths)} keys: has its layout changed?'
metrics = set(re.findall(r'^(?:WORKLOAD\.)?([a-z_0-9]+)  \(', metrics_part, re.M))
assert len(metrics) > 15, metrics
doc = open(src + '/docs/SCENARIOS.md').read()
missing = sorted(k for k in keys | metrics if not re.search(r'(`%s`|\b%s:)' % (k, k), doc))
if missing:
    sys.exit('docs/SCENARIOS.md does not cover: ' + ', '.join(missing))
print(f'docs/SCENARIOS.md covers all {len(keys)} keys ({len(paths)} paths) and {len(metrics)} expect metrics')
