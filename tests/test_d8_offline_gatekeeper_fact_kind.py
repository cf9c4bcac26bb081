"""D1, D8: the offline gatekeeper asks for the kind of fact the question asks for.

A context that holds the question's words is not sufficient when the question asks for a
kind of fact (an e-mail address, a figure) that no sentence near those words gives: the
deep search then runs instead of the answer quoting a sentence that only names the subject
("contact details are on the next page").
"""

from __future__ import annotations

from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_reading import asked_kind, asks_for_email, subject_words, wanted_words
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


def test_D8_offline_gatekeeper_a_page_saying_only_how_words_does_not_speak_to_the_subject() -> None:
    question = "Is a new locker free?"  # "new" and "free" say how; "locker" is the subject
    how_only = [page("welcome", 1, "New members get a free welcome pack.")]
    verdict = OfflineAssistant().judge_context(question, how_only, [])
    assert not verdict.sufficient
    assert verdict.missing == (question,)
    on_subject = [page("lockers", 1, "Lockers are free for members.")]
    assert OfflineAssistant().judge_context(question, on_subject, []).sufficient


def test_D8_offline_gatekeeper_the_figure_must_sit_by_the_subject_not_the_kind_word() -> None:
    question = "What does a sauna ticket cost for students?"
    apart = [
        page("sauna", 1, "Students can use the sauna on weekdays."),
        page("tickets", 1, "A ticket costs 5 euros."),  # "ticket" and "cost": half the words
    ]
    verdict = OfflineAssistant().judge_context(question, apart, [])
    assert not verdict.sufficient  # the price is a ticket's, not said of the sauna
    together = [page("sauna", 1, "A sauna ticket costs 5 euros for students.")]
    assert OfflineAssistant().judge_context(question, together, []).sufficient


def test_D8_the_subject_words_leave_out_how_words_and_the_kind_asked() -> None:
    question = "What does a sauna ticket cost for students?"
    assert subject_words(question) == ["sauna", "ticket", "students"]
    assert "free" not in subject_words("Is a new locker free?")
    assert subject_words("Is it free?") == wanted_words("Is it free?")  # none left: all words


def test_D8_offline_gatekeeper_an_ordinal_is_no_amount_for_a_how_many_question() -> None:
    question = "How many lockers are on the pool floor?"
    placed = [page("pool", 1, "Lockers are on the 2nd floor by the pool.")]  # which floor
    assert not OfflineAssistant().judge_context(question, placed, []).sufficient
    counted = [page("pool", 1, "There are 40 lockers on the pool floor.")]
    assert OfflineAssistant().judge_context(question, counted, []).sufficient
    # an ordinal answers "when" ("by the 10th"), and "ile" asks an amount in Polish too
    due = [page("cards", 1, "The sports card can be ordered until the 10th of each month.")]
    assert OfflineAssistant().judge_context("When can I order the sports card?", due, []).sufficient
    polish = [page("parking", 1, "Miejsce parkingowe rezerwuje się do 10. dnia miesiąca.")]
    verdict = OfflineAssistant().judge_context("Ile miejsc jest na parkingu?", polish, [])
    assert not verdict.sufficient
