"""The generality bench's answers file (issues 36, 38): each case's tools beside its answer."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from bench.generality import _dump
from toolweave.evaluation import CaseResult, GoldenCase


def test_G1_the_answers_file_says_which_tools_ran_beside_the_expected_ones(tmp_path: Path) -> None:
    case = GoldenCase(id="x1", question="Q?", expected_tools=frozenset({"a"}))
    result = CaseResult(case=case, routed=frozenset({"a", "b"}), answer="A.")
    path = tmp_path / "answers.jsonl"
    _dump(path, "demo", "dev", SimpleNamespace(results=[result]))
    (line,) = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    assert (line["expected_tools"], line["routed"], line["tools_exact"]) == (
        ["a"],
        ["a", "b"],
        False,
    )
    assert line["answer"] == "A."
