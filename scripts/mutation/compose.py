#!/usr/bin/env python3
"""The client's mutation score from several cargo-mutants runs (docs/src/mutation-score.md).

usage: compose.py LIST --scenarios DIR... [--carried DIR...] [--seeds FILE...] [--every DIR...]

LIST: `cargo mutants --workspace --list -f 'client/src/**'` (config exclusions applied) at
  the commit being scored.
--scenarios: `mutants.out` directories of runs with the scenario suite as the test command at
  that commit, newest first: each mutant's outcome is taken from the first run that has it.
--carried: `mutants.out` directories of whole runs at an earlier commit. A mutant no run at
  this commit measured takes the outcome of the earlier mutant of the same file, function and
  operation (the name without its line and column: the code only moved), paired in order of
  position, and only where both commits have as many of that kind; the rest are listed as
  unmatched, to be measured.
--seeds: `previously_caught.txt` files (caught by an earlier run, carried by `--iterate`).
--every: `mutants.out` directories of runs of the client's own tests over the scenario
  suite's misses: a miss they catch counts as caught by every test.
Prints both scores; writes the misses left (and any unmatched mutant) to stdout's last lines.
"""
import argparse, collections, json, os, re

POSITION = re.compile(r"^([^:]+):(\d+):(\d+): (.*)$")


def outcomes(directory):
    got = {}
    for o in json.load(open(os.path.join(directory, "outcomes.json"))).get("outcomes", []):
        s = o.get("scenario")
        if isinstance(s, dict) and "Mutant" in s:
            got[s["Mutant"]["name"]] = o["summary"]
    return got


def kind_and_place(name):
    """(file and operation, (line, column)) of a mutant's name."""
    m = POSITION.match(name)
    if not m:
        return name, (0, 0)
    return f"{m.group(1)}: {m.group(4)}", (int(m.group(2)), int(m.group(3)))


def by_kind(names):
    groups = collections.defaultdict(list)
    for name in names:
        kind, place = kind_and_place(name)
        groups[kind].append((place, name))
    return {kind: [n for _, n in sorted(group)] for kind, group in groups.items()}


parser = argparse.ArgumentParser()
parser.add_argument("list")
parser.add_argument("--scenarios", nargs="*", default=[])
parser.add_argument("--carried", nargs="*", default=[])
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

carried = {}
for d in args.carried:
    for name, summary in outcomes(d).items():
        carried.setdefault(name, summary)
unmatched = []
if carried:
    old = by_kind(carried)
    # Pair whole kinds (a kind with as many mutants at both commits: the code only moved), so
    # that measuring one mutant of a kind at this commit does not unpair the rest of it.
    for kind, names in by_kind(listed).items():
        before = old.get(kind, [])
        if len(before) == len(names):
            for now, then in zip(names, before):
                final.setdefault(now, carried[then])
        unmatched.extend(n for n in names if n not in final)

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
if unmatched:
    print(f"unmatched, to be measured ({len(unmatched)}):")
    for n in sorted(unmatched):
        print("  " + n)
print(f"missed ({len(misses)}):")
for n in misses:
    print("  " + n)
