"""Acquedotto comunale di Valdiponte: an Italian water utility, written from the docs alone.

Seven Italian pages (tariffs, the meter, payment plans, interruptions, new connections,
hours, the leak bonus), four chatbot tools and one tool the chat page runs, and every
sentence the library says to a person in Italian (``texts=``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from toolweave import (
    AiToolRegistry,
    ChatbotTool,
    Domain,
    Plugin,
    SqliteDocumentStore,
    as_chatbot_tools,
    documents_domain,
    ingest,
)

from .tools import DOMAIN, CompilaModuloAllacciamento, acquedotto_tools

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
GOLDEN_FILE = HERE / "golden.jsonl"

SYSTEM_PROMPT = (
    "Sei l'assistente dell'Acquedotto comunale di Valdiponte. Rispondi in italiano, solo "
    "con quello che dicono le fonti, con cifre e orari esatti."
)

# every sentence the library says to a person, in Italian (P4, T10)
TEXTS: dict[str, dict[str, str]] = {
    "no_information": {"it": "Non ho trovato informazioni su questo nelle fonti disponibili."},
    "closest_pages": {"it": "Le pagine più vicine che ho trovato: {pages}"},
    "ask_for_input": {"it": "Quale {field}?"},
    "for_example": {"it": " (per esempio {example})"},
    "clarification_limit": {
        "it": "Mi servono ancora informazioni, ma ho già fatto troppe domande. Riformuli la "
        "richiesta con tutti i dettagli. (Ultima domanda: {question})"
    },
    "cancelled": {"it": "D'accordo, lascio perdere la domanda. In cos'altro posso aiutarla?"},
    "sent_again": {
        "it": "A questo messaggio ho già risposto, e quello che chiedeva è stato fatto allora; "
        "ecco di nuovo la risposta. Non è stato fatto niente una seconda volta."
    },
    "kept_effect": {
        "it": "Fatto prima che la richiesta fosse modificata, e non rifatto: {said} La modifica "
        "non cambia questo."
    },
    "kept_effect_unsaid": {
        "it": "Qualcosa è stato fatto prima che la richiesta fosse modificata ({tool}), e non è "
        "stato rifatto. La modifica non lo cambia."
    },
    "failed_effect": {
        "it": "Questo non è stato fatto: {tool} non è riuscito ({error}). Riprovi, per favore."
    },
    "unsure_effect": {
        "it": "Non so se questo è stato fatto: {tool} non ha ricevuto risposta ({error}). "
        "Lo chieda di nuovo con le stesse parole: sarà la stessa richiesta, non una nuova."
    },
    "done_already": {"it": "Già fatto ({tool}), e non rifatto."},
    "client_only": {
        "it": "Questo si può fare solo nella pagina della chat ({tool}); qui non è stato fatto."
    },
    "still_running": {
        "it": "È ancora in corso: {tool} non ha finito. Mandi di nuovo lo stesso messaggio tra "
        "poco per il risultato."
    },
    "sources": {"it": "Fonti:"},
    "page": {"it": "pag. {pages}"},
    "assistant": {"it": "le risposte vengono da {label}"},
    "offline": {
        "it": "le risposte vengono dal modello offline (nessun LLM: scelta degli strumenti per "
        "parole, risposte estratte dai documenti)"
    },
    "reply_hint": {
        "it": '(risponda con: toolweave ask --thread {thread} --domain {domain}{more} "...")'
    },
    "chat_reply_hint": {
        "it": "(risponda alla domanda, o chieda altro: una nuova domanda avrà la sua risposta)"
    },
    "finishing": {"it": "(conversazione {thread}: finisco la richiesta interrotta: {question})"},
    "finishing_unknown": {"it": "(conversazione {thread}: finisco la richiesta interrotta)"},
    "chat_thread": {
        "it": "conversazione {thread} (per continuarla: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")'
    },
    "chat_leave": {"it": 'scriva "exit" o prema Ctrl-D per uscire'},
    "prompt": {"it": "lei> "},
    "split": {"it": "Ho diviso la domanda in {count} parti"},
    "adjusted": {"it": "Ho riformulato la domanda"},
    "one_more_step": {"it": "Serve ancora un passaggio"},
    "looking_further": {"it": "Cerco ancora: le prime pagine non dicevano tutto"},
    "model_retry": {"it": "Il modello non ha risposto; riprovo"},
    "reply_refused": {
        "it": "(la risposta non è arrivata a {tools}, che aveva chiesto: il suo controllo ha "
        "rifiutato i dati dell'utente arrivati con la risposta (T4). --user-data non viene "
        "mai salvato: lo ripeta a ogni risposta, poi chieda di nuovo)"
    },
}

# words every page holds, and Italian function words: the text kit has no Italian (T10)
STOPWORDS = (
    "acquedotto",
    "valdiponte",
    "il",
    "lo",
    "la",
    "i",
    "gli",
    "le",
    "un",
    "una",
    "uno",
    "di",
    "del",
    "della",
    "dei",
    "delle",
    "al",
    "alla",
    "in",
    "per",
    "con",
    "che",
    "c'è",
    "è",
    "sono",
    "si",
    "mi",
    "ci",
    "quale",
    "quanto",
    "quando",
    "come",
    "dove",
    "chi",
)

# the library's search tools' progress phrases, in Italian (P4: streaming.md, not `texts=`)
PROGRESS_MESSAGES: dict[str, dict[str, str]] = {
    "SEARCHING": {"it": "Cerco nelle pagine dell'acquedotto"},
    "SEARCHING_FOR": {"it": "Cerco nelle pagine: {detail}"},
    "FOUND": {"it": "Passaggi trovati: {detail}"},
    "CANDIDATE_PAGES": {"it": "Pagine che potrebbero dirlo: {detail}"},
    "READING_PAGE": {"it": "Leggo {name} ({n}/{total})"},
    "ANSWER_IN_PAGE": {"it": "{name} ({n}/{total}): c'è la risposta"},
    "NOTHING_NEW": {"it": "{name} ({n}/{total}): niente di nuovo"},
    "NOT_IN_PAGE": {"it": "{name} ({n}/{total}): la risposta non c'è"},
    "NOT_FOUND": {"it": "Nessuna pagina ne parla"},
    "ERROR": {"it": "Qualcosa non ha funzionato"},
}


def ai_tools() -> AiToolRegistry:
    """The tools the chat page runs (W3)."""
    registry = AiToolRegistry()
    registry.register(CompilaModuloAllacciamento())
    return registry


def acquedotto_domain_and_tools(
    base_url: str | None = None, *, store: SqliteDocumentStore | None = None
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The domain over its pages, with the tools; the back end at ``base_url``."""
    if store is None:
        store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
        ingest([PAGES], store, domain=DOMAIN)
    own = [*acquedotto_tools(base_url), *as_chatbot_tools(ai_tools(), domain=DOMAIN)]
    domain, tools = documents_domain(
        DOMAIN,
        store,
        tools=own,
        system_prompt=SYSTEM_PROMPT,
        default_language="it",
        texts=TEXTS,
    )
    return dataclasses.replace(domain, progress_messages=PROGRESS_MESSAGES), tools


def load() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The plugin's loader: built only when asked for."""
    return acquedotto_domain_and_tools()


def plugin() -> Plugin:
    """The entry point ``toolweave.plugins: acquedotto``."""
    return Plugin(
        name=DOMAIN,
        domains={DOMAIN: load},
        ai_tools=tuple(ai_tools()),
        golden_files={DOMAIN: GOLDEN_FILE},
    )
