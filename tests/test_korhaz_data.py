"""The bundled hospital data agrees with itself where its files overlap (issue 12, item 9).

An answer is only as good as its sources: when two pages state the same fact (a fee, an
opening time), they must state the same value, or the demo answers one question two ways.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "examples" / "korhaz" / "toolweave_korhaz" / "data"

TRANSLATIONS = [
    ("admission", "felvetel"),
    ("blood-tests", "labor"),
    ("cafeteria", "bufe"),
    ("discharge", "tavozas"),
    ("parking", "parkolas"),
    ("patient-rights", "betegjogok"),
    ("pharmacy", "gyogyszertar"),
    ("visiting-hours", "latogatas"),
]
"""English page, Hungarian page: the same content in two languages."""

_NUMBER = re.compile(r"\d{1,2}:\d{2}|\d{1,3}(?: \d{3})+|\d+")

FACTS: dict[str, list[tuple[str, str]]] = {
    "price of a further copy of medical records, Ft per page": [
        ("dijszabas", r"további másolat (\d[\d ]*) Ft oldalanként"),
        ("tavozas", r"további másolat oldalanként (\d[\d ]*) Ft"),
        ("discharge", r"further copy costs (\d[\d ]*) Ft per page"),
    ],
    "parent bed on the children's ward, Ft per night": [
        ("dijszabas", r"szülői ágy (\d[\d ]*) Ft éjszakánként"),
        ("childrens-ward", r"parent bed costs (\d[\d ]*) Ft per night"),
    ],
    "copies of medical records are ready within, working days": [
        ("tavozas", r"(\d+) munkanapon belül"),
        ("discharge", r"within (\d+) working days"),
    ],
}
"""A fact stated in several files: each file's pattern captures its value."""


def body(name: str) -> str:
    """A page's text without its front matter."""
    text = (DATA / f"{name}.md").read_text(encoding="utf-8")
    return text.split("---", 2)[2]


def numbers(text: str) -> list[str]:
    """Times, amounts and counts in a text, spaces in thousands removed, sorted."""
    return sorted(match.replace(" ", "") for match in _NUMBER.findall(text))


@pytest.mark.parametrize(("english", "hungarian"), TRANSLATIONS)
def test_korhaz_translated_pages_state_the_same_numbers(english: str, hungarian: str) -> None:
    assert numbers(body(english)) == numbers(body(hungarian))


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_korhaz_a_fact_stated_in_several_files_has_one_value(fact: str) -> None:
    values: dict[str, str] = {}
    for name, pattern in FACTS[fact]:
        match = re.search(pattern, body(name))
        assert match is not None, f"{name}.md no longer states: {fact}"
        values[name] = match.group(1).replace(" ", "")
    assert len(set(values.values())) == 1, f"{fact}: {values}"


def test_korhaz_data_check_sees_a_contradiction() -> None:
    assert numbers("A díj 1 500 Ft, 9:00-13:00") == ["13:00", "1500", "9:00"]
    assert numbers("costs 1500 Ft") != numbers("kerül 50 Ft")
