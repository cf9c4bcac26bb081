"""Polish in the text kit: detection (T10), stop words, stems (D9) and the library's texts.

A neutral Polish test domain, a city office ("urząd"), with two short documents; no
example domain's words. The detector's Hungarian and English verdicts stay as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from support import ask

from toolweave import LIBRARY_TEXTS, OfflineAssistant, build_graph
from toolweave.cli.render import source_lines
from toolweave.domains.documents import documents_domain
from toolweave.evaluation import says_no_information
from toolweave.llm import lexical
from toolweave.llm.offline import normalize_offline
from toolweave.llm.prompts import no_information_answer
from toolweave.tools import text as kit
from toolweave.tools.language import (
    ENGLISH_WORDS,
    HUNGARIAN_WORDS,
    OTHER_LANGUAGE_WORDS,
    POLISH_WORDS,
    detect_language,
)
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search import text as search_text
from toolweave.tools.texts import text_for

POLISH = [
    "Jaki jest numer wewnętrzny do działu kadr?",  # "do" is English too
    "Ile trwa okres próbny?",  # "ó" is Hungarian too
    "Ile kosztuje nowy dowód osobisty?",
    "Gdzie mogę złożyć wniosek o paszport?",
    "Kiedy jest otwarty urząd w sobotę?",
    "Czy to jest bezpłatne?",
    "Kto wydaje zaświadczenie o zameldowaniu?",
    "Nie pamiętam hasła.",
    "Dzień dobry!",
    "cześć",
]

UNCHANGED = [  # the verdicts before Polish was known
    ("What is the wifi password?", "en"),
    ("Where does Dr. Kőváry see patients on Monday?", "en"),
    ("When are Dr. Dóra Szűcs's office hours?", "en"),
    ("How much does a new passport cost?", "en"),
    ("Thanks!", "en"),
    ("Mi a sürgősségi telefonszám?", "hu"),
    ("Mennyibe kerül ma a benzin?", "hu"),
    ("Mikor rendel Szűcs Dóra?", "hu"),
    ("Hétfőn van rendelés?", "hu"),
    ("És pénteken?", "hu"),
    ("Hol lehet parkolni a kórház mellett?", "hu"),
    ("szia", "hu"),
    ("Kardiológia", None),
    ("Kovács", None),
]


@pytest.mark.parametrize("text", POLISH)
def test_T10_polish_questions_are_detected_as_polish(text: str) -> None:
    guess = detect_language(text)
    assert guess.lang == "pl"
    assert guess.leaning("en") == "pl"


@pytest.mark.parametrize(("text", "lang"), UNCHANGED)
def test_T10_hungarian_and_english_verdicts_stay_as_they_were(text: str, lang: str | None) -> None:
    guess = detect_language(text)
    assert guess.lang == lang
    assert guess.polish == 0


def test_T10_a_polish_name_in_an_english_question_does_not_make_it_polish() -> None:
    guess = detect_language("Is the Łódź office open on Monday?")
    assert guess.lang == "en"
    assert guess.polish > 0  # the letters count, but once: a capitalised word may be a name


def test_T10_words_polish_shares_with_english_or_hungarian_are_no_evidence() -> None:
    assert not POLISH_WORDS & (HUNGARIAN_WORDS | ENGLISH_WORDS)
    assert not {"do", "to", "a", "i", "mi", "te", "co", "na", "ma"} & POLISH_WORDS
    assert {"jest", "czy", "ile", "kto", "gdzie", "kiedy", "się", "nie", "dla"} <= POLISH_WORDS
    assert detect_language("Do it today").polish == 0


def test_T10_the_offline_model_reads_a_polish_question_as_polish() -> None:
    for default in ("en", "hu"):
        normalized = OfflineAssistant().normalize(
            "Ile trwa okres próbny?", [], default_lang=default
        )
        assert normalized.user_lang == "pl"
    assert lexical.detect_language("Kto wydaje zaświadczenie?", default="hu") == "pl"


def test_T10_a_polish_greeting_alone_is_smalltalk_in_polish() -> None:
    normalized = OfflineAssistant().normalize("Cześć!", [], default_lang="en")
    assert (normalized.user_lang, normalized.prompt_type) == ("pl", "smalltalk")


@pytest.mark.parametrize("word", ["ile", "kto", "jak", "czy", "gdzie", "się", "jest", "dla"])
def test_T12_polish_function_words_are_query_stop_words(word: str) -> None:
    assert word in kit.QUERY_STOPWORDS
    assert word in kit.STOPWORDS
    assert search_text.content_words(f"{word.capitalize()} kosztuje paszport?") == [
        "kosztuje",
        "paszport",
    ]


def test_T5_polish_question_words_are_no_routing_evidence() -> None:
    assert lexical.content_words("Kto wydaje zaświadczenie i ile to kosztuje?") == [
        "wydaje",
        "zaświadczenie",
        "kosztuje",
    ]


@pytest.mark.parametrize("word", ["ale", "bez", "tej", "ten", "pan", "ma"])
def test_G1_polish_stop_words_leave_english_and_hungarian_content_words(word: str) -> None:
    """ "tej" is Hungarian milk, "pan" an English pan, "ma" Hungarian today."""
    assert word not in kit.QUERY_STOPWORDS
    assert word not in kit.STOPWORDS


@pytest.mark.parametrize(
    ("a", "b"),
    [("latach", "lat"), ("fakturę", "faktury"), ("umowy", "umowę"), ("dowodu", "dowód")],
)
def test_D9_polish_inflected_forms_share_a_stem(a: str, b: str) -> None:
    assert kit.stem(a, "pl") == kit.stem(b, "pl")
    assert set(kit.stems(a)) & set(kit.stems(b))  # a query of unknown language too
    assert lexical.related(a, b)


def test_D9_a_polish_document_is_indexed_with_polish_stems_only() -> None:
    terms = search_text.index_terms("umowach", "pl").split()
    assert terms == ["umowach", kit.stem("umowach", "pl")]
    assert kit.stem("umowach", "pl") in search_text.word_terms("umowę")


def _office(tmp_path: Path) -> SqliteDocumentStore:
    store = SqliteDocumentStore(tmp_path / "urzad.sqlite")
    store.add_document(
        "dowod",
        [
            "# Dowód osobisty\nWydanie dowodu osobistego jest bezpłatne.",
            "Dowód osobisty jest ważny przez 10 lat.",
        ],
        name="Dowód osobisty",
        url="https://urzad.example.pl/dowod",
        lang="pl",
    )
    store.add_document(
        "umowy",
        ["# Umowy najmu\nUmowę najmu lokalu komunalnego podpisuje się w pokoju 12."],
        name="Umowy najmu",
        lang="pl",
    )
    return store


def test_D9_a_polish_query_finds_a_sentence_with_another_form_of_its_word(
    tmp_path: Path,
) -> None:
    hits = _office(tmp_path).search("W jakich umowach?", limit=1)  # the page says "Umowę"
    assert [hit.document_id for hit in hits] == ["umowy"]


def test_R9_a_polish_question_gets_the_fact_with_polish_sources(tmp_path: Path) -> None:
    domain, tools = documents_domain("urzad", _office(tmp_path))
    graph = build_graph(domain, tools, assistant=OfflineAssistant())
    out = ask(graph, "Po ilu latach trzeba wymienić dowód osobisty?")
    assert "10 lat" in out["answer"]
    lines = source_lines(out["sources"], "pl")
    assert lines[0] == "Źródła:"
    assert lines[1].endswith("Dowód osobisty, s. 2 — https://urzad.example.pl/dowod")


def test_R9_a_polish_question_the_documents_do_not_cover_is_told_so_in_polish(
    tmp_path: Path,
) -> None:
    domain, tools = documents_domain("urzad", _office(tmp_path))
    graph = build_graph(domain, tools, assistant=OfflineAssistant())
    out = ask(graph, "Ile kosztuje nowy paszport?")
    assert out["answer"] == no_information_answer("pl")
    assert says_no_information(out["answer"])
    assert out["sources"] == []


def test_R9_the_librarys_own_texts_have_polish_and_english_for_the_rest() -> None:
    assert no_information_answer("pl").startswith("Nie znaleziono informacji")
    assert no_information_answer("xx") == no_information_answer("en")
    assert all({"en", "hu", "pl"} <= set(by_lang) for by_lang in LIBRARY_TEXTS.values())
    assert text_for("offline", "pl").startswith("odpowiedzi podaje model offline")
    assert source_lines([{"document_id": "a", "name": "A", "pages": [1]}], "xx")[0] == "Sources:"


@pytest.mark.parametrize("message", ["A gdzie jest parking?", "Kiedy jest otwarta recepcja?"])
def test_A1_a_polish_question_with_its_own_question_word_stands_alone(message: str) -> None:
    """Polish question words are question words: the message is no follow-up to extend."""
    history = [HumanMessage("Ile kosztuje obiad w stołówce?"), AIMessage("Obiad kosztuje 18 zł.")]
    assert normalize_offline(message, history, default_lang="pl").question == message


def test_T5_polish_generic_words_alone_are_weak_evidence() -> None:
    """ "nowy" (new), "roku" (of the year), "dni" (days) say how or when, not what about."""
    assert all(lexical.is_generic(w) for w in ("nowy", "roku", "dni", "wziąć", "dwa"))
    assert not any(lexical.is_generic(w) for w in ("paszport", "dowód", "parking"))


def test_R9_a_polish_question_beside_the_fact_gets_it_or_a_polish_no_information(
    tmp_path: Path,
) -> None:
    """The page says the card is free, not what it costs: either reading is Polish."""
    domain, tools = documents_domain("urzad", _office(tmp_path))
    graph = build_graph(domain, tools, assistant=OfflineAssistant())
    out = ask(graph, "Ile kosztuje nowy dowód osobisty?")
    answer = out["answer"]
    assert answer == no_information_answer("pl") or "jest bezpłatne" in answer
    if out["sources"]:
        assert source_lines(out["sources"], "pl")[0] == "Źródła:"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Bitte buchen Sie mir einen Termin für einen Reisepass.", "de"),  # "ü": no Hungarian
        ("Gibt es im Rathaus ein Schwimmbad?", "de"),  # "im": no Polish
        ("Wie lange ist ein Reisepass gültig?", "de"),
        ("Où est le service de cardiologie?", "fr"),  # "é": no Hungarian
        ("¿Dónde está la cardiología?", "es"),
    ],
)
def test_T10_a_message_in_a_language_without_a_kit_is_that_language(text: str, lang: str) -> None:
    """Not Hungarian or Polish for a shared accent or word: its own code, texts in English."""
    assert detect_language(text).lang == lang


@pytest.mark.parametrize(
    "text",
    [
        "How much does a ticket to the Musée du Louvre cost?",  # French in a name: English
        "Is the Haus der Kunst open on Sunday?",
        "Can I take the bus to the Puerta del Sol from the station?",
    ],
)
def test_T10_a_foreign_name_in_an_english_question_keeps_it_english(text: str) -> None:
    assert detect_language(text).lang == "en"


def test_T10_other_languages_function_words_are_no_kits_stop_words() -> None:
    kits = HUNGARIAN_WORDS | ENGLISH_WORDS | POLISH_WORDS
    for code, listed in OTHER_LANGUAGE_WORDS.items():
        assert not listed & kits, code
    assert "im" not in OTHER_LANGUAGE_WORDS["de"]  # a Polish word too: no German evidence


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("Quiero reservar una pista de pádel.", "es"),  # "de" and "á": Hungarian too
        ("¿Cuál es el horario de las pistas?", "es"),
        ("Où est la salle de réunion?", "fr"),
        ("Mikor van nyitva a gyógyszertár és a büfé?", "hu"),  # a kit's language as before
        ("Rue de la Paix", None),
    ],
)
def test_T10_a_word_or_accent_another_language_writes_too_is_no_kit_evidence(
    message: str, lang: str | None
) -> None:
    """Found by the fifteenth new user: Spanish with "de" and "pádel" was read as Hungarian."""
    assert detect_language(message).lang == lang
