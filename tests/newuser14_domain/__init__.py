"""Bürgeramt Musterstadt: a German domain for toolweave (newuser14)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Plugin, SqliteDocumentStore, documents_domain, ingest

from .tools import BOOKINGS, own_tools

HERE = Path(__file__).parent
DATA = HERE / "data"
GOLDEN_FILE = HERE / "golden.jsonl"
DOMAIN = "buergeramt"

# German function words: the text kit does not know German (deep-fallback.md, Languages)
STOPWORDS = [
    "ich",
    "du",
    "sie",
    "wir",
    "ihr",
    "mir",
    "mich",
    "mein",
    "meine",
    "einen",
    "eine",
    "ein",
    "der",
    "die",
    "das",
    "den",
    "dem",
    "des",
    "und",
    "oder",
    "ist",
    "sind",
    "was",
    "wie",
    "wo",
    "wann",
    "wer",
    "welche",
    "welcher",
    "welches",
    "für",
    "mit",
    "von",
    "zu",
    "im",
    "in",
    "am",
    "an",
    "auf",
    "bei",
    "kann",
    "muss",
    "brauche",
    "bitte",
    "es",
    "er",
    "nicht",
    "noch",
    "auch",
    "habe",
    "hat",
    "haben",
    "musterstadt",
    "bürgeramt",
]

SYSTEM_PROMPT = "Du bist der Assistent des Bürgeramts Musterstadt. Antworte auf Deutsch."

PROGRESS_MESSAGES = {
    "SEARCHING": {"de": "Ich durchsuche die Seiten des Bürgeramts"},
    "LOOKING_UP": {"de": "Ich schaue die Unterlagen nach"},
}

TEXTS = {  # the library's own sentences in German (Domain.texts, LIBRARY_TEXTS keys)
    "no_information": {"de": "Dazu habe ich in den verfügbaren Quellen nichts gefunden."},
    "closest_pages": {"de": "Die nächsten Seiten, die ich gefunden habe: {pages}"},
    "sources": {"de": "Quellen:"},
    "page": {"de": "S. {pages}"},
    "offline": {"de": "Antworten gibt das Offline-Modell (ohne LLM)"},
    "assistant": {"de": "Antworten gibt {label}"},
    "reply_hint": {
        "de": '(antworten Sie mit: toolweave ask --thread {thread} --domain {domain}{more} "...")'
    },
    "ask_for_input": {"de": "Welche {field}?"},
    "sent_again": {"de": "Diese Nachricht wurde schon beantwortet; nichts wurde zweimal getan."},
}


def buergeramt_domain_and_tools():  # type: ignore[no-untyped-def]
    import dataclasses

    store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    ingest([str(DATA)], store, domain=DOMAIN)
    domain, tools = documents_domain(
        DOMAIN,
        store,
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="de",
        texts=TEXTS,
    )
    domain = dataclasses.replace(domain, progress_messages=PROGRESS_MESSAGES)
    return domain, tools


def load():  # type: ignore[no-untyped-def]
    return buergeramt_domain_and_tools()


def plugin() -> Plugin:
    return Plugin(name=DOMAIN, domains={DOMAIN: load}, golden_files={DOMAIN: GOLDEN_FILE})


__all__ = ["BOOKINGS", "GOLDEN_FILE", "buergeramt_domain_and_tools", "plugin"]
