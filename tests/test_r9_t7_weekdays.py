"""Weekdays as facts (R9, T7), numbers by their cue (T6), word forms (T12), in any domain.

A small model wrote "Kardiológia rendelési ideje hétfőn: nincs rendelés" (Monday) citing a
passage about Sunday, after filling ``day="sunday"`` for "hétfőn": both are caught here by
rules that hold for any domain.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from toolweave.llm.citations import checkable, supports
from toolweave.llm.lexical import related, weekday
from toolweave.llm.offline_extract import extract_request, ground_request

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class HoursRequest(BaseModel):
    """A request with a weekday chosen from a closed set."""

    department: str | None = None
    day: Day | None = None


def test_R9_a_sentence_naming_another_weekday_than_its_passage_is_unsupported() -> None:
    sunday = "A Kardiológia rendelési ideje vasárnap: nincs rendelés."
    assert not supports("A Kardiológia rendelési ideje hétfőn: nincs rendelés.", [sunday])
    assert supports("A Kardiológia rendelési ideje vasárnap: nincs rendelés.", [sunday])


def test_R9_a_weekday_within_the_span_or_a_passage_naming_none_is_supported() -> None:
    span = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."
    assert supports("A Kardiológia szerdán 9:00-13:00 között rendel.", [span])
    assert not supports("A Kardiológia szombaton 9:00-13:00 között rendel.", [span])
    assert supports("On Monday visiting hours are 15:00-17:00.", ["Every day 15:00-17:00."])
    assert "day:0" in checkable("On Monday visiting hours are 15:00-17:00.")
    assert "name:Monday" not in checkable("On Monday visiting hours are 15:00-17:00.")


def test_T7_a_weekday_the_model_misread_is_the_one_the_text_says() -> None:
    filled = {"department": "Kardiológia", "day": "sunday"}
    grounded = ground_request(filled, HoursRequest, "Kardiológia rendelési idő hétfőn?")
    assert grounded["day"] == "monday"


def test_T7_a_weekday_kept_when_the_text_names_it_or_none_and_dropped_when_unclear() -> None:
    filled = {"department": "Cardiology", "day": "sunday"}
    assert ground_request(filled, HoursRequest, "Cardiology on Sunday?")["day"] == "sunday"
    assert ground_request(filled, HoursRequest, "Cardiology hours?")["day"] == "sunday"
    assert ground_request(filled, HoursRequest, "Monday or Tuesday?")["day"] is None


def test_T10_polish_weekdays_are_weekdays_and_words_they_begin_are_not() -> None:
    days = ["poniedziałek", "we wtorek", "w środę", "czwartek", "piątku", "sobotę", "niedziela"]
    assert [weekday(text.split()[-1]) for text in days] == list(range(7))
    for word in ("środek", "środkiem", "piąty", "czwarty", "wtórny"):
        assert weekday(word) is None, word


def test_T12_hungarian_stems_that_drop_a_vowel_are_one_word() -> None:
    assert related("dohányozni", "dohányzás")
    assert related("kórterem", "kórtermek")
    assert not related("interest", "intrest")  # a vowel dropped where no stem parts
    assert not related("bokor", "bokrok")  # too short to tell from chance


class ReadingRequest(BaseModel):
    """A number field with a cue, as a meter reading's."""

    reading: int | None = Field(default=None, json_schema_extra={"after_cues": ["shows"]})


def test_T6_a_number_field_takes_the_number_after_its_cue_not_the_first() -> None:
    text = "Up to 80 cubic metres are billed at the low rate; my meter shows 1234 today."
    assert extract_request(text, ReadingRequest) == {"reading": 1234}
    assert extract_request("987", ReadingRequest) == {"reading": 987}  # a bare reply
