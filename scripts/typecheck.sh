#!/usr/bin/env bash
# mypy --strict over the package as it installs (scripts/package-tree.sh lays it out), then
# the expected failures: each module in typing_checks/ uses an effect's result as the wrong
# type, and this step fails unless mypy rejects exactly the lines marked
# "# must not type-check" (issue 16 item 1: effect results are typed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/package-tree.sh build/typecheck
cd build/typecheck
"$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" -p toolweave -p toolweave_korhaz -p toolweave_pomoc "$@"

for check in "$root"/typing_checks/*.py; do
  name=${check#"$root"/}
  if output=$("$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" "$check" 2>&1); then
    echo "$name: mypy accepted it, but it uses effect results as the wrong type" >&2
    exit 1
  fi
  expected=$(grep -n "# must not type-check$" "$check" | cut -d: -f1 | sort -u)
  rejected=$(grep -o "$(basename "$check"):[0-9]*: error:" <<<"$output" | cut -d: -f2 | sort -u)
  if [[ -z $expected || $expected != "$rejected" ]]; then
    echo "$name: mypy must reject exactly the lines marked \"# must not type-check\"" >&2
    echo "  marked: $(echo $expected)   rejected: $(echo $rejected)" >&2
    echo "$output" >&2
    exit 1
  fi
  echo "$name: rejected as expected (lines $(echo $expected))"
done
