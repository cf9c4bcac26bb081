"""G1, probed: the offline model on questions written fresh from the documents.

``bench/data/probe_offline.jsonl`` holds questions written on 7 December 2026 from the
example domains' documents (not from their golden files), the way people ask: other
words than the page uses, a situation instead of the thing's name, typos, no accents,
questions the documents do not answer. It is a development set: changes may be made
for it. A case's id says its domain (``k``: korhaz, ``p``: pomoc).

Usage (from the repository root)::

    python -m bench.probe_offline            # the tally and every case's answer
    python -m bench.probe_offline --misses   # the missed cases only
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolweave.domains import load_domain
from toolweave.evaluation import CaseResult, evaluate, load_golden
from toolweave.graph.context import Limits
from toolweave.llm.offline import OfflineAssistant

PROBE_FILE = Path(__file__).with_name("data") / "probe_offline.jsonl"
DOMAINS = {"k": "korhaz", "p": "pomoc"}
"""A case id's first letter -> its domain."""


def run(domain: str, prefix: str) -> list[CaseResult]:
    """Every probe case of one domain through its graph with the offline model."""
    cases = [case for case in load_golden(PROBE_FILE) if case.id.startswith(prefix)]
    dom, tools = load_domain(domain)
    report = evaluate(
        dom, tools, cases, assistant=OfflineAssistant(), limits=Limits(run_deadline_s=3600.0)
    )
    return report.results


def _line(result: CaseResult) -> str:
    case, mark = result.case, "ok " if result.facts_ok else "MISS"
    answer = " ".join(result.answer.split())[:300]
    wanted = "none" if case.expects_no_information else " | ".join(case.expected_facts)
    routed = ",".join(sorted(result.routed)) or "-"
    return (
        f"{mark} {case.id} [{case.category}] {case.question}\n"
        f"    want: {wanted}; routed: {routed}\n    got: {answer}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print each domain's tally (facts found, unanswerable handled) and its cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the missed cases only")
    args = parser.parse_args(argv)
    for prefix, domain in DOMAINS.items():
        results = run(domain, prefix)
        answerable = [r for r in results if not r.case.expects_no_information]
        unanswerable = [r for r in results if r.case.expects_no_information]
        found = sum(bool(r.facts_ok) for r in answerable)
        handled = sum(bool(r.facts_ok) for r in unanswerable)
        tally = f"facts {found}/{len(answerable)}, unanswerable {handled}/{len(unanswerable)}"
        print(f"## {domain}: {tally}")
        for result in results:
            if not (args.misses and result.facts_ok):
                print(_line(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
