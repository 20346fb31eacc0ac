"""What the time-series tests share: a scenario run with --out into a fresh
directory, which must complete, and the files they read from it: summary.json,
throughput.csv and delivered.csv, whose intervals must add up, per workload,
to the bytes summary.json reports."""
import csv
import json
import shutil
import subprocess


def run_series(rnicsim, scenario, out):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([rnicsim, 'run', scenario, '--out', out], capture_output=True, text=True)
    assert r.returncode == 0 and 'result: completed' in r.stdout, r.stdout + r.stderr
    summary = json.load(open(out + '/summary.json'))
    rates = list(csv.DictReader(open(out + '/throughput.csv')))
    delivered = list(csv.DictReader(open(out + '/delivered.csv')))
    for w in summary['workloads']:
        added = sum(int(row[w['name']]) for row in delivered)
        assert added == w['bytes'], (w['name'], added, w['bytes'])
    return summary, rates, delivered
