"""PF1: the answer rules read what a question's context does not cover once, not per rule."""

from __future__ import annotations

from typing import Any

import pytest

from toolweave.llm import answer_rules, offline_reading
from toolweave.llm.port import AnswerRequest
from toolweave.state.documents import UniqueTextDocument


def _request(question: str) -> AnswerRequest:
    documents = [
        UniqueTextDocument(
            document_id="p1", document_name="Opening hours", sentence_number=1, text=text
        )
        for text in ("The library opens at 9:00.", "It closes at 18:00 on weekdays.")
    ]
    return AnswerRequest(
        question=question, user_lang="en", system_prompt="", documents=documents, guaranteed=[]
    )


@pytest.mark.parametrize(
    "question", ["Is there a swimming pool in the library?", "When does the library open?"]
)
def test_PF1_the_uncovered_subject_is_read_once_per_question_and_context(
    monkeypatch: pytest.MonkeyPatch, question: str
) -> None:
    calls: list[Any] = []
    real = offline_reading.uncovered_subject

    def counted(*args: Any) -> str | None:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(offline_reading, "uncovered_subject", counted)
    answer_rules._uncovered.cache_clear()
    request = _request(question)
    subject = answer_rules.uncovered_subject(request)
    words = answer_rules.uncovered_words(request)
    assert len(calls) == 1
    assert subject == real(question, [(d.document_name, d.text) for d in request.documents])
    assert words == answer_rules.uncovered_words(_request(question))
    assert (subject is None) == (words == ())
