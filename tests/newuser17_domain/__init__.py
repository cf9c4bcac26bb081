"""A French veterinary clinic, "Clinique vétérinaire des Tilleuls" (the seventeenth new
user's domain, written from the README and the docs alone; a test domain, not shipped)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from toolweave import ChatbotTool, Domain, Plugin, SqliteDocumentStore, documents_domain, ingest

from .tools import DOMAIN, own_tools

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
GOLDEN = HERE / "golden.jsonl"

STOPWORDS = [
    "le",
    "la",
    "les",
    "l",
    "un",
    "une",
    "des",
    "de",
    "du",
    "d",
    "au",
    "aux",
    "à",
    "a",
    "et",
    "ou",
    "en",
    "dans",
    "sur",
    "pour",
    "par",
    "avec",
    "sans",
    "je",
    "j",
    "me",
    "m",
    "moi",
    "tu",
    "te",
    "vous",
    "nous",
    "il",
    "elle",
    "ils",
    "elles",
    "on",
    "se",
    "s",
    "y",
    "ce",
    "cet",
    "cette",
    "ces",
    "c",
    "ça",
    "mon",
    "ma",
    "mes",
    "ton",
    "ta",
    "tes",
    "son",
    "sa",
    "ses",
    "notre",
    "nos",
    "votre",
    "vos",
    "leur",
    "leurs",
    "qui",
    "que",
    "qu",
    "quoi",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "est",
    "sont",
    "être",
    "ai",
    "as",
    "avez",
    "avons",
    "ont",
    "suis",
    "es",
    "été",
    "fait",
    "faites",
    "peut",
    "peux",
    "pouvez",
    "puis-je",
    "ne",
    "n",
    "pas",
    "plus",
    "est-ce",
    "comment",
    "combien",
    "quand",
    "où",
    "si",
    "oui",
    "non",
    "bonjour",
    "merci",
    "svp",
    "s'il",
    "plait",
    "il-vous-plaît",
    "clinique",
    "vétérinaire",
]

SYSTEM_PROMPT = (
    "Tu es l'assistant de la Clinique vétérinaire des Tilleuls. Réponds en français, "
    "brièvement, uniquement d'après le contexte."
)

TEXTS: dict[str, dict[str, str]] = {
    "no_information": {"fr": "Je n'ai trouvé aucune information à ce sujet dans nos pages."},
    "closest_pages": {"fr": "Les pages les plus proches : {pages}"},
    "ask_for_input": {"fr": "Quel {field} ?"},
    "for_example": {"fr": " (par exemple {example})"},
    "clarification_limit": {
        "fr": "Il me manque encore des informations, mais j'ai déjà posé trop de questions. "
        "Reposez votre demande avec tous les détails. (Dernière question : {question})"
    },
    "cancelled": {"fr": "D'accord, j'abandonne cette question. Que puis-je faire d'autre ?"},
    "sent_again": {
        "fr": "Ce message a déjà reçu une réponse, et ce qu'il demandait a été fait ; voici "
        "cette réponse à nouveau. Rien n'a été fait une seconde fois."
    },
    "kept_effect": {
        "fr": "Fait avant la modification de la demande, et pas refait : {said} "
        "La modification n'y change rien."
    },
    "kept_effect_unsaid": {
        "fr": "Une action a été faite avant la modification de la demande ({tool}), et pas "
        "refaite. La modification n'y change rien."
    },
    "failed_effect": {
        "fr": "Cela n'a pas été fait : {tool} a échoué ({error}). Redemandez, s'il vous plaît."
    },
    "unsure_effect": {
        "fr": "Je ne sais pas si cela a été fait : {tool} n'a pas eu de réponse ({error}). "
        "Redemandez avec les mêmes mots : ce sera la même demande, pas une nouvelle."
    },
    "done_already": {"fr": "Déjà fait ({tool}), et pas refait."},
    "client_only": {
        "fr": "Cela ne peut se faire que dans la page de chat ({tool}) ; rien n'a été fait ici."
    },
    "still_running": {
        "fr": "C'est en cours : {tool} n'a pas encore fini. Renvoyez le même message dans "
        "un instant pour avoir le résultat."
    },
    "sources": {"fr": "Sources :"},
    "page": {"fr": "p. {pages}"},
    "assistant": {"fr": "réponses de {label}"},
    "offline": {
        "fr": "réponses du modèle hors ligne (pas de LLM : routage lexical, réponses extraites)"
    },
    "reply_hint": {
        "fr": '(répondez avec : toolweave ask --thread {thread} --domain {domain}{more} "...")'
    },
    "chat_reply_hint": {"fr": "(répondez-y, ou posez une autre question)"},
    "finishing": {"fr": "(fil {thread} : je termine la demande interrompue : {question})"},
    "finishing_unknown": {"fr": "(fil {thread} : je termine la demande interrompue)"},
    "chat_thread": {
        "fr": "conversation {thread} (continuez avec : toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")'
    },
    "chat_leave": {"fr": 'tapez "exit" ou Ctrl-D pour quitter'},
    "prompt": {"fr": "vous> "},
    "split": {"fr": "Question découpée en {count} parties"},
    "adjusted": {"fr": "Question reformulée"},
    "one_more_step": {"fr": "Encore une étape"},
    "looking_further": {"fr": "Je cherche plus loin : les premières pages ne disaient pas tout"},
    "model_retry": {"fr": "Le modèle n'a pas répondu ; nouvel essai"},
    "reply_refused": {
        "fr": "(la réponse n'a pas atteint {tools}, qui avait posé la question : son contrôle "
        "a refusé les données de cette réponse (T4). --user-data n'est jamais conservé : "
        "donnez-le à chaque réponse, puis redemandez)"
    },
}

PROGRESS_MESSAGES: dict[str, dict[str, str]] = {
    "SEARCHING": {"fr": "Je cherche dans les pages de la clinique"},
    "FOUND": {"fr": "Passages trouvés : {detail}"},
    "NOT_FOUND": {"fr": "Rien trouvé dans les pages"},
    "ERROR": {"fr": "Une étape n'a pas abouti ; je réponds avec ce que j'ai trouvé"},
}


def clinique_store(path: str | Path = ":memory:") -> SqliteDocumentStore:
    store = SqliteDocumentStore(path, stopwords=STOPWORDS, embeddings=None)
    ingest([PAGES], store, domain=DOMAIN)
    return store


def clinique_domain_and_tools(
    store: SqliteDocumentStore | None = None,
) -> tuple[Domain, list[ChatbotTool[Any]]]:
    domain, tools = documents_domain(
        DOMAIN,
        store or clinique_store(),
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="fr",
        texts=TEXTS,
    )
    return dataclasses.replace(domain, progress_messages=PROGRESS_MESSAGES), tools


def plugin() -> Plugin:
    return Plugin(
        name=DOMAIN,
        domains={DOMAIN: clinique_domain_and_tools},
        golden_files={DOMAIN: GOLDEN},
    )
