"""One text kit (tools/text.py) for search and the offline model; domain words are configuration."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from toolweave.llm import lexical, offline_reading
from toolweave.tools import text as kit
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.search.text import STOPWORDS, parse_query, word_terms

ROOT = Path(__file__).resolve().parents[1]
HOSPITAL_WORDS = re.compile(r"kórház|korhaz|hospital", re.IGNORECASE)


def test_search_and_offline_model_share_words_folding_and_stems():
    text = "Kardiológián, a Kórház_Parkolóban: 2 óra!"
    assert lexical.words(text) == kit.words(text) == [
        "kardiológián", "a", "kórház", "parkolóban", "2", "óra",
    ]  # fmt: skip
    assert lexical.fold("Kórház") == kit.fold("Kórház") == "korhaz"
    for word in ("kardiológián", "parkolóban", "parking"):
        assert lexical.stem(word) in {*word_terms(word), kit.stem(kit.stem(word, "hu"), "en")}
        assert kit.stem(word, "hu") in word_terms(word)


def test_offline_model_matches_inflected_forms_through_snowball_stems():
    assert lexical.related("kardiológia", "kardiológián")
    assert lexical.related("parking", "parked")
    assert not lexical.related("parking", "pharmacy")


def test_one_sentence_rule_for_search_and_offline_reading():
    passage = (
        "# Doctors\n## Cardiology\n1. A főorvos dr. Kovács Péter. Az osztály a 2. emeleten van.\n"
        "- Mr. Smith arrived. Did he?"
    )
    expected = [  # D9: a list item under a section heading begins with it
        "Cardiology: A főorvos dr. Kovács Péter.",
        "Az osztály a 2. emeleten van.",
        "Cardiology: Mr. Smith arrived.",
        "Did he?",
    ]
    assert kit.split_sentences(passage) == expected
    read = offline_reading.passage_sentences(passage)
    assert [s.text for s in read] == expected
    assert read[0].heading_words == ("doctors", "cardiology")


def _code_strings(path: Path) -> set[str]:
    """String constants of a module that are not docstrings (documentation may give examples)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documentation = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documentation
    }


def test_no_domain_words_in_library_code():
    for folder in ("state", "tools", "llm", "coordinators", "graph"):
        for path in (ROOT / folder).rglob("*.py"):
            found = {s for s in _code_strings(path) if HOSPITAL_WORDS.search(s)}
            assert not found, f"{path.relative_to(ROOT)} hard-codes domain words {sorted(found)}"
    assert not {w for w in STOPWORDS if HOSPITAL_WORDS.search(w)}


def test_a_domain_passes_its_own_stop_words_to_its_store():
    docs = ("A kórház parkolója a Fő utcán van.", "A kórház büféje reggel nyit.")
    plain = SqliteDocumentStore()
    configured = SqliteDocumentStore(stopwords=["kórház"])
    for store in (plain, configured):
        for number, text in enumerate(docs):
            store.add_document(f"d{number}", text, lang="hu")
    assert len(parse_query("kórház parkoló").words) == 2
    # with the domain's stop word only "parkoló" selects: the buffet sentence no longer matches
    assert {d.document_id for d in plain.search("kórház parkoló")} == {"d0", "d1"}
    assert {d.document_id for d in configured.search("kórház parkoló")} == {"d0"}
    assert {d.document_id for d in configured.copy().search("kórház parkoló")} == {"d0"}
