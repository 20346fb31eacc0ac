#!/usr/bin/env python3
"""docs/SCENARIOS.md names every key the scenario loaders accept (the allowed-key
lists of scenario/*.cpp and the NIC parameter tables) and every expect: metric
that `rnicsim params` lists.
usage: scenario_docs.py SOURCE_DIR RNICSIM"""
import glob
import re
import subprocess
import sys

src, rnicsim = sys.argv[1], sys.argv[2]
keys = set()
for f in glob.glob(src + '/scenario/*.cpp'):
    s = open(f).read()
    for m in re.finditer(r'expect_map\([^{]*\{([^}]*)\}', s):
        keys |= set(re.findall(r'"([a-z_0-9]+)"', m.group(1)))
    for m in re.finditer(r'k(?:SingleSwitch|LeafSpine|FatTree|Perftest|Flows)Keys\[\] = \{([^}]*)\}', s):
        keys |= set(re.findall(r'"([a-z_0-9]+)"', m.group(1)))
    keys |= set(re.findall(r'^\s*\{"([a-z_0-9]+)", Kind::', s, re.M))
    keys |= set(re.findall(r'^\s*\{"([a-z_0-9]+)", "[a-z_]*", "[a-z_]*"\}', s, re.M))
assert len(keys) > 100, f'found only {len(keys)} keys in the loaders: has their layout changed?'
params = subprocess.run([rnicsim, 'params'], capture_output=True, text=True, check=True).stdout
metrics = set(re.findall(r'^(?:WORKLOAD\.)?([a-z_0-9]+)  \(', params.split('# expect: metrics')[1], re.M))
assert len(metrics) > 15, metrics
doc = open(src + '/docs/SCENARIOS.md').read()
missing = sorted(k for k in keys | metrics if not re.search(r'(`%s`|\b%s:)' % (k, k), doc))
if missing:
    sys.exit('docs/SCENARIOS.md does not cover: ' + ', '.join(missing))
print(f'docs/SCENARIOS.md covers all {len(keys)} keys and {len(metrics)} expect metrics')
