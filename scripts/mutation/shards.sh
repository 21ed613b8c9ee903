#!/bin/bash
# Tests the mutants named in NAMES (one per line, as `cargo mutants --list` prints them) at
# REV, split round-robin over the worktrees WT... (each a `git worktree` with its own target
# directory), one `cargo mutants --in-place` each, outcomes in OUT/<n>/mutants.out.
# usage: shards.sh REV NAMES OUT WT... -- CARGO-MUTANTS-ARGS...
# The scenario suite alone:  -- --test-workspace=true -C --test=scenarios -- -- --test-threads 16
#   (with SCENARIOS_FAIL_FAST=1 INSTA_UPDATE=no in the environment: a caught mutant stops at
#   its first failing scenario, and no snapshot is written)
# The client's own tests:    -- --test-workspace=false --test-package mcp-refclient
set -euo pipefail
rev=$1 names=$2 out=$3; shift 3
worktrees=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do worktrees+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
n=${#worktrees[@]}
[ "$n" -gt 0 ] || { echo "shards.sh: no worktree named" >&2; exit 2; }
for i in "${!worktrees[@]}"; do
  (
    filters=()
    while IFS= read -r name; do
      filters+=(-F "^$(printf '%s' "$name" | sed 's/[][\.*^$(){}+?|\\]/\\&/g')\$")
    done < <(grep -v '^$' "$names" | awk -v n="$n" -v i="$i" '(NR - 1) % n == i')
    [ ${#filters[@]} -gt 0 ] || exit 0
    cd "${worktrees[$i]}" && git checkout -q --detach "$rev"
    mkdir -p "$out/$i"
    nice -n 5 cargo mutants --in-place --workspace --baseline=skip -f 'client/src/**' \
      --output "$out/$i" "${filters[@]}" "$@" > "$out/$i.log" 2>&1 < /dev/null
  ) &
done
wait
