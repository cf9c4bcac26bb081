"""Polideportivo Municipal de Villaejemplo: a Spanish domain for toolweave (newuser15)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from toolweave import Domain, Plugin, SqliteDocumentStore, documents_domain, ingest

from .tools import BACKEND, DOMAIN, own_tools

HERE = Path(__file__).parent
PAGES = HERE / "pages"
GOLDEN_FILE = HERE / "golden.jsonl"

# the text kit does not know Spanish (deep-fallback.md, Languages): name its function words
STOPWORDS = [
    "el",
    "la",
    "los",
    "las",
    "un",
    "una",
    "unos",
    "unas",
    "de",
    "del",
    "al",
    "a",
    "en",
    "y",
    "o",
    "que",
    "qué",
    "es",
    "son",
    "se",
    "por",
    "para",
    "con",
    "sin",
    "me",
    "mi",
    "mis",
    "tu",
    "su",
    "sus",
    "lo",
    "le",
    "les",
    "hay",
    "como",
    "cómo",
    "cuál",
    "cuáles",
    "cuándo",
    "dónde",
    "quiero",
    "puedo",
    "pueden",
    "tiene",
    "tienen",
    "este",
    "esta",
    "muy",
    "más",
    "polideportivo",
    "villaejemplo",
]

SYSTEM_PROMPT = (
    "Eres el asistente del Polideportivo Municipal de Villaejemplo. Responde en español."
)

PROGRESS_MESSAGES = {
    "reservar_pista:RESERVANDO": {"es": "Reservando la pista"},
    "tarifas:CALCULANDO": {"es": "Calculando el precio"},
    "SEARCHING": {"es": "Busco en las páginas del polideportivo"},
    "FOUND": {"es": "Fragmentos encontrados: {detail}"},
}

TEXTS = {
    "no_information": {"es": "No he encontrado información sobre esto en las fuentes disponibles."},
    "closest_pages": {"es": "Las páginas más cercanas que he encontrado: {pages}"},
    "ask_for_input": {"es": "¿Qué {field}?"},
    "for_example": {"es": " (por ejemplo {example})"},
    "clarification_limit": {
        "es": "Necesito más información, pero ya he hecho demasiadas preguntas. "
        "Pregunte de nuevo con todos los detalles. (Última pregunta: {question})"
    },
    "cancelled": {"es": "De acuerdo, dejo esa pregunta. ¿En qué más puedo ayudarle?"},
    "sent_again": {
        "es": "Este mensaje ya tuvo respuesta y lo que pedía ya se hizo; aquí está de nuevo "
        "la respuesta. No se ha hecho nada por segunda vez."
    },
    "kept_effect": {
        "es": "Hecho antes de modificar la petición, y no repetido: {said} "
        "La modificación no lo cambia."
    },
    "kept_effect_unsaid": {
        "es": "Algo se hizo antes de modificar la petición ({tool}) y no se ha repetido. "
        "La modificación no lo cambia."
    },
    "failed_effect": {"es": "Esto no se ha hecho: {tool} ha fallado ({error}). Pruebe de nuevo."},
    "done_already": {"es": "Ya está hecho ({tool}) y no se ha repetido."},
    "still_running": {
        "es": "Esto todavía se está haciendo: {tool} no ha terminado. Envíe el mismo "
        "mensaje dentro de un momento para ver el resultado."
    },
    "sources": {"es": "Fuentes:"},
    "page": {"es": "pág. {pages}"},
    "assistant": {"es": "las respuestas las da {label}"},
    "offline": {
        "es": "las respuestas las da el modelo sin conexión (sin LLM: elección de "
        "herramientas por palabras, respuestas extraídas)"
    },
    "reply_hint": {
        "es": '(responda con: toolweave ask --thread {thread} --domain {domain}{more} "...")'
    },
    "chat_reply_hint": {
        "es": "(responda, o pregunte otra cosa: una pregunta nueva tendrá su respuesta)"
    },
    "finishing": {"es": "(conversación {thread}: termino la ejecución interrumpida: {question})"},
    "finishing_unknown": {"es": "(conversación {thread}: termino la ejecución interrumpida)"},
    "chat_thread": {
        "es": "conversación {thread} (continúe con: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")'
    },
    "chat_leave": {"es": 'escriba "exit" o pulse Ctrl-D para salir'},
    "prompt": {"es": "usted> "},
    "split": {"es": "Divido la pregunta en {count} partes"},
    "adjusted": {"es": "He ajustado la pregunta"},
    "one_more_step": {"es": "Hace falta un paso más"},
    "looking_further": {"es": "Busco más: las primeras páginas no lo decían todo"},
    "model_retry": {"es": "El modelo no respondió; lo intento de nuevo"},
    "reply_refused": {
        "es": "(la respuesta no llegó a {tools}, que preguntó: su control rechazó los datos "
        "de usuario de esta respuesta (T4). --user-data nunca se guarda: indíquelo con "
        "cada respuesta y pregunte de nuevo)"
    },
}


def polideportivo_domain_and_tools() -> tuple[Domain, list[Any]]:
    store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    ingest([PAGES], store, domain=DOMAIN)
    domain, tools = documents_domain(
        DOMAIN,
        store,
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="es",
        texts=TEXTS,
    )
    domain = dataclasses.replace(domain, progress_messages=PROGRESS_MESSAGES)
    return domain, tools


def plugin() -> Plugin:
    return Plugin(
        name=DOMAIN,
        domains={DOMAIN: polideportivo_domain_and_tools},
        golden_files={DOMAIN: GOLDEN_FILE},
    )


__all__ = ["BACKEND", "GOLDEN_FILE", "plugin", "polideportivo_domain_and_tools"]
