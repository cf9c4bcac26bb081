"""D1, D8: the offline gatekeeper asks for the kind of fact the question asks for.

A context that holds the question's words is not sufficient when the question asks for a
kind of fact (an e-mail address, a figure) that no sentence near those words gives: the
deep search then runs instead of the answer quoting a sentence that only names the subject
("contact details are on the next page").
"""

from __future__ import annotations

from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_reading import asked_kind, asks_for_email
from toolweave.state.documents import UniqueTextDocument

EMAIL_QUESTION = "What is the e-mail address of the lending desk?"


def page(document_id: str, number: int, text: str) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=document_id,
        document_name=document_id,
        page=1,
        sentence_number=number,
        text=text,
    )


def test_D8_offline_gatekeeper_an_email_question_needs_an_email_address_near_its_words() -> None:
    named = [page("help", 1, "The lending desk address for loans is given on the next page.")]
    verdict = OfflineAssistant().judge_context(EMAIL_QUESTION, named, [])
    assert not verdict.sufficient
    assert verdict.missing == (EMAIL_QUESTION,)  # the deep search looks the question up again
    given = [page("help", 1, "The lending desk answers at the address lending@library.example.")]
    assert OfflineAssistant().judge_context(EMAIL_QUESTION, given, []).sufficient


def test_D8_offline_gatekeeper_an_email_address_about_something_else_is_not_the_one_asked() -> None:
    other = [
        page("help", 1, "The lending desk address for loans is given on the next page."),
        page("events", 1, "Write to events@library.example to book the hall."),
    ]
    assert not OfflineAssistant().judge_context(EMAIL_QUESTION, other, []).sufficient


def test_D8_the_kind_of_fact_asked_is_read_in_each_language() -> None:
    for question in ("Jaki jest adres e-mail działu kadr?", "Mi a titkárság e-mail-címe?"):
        assert asks_for_email(question)
        kind = asked_kind(question)
        assert kind is not None
        assert kind("Pisz na kadry@firma.example.")
        assert not kind("Dział kadr jest na 2. piętrze.")
    assert not asks_for_email("Where is the lending desk?")
    figure = asked_kind("How much does a library card cost?")
    assert figure is not None
    assert figure("A card costs 5 euros.")
    assert not figure("Cards are sold.")
    assert asked_kind("Where is the lending desk?") is None


def test_D8_offline_gatekeeper_reads_whom_a_pronoun_opening_the_address_sentence_means() -> None:
    question = "What is the e-mail address of the head of the lending desk?"
    run = [
        page("help", 1, "The head of the lending desk is Ms Kovacs."),
        page("help", 2, "Her office is on the first floor."),
        page("help", 3, "Her e-mail address is kovacs@library.example."),  # "her": Ms Kovacs
    ]
    assert OfflineAssistant().judge_context(question, run, []).sufficient
    run[2] = page("help", 3, "The e-mail address is kovacs@library.example.")  # whose?
    assert not OfflineAssistant().judge_context(question, run, []).sufficient
