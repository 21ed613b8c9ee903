#!/usr/bin/env python3
# For every caught mutant in the scenario runs: the scenarios that failed (not "not run").
# usage: caught_by.py DIR... > caught_by.json   (DIR: mutants.out directories)
import json, os, re, sys
got = {}
for d in sys.argv[1:]:
    try:
        outs = json.load(open(os.path.join(d, 'outcomes.json')))['outcomes']
    except Exception:
        continue
    for o in outs:
        s = o.get('scenario')
        if not isinstance(s, dict) or 'Mutant' not in s or o['summary'] not in ('CaughtMutant',):
            continue
        name = s['Mutant']['name']
        if name in got:
            continue
        try:
            txt = open(os.path.join(d, o['log_path']), errors='replace').read()
        except Exception:
            continue
        fails = sorted({f for f, body in re.findall(r'^---- (\S+) ----\n(.*?)\n', txt, re.M)
                        if 'not run: an earlier scenario failed' not in body})
        got[name] = fails
json.dump(got, sys.stdout, indent=0)
