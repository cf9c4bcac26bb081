"""T10 and D9: short Polish words match their other forms (issue 36, the last new user).

A Polish stem of three letters ("ulg" of "ulga"/"ulgę"), a fleeting *e* ("pies"/"psa") and an
alternating vowel ("pieniądze"/"pieniędzy") are read by one general rule, the Polish core
(:func:`toolweave.tools.text.polish_core`); English and Hungarian words do not join by it.
A neutral test domain (a pet shelter, a city office); no example domain's words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from tests.test_routing_decision_rules import tool
from toolweave.llm import lexical
from toolweave.llm.offline_extract import extract_request
from toolweave.llm.offline_routing import score_tools
from toolweave.tools import text as kit
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search import text as search_text

SHORT_FORMS = [
    ("ulga", "ulgę"),  # a three-letter stem, a Polish letter
    ("nowy", "nowego"),  # a three-letter stem, a two-letter ending
    ("pies", "psa"),  # a fleeting e
    ("sen", "snu"),
    ("pieniądze", "pieniędzy"),  # ą alternates with ę
]


@pytest.mark.parametrize(("a", "b"), SHORT_FORMS)
def test_T10_polish_short_words_match_their_inflected_forms(a: str, b: str) -> None:
    assert lexical.matches(a, b)
    assert lexical.matches(b, a)
    assert lexical.word_matches(a.capitalize(), b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("data", "date"),  # English: one Polish stem "dat", no Polish mark
        ("type", "typo"),
        ("from", "fry"),  # a two-letter core without a fleeting e
        ("age", "ágy"),  # English and Hungarian
        ("zmienić", "zmniejsza"),  # the fleeting e is read only in a word left whole
        ("nowa", "nowy"),  # two forms of four ASCII letters: a stated miss, not a guess
    ],
)
def test_T10_the_polish_core_rule_does_not_join_words_without_a_polish_mark(a: str, b: str) -> None:
    assert not lexical.polish_forms(a, b)


def test_T10_hungarian_forms_match_as_before() -> None:
    assert lexical.matches("díj", "díjat")
    assert lexical.matches("kórház", "kórházban")
    assert not lexical.matches("kert", "kerek")


def test_D9_the_polish_core_keeps_at_least_two_letters() -> None:
    assert kit.polish_core("psa") == kit.polish_core("pies") == "ps"
    assert kit.polish_core("ma") == ""  # one letter is no core


class Trip(BaseModel):
    """A closed set of places, two of one adjective."""

    city: Literal["Nowy Sącz", "Nowy Targ", "Kraków"] | None = None


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("Jadę w delegację do Nowego Sącza", "Nowy Sącz"),
        ("Bilet do Nowego Targu, proszę", "Nowy Targ"),
        ("Jadę do Krakowa", "Kraków"),
    ],
)
def test_T10_a_closed_set_value_is_filled_from_its_polish_genitive(text: str, city: str) -> None:
    assert extract_request(text, Trip) == {"city": city}


def test_T10_routing_matches_a_polish_word_with_a_fleeting_e() -> None:
    tools = [
        tool("shelter", "the user lost a pies"),
        tool("permit", "the user asks about a parking permit"),
    ]
    scores = score_tools("Gdzie szukać psa?", tools)
    assert scores["shelter"].hits
    assert not scores["permit"].hits


def test_D9_keyword_search_finds_a_polish_word_with_an_alternating_vowel(tmp_path: Path) -> None:
    assert "pieniedz" in set(search_text.word_terms("pieniądze")) & set(
        search_text.word_terms("pieniędzy")
    )
    store = SqliteDocumentStore(tmp_path / "urzad.sqlite")
    store.add_document(
        "zasilek", ["# Zasiłek\nWypłata pieniędzy następuje w ciągu 14 dni."], lang="pl"
    )
    store.add_document("paszport", ["# Paszport\nPaszport wydaje urząd wojewódzki."], lang="pl")
    hits = store.search("Kiedy dostanę pieniądze?", limit=1)
    assert [hit.document_id for hit in hits] == ["zasilek"]
