"""The offline answers, measured: does the answer hold the asked fact, or say "no information"?

``bench/data/answers_calibration.jsonl`` and ``answers_heldout.jsonl`` hold English and
Hungarian questions over the hospital demo's bundled corpus, each with the fact its
answer must contain (a phrase of the document that answers it, compared folded for
case, accents and spacing) or ``null``: the corpus does not cover the question, and the
answer must say so. A row is held out when ``zlib.crc32`` of its question's UTF-8
text leaves 0 modulo 3 (a third); the sentence picker's rules are set on the
calibration part only.

Every question runs through the whole graph (routing, retrieval, the gatekeeper and
deep fallback, the answer) with the offline model, one fresh thread each, as
``toolweave ask`` would run it. A run that ends on a clarification question holds no
answer, so it counts as a miss.

Usage (from the repository root)::

    python -m bench.answers            # the table, both parts
    python -m bench.answers --misses   # and every question whose answer is wrong
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import HumanMessage

from toolweave.domains import load_domain
from toolweave.evaluation import holds_fact, says_no_information
from toolweave.graph.builder import build_graph
from toolweave.llm.offline import OfflineAssistant

DATA = Path(__file__).resolve().parent / "data"
PARTS = {"calibration": "answers_calibration.jsonl", "held-out": "answers_heldout.jsonl"}


@dataclass(frozen=True)
class Outcome:
    """One question's answer and whether it is right."""

    question: str
    fact: str | None
    answer: str

    @property
    def right(self) -> bool:
        """The fact is in the answer; or, for a question not covered, it says so."""
        if self.fact is None:
            return says_no_information(self.answer)
        return holds_fact(self.answer, self.fact)


def load(name: str) -> list[dict[str, Any]]:
    """The rows of one answer-set file."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run(rows: list[dict[str, Any]], graph: Any) -> list[Outcome]:
    """Every row's question through ``graph`` on a fresh thread."""
    outcomes = []
    for number, row in enumerate(rows):
        config = {"configurable": {"thread_id": f"answers-{number}"}}
        out = graph.invoke({"messages": [HumanMessage(row["question"])]}, config)
        outcomes.append(Outcome(row["question"], row.get("fact"), str(out.get("answer") or "")))
    return outcomes


def table(results: dict[str, list[Outcome]]) -> list[str]:
    """The markdown table: per part, answers holding the fact and "no information" rates."""
    lines = [
        '| part | answerable | answer holds the fact | not covered | answered "no information" |',
        "|---|---:|---:|---:|---:|",
    ]
    for part, outcomes in results.items():
        covered = [o for o in outcomes if o.fact is not None]
        uncovered = [o for o in outcomes if o.fact is None]
        lines.append(
            f"| {part} | {len(covered)} | {_share(covered)} | {len(uncovered)} "
            f"| {_share(uncovered)} |"
        )
    return lines


def _share(outcomes: list[Outcome]) -> str:
    if not outcomes:
        return "-"
    right = sum(o.right for o in outcomes)
    return f"{right}/{len(outcomes)} ({100 * right / len(outcomes):.1f} %)"


def main(argv: list[str] | None = None) -> int:
    """Run both parts and print the table (and the misses with ``--misses``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print every wrong answer")
    args = parser.parse_args(argv)
    domain, tools = load_domain("korhaz")
    graph = build_graph(domain, tools, assistant=OfflineAssistant())
    results = {part: run(load(name), graph) for part, name in PARTS.items()}
    print("\n".join(table(results)))
    if args.misses:
        for part, outcomes in results.items():
            for o in outcomes:
                if not o.right:
                    answer = " / ".join(o.answer.splitlines())
                    print(f"\n[{part}] {o.question}\n  fact: {o.fact}\n  answer: {answer}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
