"""``toolweave eval`` as strict as a user (issue 17 item 9): facts, sources (R9), categories."""

from __future__ import annotations

from tests.support import doc
from toolweave.evaluation import (
    CaseResult,
    EvalReport,
    holds_fact,
    parse_case,
    report_table,
    says_no_information,
    unbacked_sources,
)
from toolweave.state.documents import sources_of


def test_R9_answer_facts_are_folded_for_case_accents_and_spacing() -> None:
    assert holds_fact("Az egyágyas szoba 14 000 Ft éjszakánként.", "14000 ft ejszakankent")
    assert holds_fact("Open MONDAY 9:00 - 13:00", "monday 9:00-13:00")
    assert not holds_fact("Open Monday 9:00-12:00", "9:00-13:00")
    assert not holds_fact("anything", " ")


def test_R9_a_case_may_expect_no_information_and_gets_a_category() -> None:
    record = {"question": "Pool?", "expected_tools": "none", "expected_facts": "none"}
    case = parse_case(record, "x")
    assert case.expects_no_information
    assert case.category == "documents"
    routed = parse_case(
        {"question": "q", "expected_tools": ["b", "a"], "expected_words": ["w"]}, "y"
    )
    assert routed.category == "a+b"
    assert routed.expected_facts == ("w",)
    result = CaseResult(case=case, answer="I found no information about this.")
    assert result.facts_ok is True
    assert CaseResult(case=case, answer="The pool opens at 8.").facts_ok is False


def _values(answer: str, used: list[object]) -> dict[str, object]:
    fee = doc("fees", "A single room costs 14 000 Ft per night.")
    wifi = doc("wifi", "The wifi password is gyogyulas2024.")
    return {"answer": answer, "documents": [fee, wifi], "sources": sources_of(used)}


def test_R9_every_listed_source_must_hold_something_the_answer_says() -> None:
    fee, wifi = doc("fees", "x"), doc("wifi", "x")
    answer = "A single room costs 14 000 Ft per night."
    assert unbacked_sources(_values(answer, [fee]), answer) == []
    assert unbacked_sources(_values(answer, [fee, wifi]), answer) == ["wifi"]
    case = parse_case({"question": "q", "expected_tools": "none"}, "z")
    values = _values(answer, [fee, wifi])
    result = CaseResult(
        case=case,
        answer=answer,
        sources=tuple(sources_of([fee, wifi])),
        unbacked=tuple(unbacked_sources(values, answer)),
    )
    assert result.sources_ok is False


def test_R9_a_no_information_answer_lists_no_sources() -> None:
    case = parse_case({"question": "q", "expected_tools": "none"}, "z")
    answer = "I found no information about this in the available sources."
    assert says_no_information(answer)
    listed = CaseResult(case=case, answer=answer, sources=tuple(sources_of([doc("fees", "x")])))
    assert listed.sources_ok is False
    assert CaseResult(case=case, answer=answer).sources_ok is True


def test_eval_prints_a_table_per_category() -> None:
    a = parse_case({"question": "q", "expected_tools": "none", "category": "neighbours"}, "a")
    b = parse_case({"question": "q", "expected_tools": ["t"]}, "b")
    report = EvalReport(
        assistant="x", results=[CaseResult(case=a), CaseResult(case=b, routed=frozenset({"t"}))]
    )
    lines = report_table(report)
    assert any(line.startswith("| category |") for line in lines)
    assert "| neighbours | 1 | 100.0 % |" in "\n".join(lines)
    assert any(line.startswith("| t | 1 | 100.0 %") for line in lines)
    assert set(report.categories()) == {"neighbours", "t"}
