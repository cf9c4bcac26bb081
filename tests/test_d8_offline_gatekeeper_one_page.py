"""D1, D8: the offline gatekeeper finds a context sufficient only when one page speaks to it.

The offline model's gatekeeper judged a context by the question's words anywhere in it,
so a first retrieval that brought pages on other subjects, each sharing a word of the
question, passed as sufficient and the deep search never ran. One page (a run of one
page's passages, or one guaranteed text) must now say the covered share of the question's
words; otherwise the question itself is the missing piece.
"""

from __future__ import annotations

from toolweave.llm.offline import OfflineAssistant
from toolweave.state.documents import UniqueTextDocument

QUESTION = "Can visitors bring flowers to the ward?"


def page(document_id: str, number: int, text: str) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=document_id,
        document_name=document_id,
        page=1,
        sentence_number=number,
        text=text,
    )


def test_D1_D8_the_question_words_spread_over_pages_on_other_subjects_are_not_sufficient() -> None:
    spread = [
        page("visits", 1, "Visitors are welcome every afternoon."),
        page("admission", 1, "Bring your ID card and your referral."),
        page("wards", 1, "The ward has ten beds and a day room."),
    ]
    verdict = OfflineAssistant().judge_context(QUESTION, spread, [])
    assert not verdict.sufficient
    assert verdict.missing == (QUESTION,)  # the deep search looks the question up again


def test_D1_the_question_words_on_one_page_are_sufficient() -> None:
    one_page = [
        page("visits", 1, "Visitors may bring books and flowers."),
        page("visits", 2, "Potted plants are not allowed on the ward."),
        page("admission", 1, "Bring your ID card and your referral."),
    ]
    assert OfflineAssistant().judge_context(QUESTION, one_page, []).sufficient
    # a guaranteed text counts as one page
    text = "Visitors may bring cut flowers to the ward."
    assert OfflineAssistant().judge_context(QUESTION, one_page[2:], [text]).sufficient
