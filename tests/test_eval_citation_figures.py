"""R9 / Q2 in ``toolweave eval`` (issue 38 item 4): the citation check's figures per half.

A neutral domain (a shop): one tool returns the opening hours; a scripted model
answers with sentences the check keeps or drops. The figures come from the answer's
ledger entry (sentences, supported, citation precision) and from the answer the
person got (invented facts: a kept sentence's token in no passage of the run).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from support import doc

from bench.generality import HEADER, Wire, _row
from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument
from toolweave.evaluation import (
    CaseResult,
    CitationFigures,
    EvalReport,
    citation_figures,
    evaluate,
    invented_sentences,
    parse_case,
    split_table,
)
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.state.documents import AnswerSentence
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO
from toolweave.testing import ScriptedChatModel
from toolweave.tools.domain import Domain

HOURS = "We open at 9:00 and close at 17:00."
QUESTION = "When are you open?"


class Hours(ChatbotTool[Any]):
    name = "hours"
    executable_instruction = "hours: true when the user asks when the shop is open."

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_context(self.name, [UniqueTextDocument(document_id="h", text=HOURS)])


def _script(answer: str) -> list[Any]:
    normalized = {"question": QUESTION, "user_lang": "en", "important_words": [],
                  "prompt_type": "factual"}  # fmt: skip
    return [normalized, {"hours": {"reason": "r", "run": True}}, answer]


def _case(split: str = "heldout") -> Any:
    return parse_case({"question": QUESTION, "expected_tools": ["hours"], "split": split}, "x")


def test_R9_eval_reads_sentences_supported_and_dropped_from_the_answer_ledger_entry() -> None:
    model = ScriptedChatModel(
        script=_script("We open at 9:00 [1]. We close at 17:00 [1]. The manager is Smith [1].")
    )
    report = evaluate(
        Domain(name="shop"),
        [Hours()],
        [_case()],
        assistant=ChatModelAssistant(model, initial_backoff=0),
    )
    (result,) = report.results
    assert result.error is None
    assert "Smith" not in result.answer  # the check dropped it: the person never got it
    assert result.citations == CitationFigures(sentences=3, supported=2, precision=0.67)
    assert report.sentences_supported == 2 / 3
    assert report.sentences_dropped == 1
    assert report.citation_precision == 0.67
    assert report.invented_answers == 0  # what the person got holds only the passage's facts
    summary = report.summary()
    assert summary["sentences_dropped"] == 1
    assert summary["invented_fact_answers"] == 0


def _answer_entry(**details: str) -> LedgerEntry:
    return LedgerEntry(
        kind=LedgerKind.ANSWER, task_no=ROOT_TASK_NO, verdict="generated", reason="r",
        details=details,
    )  # fmt: skip


def test_R9_eval_takes_the_last_answer_entry_and_none_without_one() -> None:
    first = _answer_entry(sentences="4", supported="1", citation_precision="0.25")
    last = _answer_entry(sentences="2", supported="2", citation_precision="-")
    finished = LedgerEntry(kind=LedgerKind.ANSWER, task_no=ROOT_TASK_NO, verdict="v", reason="r")
    assert citation_figures([first, last, finished]) == CitationFigures(2, 2, None)
    assert citation_figures([finished.model_dump()]) is None  # a tool's finished answer
    assert citation_figures([first.model_dump()]) == CitationFigures(4, 1, 0.25)


def test_R9_eval_sentences_supported_pools_sentences_and_precision_skips_answers_citing_none():
    def result(figures: CitationFigures | None, split: str = "heldout") -> CaseResult:
        return CaseResult(case=_case(split), citations=figures)

    report = EvalReport(
        assistant="x",
        results=[
            result(CitationFigures(4, 3, 0.5)),
            result(CitationFigures(1, 1, None)),  # cites nothing: not in the precision mean
            result(CitationFigures(2, 0, 1.0)),
            result(None),  # no generated answer: in no figure
            result(CitationFigures(5, 5, 0.1), "dev"),
        ],
    )
    heldout = report.splits()["heldout"]
    assert heldout.sentences_supported == 4 / 7  # pooled, not the mean of 3/4, 1/1, 0/2
    assert heldout.citation_precision == 0.75
    assert heldout.sentences_dropped == 3
    assert EvalReport(assistant="x", results=[result(None)]).sentences_supported is None
    header, _, dev, held = split_table(report)[1:]
    assert "sentences supported" in header
    assert "invented facts" in header
    assert "| heldout | 4 |" in held
    assert "57.1 % | 75.0 % | 3 | 0 |" in held
    assert dev.endswith("100.0 % | 10.0 % | 0 | 0 |")


def test_R9_eval_invented_fact_is_a_kept_sentence_token_in_no_passage_of_the_run() -> None:
    hours, phone = doc("hours", HOURS), doc("phone", "Call 555 1234 567 for orders.")
    sentences = [
        AnswerSentence(text="We open at 9:00.", sources=(1,)),
        AnswerSentence(text="Orders: 555 1234 567.", sources=(1,)),  # cites hours; held elsewhere
        AnswerSentence(text="We close at 18:00.", supported=False),  # dropped: not the answer
        AnswerSentence(text="It is a nice shop."),  # no checkable token: nothing to invent
    ]
    values: dict[str, Any] = {
        "documents": [hours],
        "context_buffer": {"hours": [SimpleNamespace(documents=[phone])]},
        "answer_sentences": sentences,
    }
    assert invented_sentences(values) == []
    values["answer_sentences"] = [*sentences, AnswerSentence(text="We close at 18:00.")]
    assert invented_sentences(values) == ["We close at 18:00."]
    values["context_buffer"] = {}
    dumped = [s.model_dump() for s in values["answer_sentences"]]
    assert invented_sentences({**values, "answer_sentences": dumped}) == [
        "Orders: 555 1234 567.",
        "We close at 18:00.",
    ]
    computed = {"answer_sentences": [AnswerSentence(text="Left: 17 days.")], "documents": []}
    assert invented_sentences(computed) == ["Left: 17 days."]
    guaranteed = [SimpleNamespace(context="Left: 17 days of 26.", documents=[])]
    assert invented_sentences({**computed, "guaranteed": guaranteed}) == []  # a tool's reply
    report = EvalReport(
        assistant="x",
        results=[
            CaseResult(case=_case(), invented=("We close at 18:00.",)),
            CaseResult(case=_case(), invented=("a", "b")),  # counted once: answers, not sentences
            CaseResult(case=_case()),
        ],
    )
    assert report.invented_answers == 2


def test_R9_Q2_generality_table_has_the_columns_of_issue_38() -> None:
    cases = [
        CaseResult(case=_case(), citations=CitationFigures(4, 3, 0.5), invented=("x",)),
        CaseResult(
            case=parse_case(
                {"question": "q", "expected_tools": "none", "history": ["h"],
                 "expected_next": "cancel", "split": "heldout"}, "y"
            ),
            next_kind="cancel",
        ),
    ]  # fmt: skip
    row = _row("shop", "offline", "heldout", EvalReport(assistant="x", results=cases), Wire(None))
    names = [cell.strip() for cell in HEADER.strip("|").split("|")]
    cells = dict(zip(names, (cell.strip() for cell in row.strip("|").split("|")), strict=True))
    assert cells["next message right"] == "100.0 %"
    assert cells["sentences supported"] == "75.0 %"
    assert cells["citation precision"] == "50.0 %"
    assert cells["sentences dropped"] == "1"
    assert cells["invented facts"] == "1"


def test_R9_eval_table_reads_the_citation_figures_of_a_json_report() -> None:
    from bench.eval_table import HEADERS, row

    report = EvalReport(
        assistant="x",
        results=[
            CaseResult(case=_case(), citations=CitationFigures(4, 3, 0.5), invented=("x",)),
            CaseResult(case=_case(), citations=CitationFigures(2, 2, None)),
            CaseResult(case=_case()),
        ],
    )
    cases = report.as_json()["cases"]
    cells = dict(zip(HEADERS.split("|"), row("m", cases), strict=True))
    assert cells["sentences supported"] == "5/6 (83%)"
    assert cells["invented facts"] == "1"
    older = [{k: v for k, v in c.items() if k not in ("citations", "invented")} for c in cases]
    assert dict(zip(HEADERS.split("|"), row("m", older), strict=True))["invented facts"] == "-"
