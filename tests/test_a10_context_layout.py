"""A10, R6, R9: the model's context names each source once for a run of its passages.

The answer and gatekeeper calls number every passage (``[n]``) so the model can cite it;
the passage's source ("Opening hours, p. 2") is said once above a run of passages of that
page, not on every line. The same labels, fewer characters sent (A10: every call pays).
A neutral test domain (a swimming pool); no example domain's words.
"""

from __future__ import annotations

from toolweave.llm.answer_rules import echoes_prompt
from toolweave.llm.chat_messages import format_context
from toolweave.llm.port import AnswerRequest
from toolweave.state.documents import UniqueTextDocument


def _doc(name: str, text: str, page: int = 1, count: int = 1, n: int = 1) -> UniqueTextDocument:
    return UniqueTextDocument(
        text=text,
        document_id=name,
        document_name=name,
        page=page,
        page_count=count,
        sentence_number=n,
    )


POOL = [
    _doc("Opening hours", "The pool opens at 6:00.", 2, 3, 1),
    _doc("Opening hours", "It closes at 22:00.", 2, 3, 2),
    _doc("Prices", "A ticket costs 4 euros."),
    _doc("Opening hours", "On Sundays it opens at 8:00.", 3, 3, 1),
]


def test_R6_a_run_of_one_pages_passages_is_headed_once_each_passage_numbered() -> None:
    assert format_context(POOL).splitlines() == [
        "Opening hours, p. 2:",
        "[1] The pool opens at 6:00.",
        "[2] It closes at 22:00.",
        "Prices:",
        "[3] A ticket costs 4 euros.",
        "Opening hours, p. 3:",  # another page of the document: its own heading
        "[4] On Sundays it opens at 8:00.",
    ]


def test_A10_the_context_is_shorter_than_one_label_per_line() -> None:
    each = "\n".join(f"[{n}] {d.document_name}, p. 2: {d.text}" for n, d in enumerate(POOL[:2], 1))
    assert len(format_context(POOL[:2])) < len(each)


def test_R9_an_answer_that_copies_a_numbered_context_line_is_an_echo() -> None:
    request = AnswerRequest("When does the pool open?", "en", "", POOL, ())
    assert echoes_prompt("[1] The pool opens at 6:00.", request)
    assert not echoes_prompt("The pool opens at 6:00 [1].", request)
