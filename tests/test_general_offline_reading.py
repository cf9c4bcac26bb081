"""G1 with A7 and R9: offline reading rules that hold for any domain (issue 36 item 3).

Each rule is checked in a neutral domain (a city office), beside the case the same
rule must still refuse, so a rule that answered everything would fail too.
"""

from __future__ import annotations

from tests.test_answer_coverage_rules import _answer, _doc
from toolweave.evaluation import says_no_information
from toolweave.llm.lexical import compound_tail, is_generic, month
from toolweave.llm.offline_reading import asks_for_quantity, asks_for_time

OFFICE = [
    _doc("Holidays", 1, "The office is closed on Founders Day, 14 May."),
    _doc("Canteen", 1, "The canteen opens at 8:00."),
    _doc("Parking", 1, "Parking costs 2 euro per hour."),
]


def test_A7_a_lowercase_word_before_a_name_the_question_capitalises_does_not_qualify_it() -> None:
    # "celebrate" is in no document, but it is no kind of Founders Day: the question
    # writes the name capitalised and the word before it in lowercase
    assert "14 May" in _answer("When do we celebrate Founders Day?", OFFICE)


def test_R9_a_word_written_as_part_of_the_name_still_qualifies_it() -> None:
    # "Spring Founders Day" is a kind of Founders Day the sources do not name
    assert says_no_information(_answer("When is the Spring Founders Day?", OFFICE))
    assert says_no_information(_answer("When is the spring founders day?", OFFICE))


RADIOLOGY = [
    _doc("Departments: Radiology", 1, "Radiology is in Building C."),
    _doc("Departments: Radiology", 2, "Consultation hours of Radiology: Monday-Friday 8:00-12:00."),
    _doc("Visiting", 1, "Please do not visit patients if you have a fever."),
    _doc("Parking", 1, "Parking costs 2 euro per hour."),
]


def test_A7_a_generic_word_of_the_question_is_not_missed_by_the_sentence() -> None:
    assert is_generic("see")
    # "see" says how, not what about: the page about radiology answers with half the rest
    assert "8:00-12:00" in _answer("When does radiology see patients?", RADIOLOGY)
    # a subject word that no document holds is still missed ("dentistry")
    assert says_no_information(_answer("When does dentistry see patients?", RADIOLOGY))


def test_R9_a_sentence_saying_only_generic_words_of_the_question_does_not_answer() -> None:
    docs = [
        _doc("Roof terrace", 1, "Every day you can see the river from the roof terrace."),
        _doc("Canteen", 1, "The canteen opens at 8:00."),
        _doc("Parking", 1, "Parking costs 2 euro per hour."),
    ]
    # "day" and "see" are the sentence's only words of the question: nothing about a notary
    assert says_no_information(_answer("Which day can I see the notary?", docs))
    docs.append(_doc("Notary", 1, "The notary receives clients every day from 9:00 to 11:00."))
    assert "9:00 to 11:00" in _answer("Which day can I see the notary?", docs)


def test_A7_a_word_matches_the_last_part_of_a_compound() -> None:
    assert compound_tail("vezeti", "osztályvezetője")  # "leads" / "head of department"
    assert not compound_tail("vezeti", "vezetés")  # no first part: a form, not a compound
    assert not compound_tail("tár", "levéltár")  # too short a stem to stand for a word
    docs = [
        _doc("Levéltár", 1, "A levéltár osztályvezetője dr. Kiss Anna."),
        _doc("Büfé", 1, "A büfé 8:00-kor nyit."),
        _doc("Parkolás", 1, "A parkolás óránként 500 Ft."),
    ]
    assert "Kiss Anna" in _answer("Ki vezeti a levéltárat?", docs, "hu")


def test_A7_a_mistyped_key_word_is_read_as_the_context_writes_it() -> None:
    docs = [
        _doc("Departments: Radiology", 1, "Radiology is in Building C."),
        _doc("Parking", 1, "Parking costs 2 euro per hour."),
        _doc("Canteen", 1, "The canteen opens at 8:00."),
    ]
    assert "Building C" in _answer("Where is radiolgy?", docs)
    # two typos are another word: nothing is read into it
    assert says_no_information(_answer("Where is rdaiolgy?", docs))


def test_A7_open_and_hours_are_said_by_a_sentence_giving_the_hours() -> None:
    docs = [
        _doc("Departments: Radiology", 1, "Consultation hours of Radiology: Monday 8:00-12:00."),
        _doc("Departments: Radiology", 2, "Radiology is in Building C."),
        _doc("Parking", 1, "Parking costs 2 euro per hour."),
        _doc("Canteen", 1, "The canteen serves lunch."),
    ]
    # "clinic" is in no document; "open" is what the hours say
    answer = _answer("When is the radiology clinic open?", docs)
    assert "8:00-12:00" in answer
    assert "Building C" not in answer


def test_A7_polish_questions_ask_for_a_time_or_an_amount() -> None:
    assert asks_for_time("Kiedy jest otwarta stołówka?")
    assert asks_for_quantity("Ile kosztuje obiad?")
    assert not asks_for_quantity("Gdzie jest centrum miasta?")


def test_A7_a_month_is_said_by_a_date_of_that_month_written_in_digits() -> None:
    assert (month("November"), month("listopadzie"), month("novemberben")) == (11, 11, 11)
    assert month("marketing") is None
    docs = [
        _doc("Office calendar", 1, "2027-11-02 (Tuesday): the office is closed."),
        _doc("Office calendar", 2, "2027-05-04 (Tuesday): the office is closed."),
        _doc("Parking", 1, "Parking costs 2 euro per hour."),
    ]
    answer = _answer("When is the office closed in November?", docs)
    assert "2027-11-02" in answer
    assert "2027-05-04" not in answer
