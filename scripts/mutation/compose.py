#!/usr/bin/env python3
"""The client's mutation score from several cargo-mutants runs (docs/src/mutation-score.md).

usage: compose.py LIST --scenarios DIR... [--seeds FILE...] [--every DIR...]

LIST: `cargo mutants --workspace --list -f 'client/src/**'` (config exclusions applied).
--scenarios: `mutants.out` directories of runs with the scenario suite as the test command,
  newest first: each mutant's outcome is taken from the first run that has it.
--seeds: `previously_caught.txt` files (caught by an earlier run, carried by `--iterate`).
--every: `mutants.out` directories of runs of the client's own tests over the scenario
  suite's misses: a miss they catch counts as caught by every test.
Prints both scores; writes the misses left to stdout's last lines.
"""
import argparse, collections, json, os

def outcomes(directory):
    got = {}
    for o in json.load(open(os.path.join(directory, "outcomes.json"))).get("outcomes", []):
        s = o.get("scenario")
        if isinstance(s, dict) and "Mutant" in s:
            got[s["Mutant"]["name"]] = o["summary"]
    return got

parser = argparse.ArgumentParser()
parser.add_argument("list")
parser.add_argument("--scenarios", nargs="+", default=[])
parser.add_argument("--seeds", nargs="*", default=[])
parser.add_argument("--every", nargs="*", default=[])
args = parser.parse_args()
listed = [l.strip() for l in open(args.list) if l.strip()]
tables = [outcomes(d) for d in args.scenarios]
seeds = {l.strip() for f in args.seeds for l in open(f) if l.strip()}
final = {}
for name in listed:
    found = next((t[name] for t in tables if name in t), None)
    if found is None and name in seeds:
        found = "CaughtMutant"
    if found is not None:
        final[name] = found
counts = collections.Counter(final.values())
caught = counts["CaughtMutant"] + counts["Timeout"]
viable = caught + counts["MissedMutant"]
print(f"listed {len(listed)}, measured {len(final)}: {dict(counts)}")
print(f"scenario suite alone: {caught} / {viable} = {100 * caught / max(1, viable):.1f} %")
misses = [n for n in listed if final.get(n) == "MissedMutant"]
if args.every:
    every = {}
    for d in args.every:
        every.update(outcomes(d))
    misses = [n for n in misses if every.get(n) not in ("CaughtMutant", "Timeout")]
    print(f"every test: {viable - len(misses)} / {viable} = {100 * (viable - len(misses)) / max(1, viable):.1f} %")
print(f"missed ({len(misses)}):")
for n in misses:
    print("  " + n)
