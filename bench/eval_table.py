"""The real-model table of ``docs/two-calls.md`` from ``toolweave eval --json-out`` reports.

``toolweave eval`` writes its JSON report after every case, so a slow model's run
that is stopped still gives the cases it finished; this prints, per report, the
columns of issue 17 item 7 over those cases (with issue 38 item 4's sentences
supported and answers with an invented fact, R9), and the exact tool set per expected
tool (the golden file's categories). "Clarifications" counts the cases that
paused to ask; the bundled golden file has no case that expects a question back.

Usage (from the repository root)::

    python -m bench.eval_table 1.5B=/tmp/eval-15b.json 0.5B=/tmp/eval-05b.json offline=off.json
    python -m bench.eval_table --cases-of 15b.json 1.5B=15b.json offline=off.json
    python -m bench.eval_table 1.5B=15b-front.json+15b-back.json   # one run on two servers

A report given as ``a.json+b.json`` is the union of its parts by case id (one model's
file run from both ends on two servers). ``--cases-of REPORT`` keeps, in every report,
only the cases REPORT finished: the offline model on the very questions a stopped run
measured (the anchor).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADERS = (
    "model|cases|exact tool set|answer facts|sentences supported|invented facts"
    "|wrong finished answers|clarifications"
    "|crashes|errors|model calls/q|chars/q|s/q (median)"
)


def _share(hits: int, count: int) -> str:
    return f"{hits}/{count} ({hits / count:.0%})" if count else "-"


def _citations(cases: Sequence[dict[str, Any]]) -> list[str]:
    """Sentences supported (pooled) and answers with an invented fact (R9).

    ``-`` for reports written before ``toolweave eval`` recorded them.
    """
    if not any("citations" in c for c in cases):
        return ["-", "-"]
    figures = [c["citations"] for c in cases if c.get("citations")]
    supported = sum(int(f["supported"]) for f in figures)
    invented = sum(bool(c.get("invented")) for c in cases)
    return [_share(supported, sum(int(f["sentences"]) for f in figures)), str(invented)]


def row(label: str, cases: Sequence[dict[str, Any]]) -> list[str]:
    """The table's row for one report's finished cases."""
    count = len(cases)
    facts = [c.get("facts_ok", c.get("words_ok")) for c in cases]  # older reports: words_ok
    worded = [fact for fact in facts if fact is not None]
    seconds = [float(c.get("seconds") or 0) for c in cases]
    return [
        label,
        str(count),
        _share(sum(bool(c["exact"]) for c in cases), count),
        _share(sum(bool(fact) for fact in worded), len(worded)),
        *_citations(cases),
        str(sum(bool(c.get("wrong_finished_answer")) for c in cases)),
        str(sum(bool(c.get("paused")) for c in cases)),
        str(sum(bool(c.get("crashed")) for c in cases)),
        str(sum(bool(c.get("error")) for c in cases)),
        f"{statistics.mean(c.get('model_calls') or 0 for c in cases):.2f}" if cases else "-",
        f"{statistics.mean(c.get('model_chars') or 0 for c in cases):,.0f}" if cases else "-",
        f"{statistics.mean(seconds):.0f} ({statistics.median(seconds):.0f})" if cases else "-",
    ]


def categories(label: str, cases: Sequence[dict[str, Any]]) -> list[str]:
    """Exact tool set per expected tool (``none``: retrieval only)."""
    by: dict[str, list[bool]] = defaultdict(list)
    for case in cases:
        expected = case["expected_tools"]
        key = "none" if expected in ("none", []) else "+".join(expected)
        by[key].append(bool(case["exact"]))
    return [label, *(f"{k} {_share(sum(v), len(v))}" for k, v in sorted(by.items()))]


def report_cases(paths: str) -> list[dict[str, Any]]:
    """The finished cases of one or more reports (``a.json+b.json``), each case id once.

    Two runs of one model over the same file from its two ends (two servers) are one
    report; where both reached a case, the first report's counts.
    """
    cases: dict[str, dict[str, Any]] = {}
    for path in paths.split("+"):
        for case in json.loads(Path(path).read_text())["cases"]:
            cases.setdefault(case["id"], case)
    return list(cases.values())


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table for ``label=path`` arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    only: set[str] | None = None
    if args[:1] == ["--cases-of"]:
        only = {c["id"] for c in json.loads(Path(args[1]).read_text())["cases"]}
        args = args[2:]
    reports = [arg.split("=", 1) for arg in args]
    loaded = [
        (label, [c for c in report_cases(paths) if not only or c["id"] in only])
        for label, paths in reports
    ]
    print("| " + " | ".join(HEADERS.split("|")) + " |")
    print("|" + "---|" * len(HEADERS.split("|")))
    for label, cases in loaded:
        print("| " + " | ".join(row(label, cases)) + " |")
    print()
    for label, cases in loaded:
        print(
            "- " + ": ".join([categories(label, cases)[0], ", ".join(categories(label, cases)[1:])])
        )


if __name__ == "__main__":
    main()
