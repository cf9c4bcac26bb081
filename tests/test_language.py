"""T10: one language detector for the platform's cross-check and the offline model."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from test_normalize_checks import normalized_entry, rewriting

from toolweave import build_graph
from toolweave.llm import lexical
from toolweave.llm.offline import OfflineAssistant
from toolweave.tools import text as kit
from toolweave.tools.language import ENGLISH_WORDS, HUNGARIAN_WORDS, detect_language
from toolweave.tools.search import text as search_text

GREETINGS = [
    ("hello", "en"),
    ("Hello!", "en"),
    ("hi", "en"),
    ("Thanks!", "en"),
    ("Jó napot!", "hu"),
    ("szia", "hu"),
    ("Szia!", "hu"),
    ("köszönöm", "hu"),
    ("helló", "hu"),
]


@pytest.mark.parametrize(("text", "lang"), GREETINGS)
def test_T10_a_greeting_alone_is_detected_confidently(text, lang):
    assert detect_language(text).lang == lang


@pytest.mark.parametrize("text", ["Kardiológia", "112", "Kovács", "ok"])
def test_T10_one_word_that_is_no_greeting_stays_unsure(text):
    assert detect_language(text).lang is None


@pytest.mark.parametrize(("text", "lang"), GREETINGS)
def test_T10_offline_model_answers_a_greeting_in_its_language(text, lang):
    other = "hu" if lang == "en" else "en"
    normalized = OfflineAssistant().normalize(text, [], default_lang=other)
    assert normalized.user_lang == lang
    assert normalized.prompt_type == "smalltalk"


def test_T10_one_word_hello_overrides_a_hungarian_tag():
    graph = build_graph("d", [], assistant=rewriting("hu"))
    out = graph.invoke({"messages": [HumanMessage("hello")]})
    assert out["answer"] == "answer in en"
    assert "language en by the detector" in normalized_entry(out).reason


@pytest.mark.parametrize(
    "text",
    [
        "What is the wifi password?",
        "Mi a sürgősségi telefonszám?",
        "Mennyibe kerül ma a benzin?",
        "library hours tomorrow",
        "and on Friday?",
        "És pénteken?",
        "Kardiológia",
        "hello",
    ],
)
def test_T10_offline_leaning_agrees_with_the_confident_detector(text):
    guess = detect_language(text)
    for default in ("hu", "en"):
        leaning = lexical.detect_language(text, default=default)
        assert leaning == guess.lang if guess.lang is not None else leaning in {"hu", "en"}


def test_T10_detector_cues_are_the_kits_stop_words_of_one_language():
    assert (kit.STOPWORDS_HU - kit.STOPWORDS_EN) <= HUNGARIAN_WORDS
    assert (kit.STOPWORDS_EN - kit.STOPWORDS_HU) <= ENGLISH_WORDS
    assert {"is"} == HUNGARIAN_WORDS & ENGLISH_WORDS  # Hungarian "is" means "too"


def test_stop_words_are_defined_once_in_the_text_kit():
    assert search_text.STOPWORDS is kit.QUERY_STOPWORDS
    assert lexical.content_words("Could you tell me the pharmacy hours?") == ["pharmacy", "hours"]
    assert kit.QUERY_STOPWORDS - kit.PARTICLES_HU <= kit.STOPWORDS
    assert lexical.is_stopword("Please")
    assert not lexical.is_stopword("parking")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("When are Dr. Dóra Szűcs's office hours?", "en"),  # the name's "ű" was 2 points
        ("Where does Dr. Kőváry see patients on Monday?", "en"),
        ("Mikor rendel Szűcs Dóra?", "hu"),
        ("Szűcs Dóra mikor rendel?", "hu"),  # the first word counts, name or not
        ("Hétfőn van rendelés?", "hu"),
    ],
)
def test_T10_the_hungarian_letters_of_a_name_do_not_outweigh_the_sentence(text, lang):
    """A doctor's Hungarian name in an English question got the answer in Hungarian."""
    assert detect_language(text).lang == lang
