"""The null-safe progress emitter (P1-P3), its phrases for people (P4) and the run's sink (X6)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.config import get_stream_writer

from toolweave.state.events import tool_progress_event
from toolweave.state.run_scope import progress_sink
from toolweave.state.secrets import redact
from toolweave.tools.texts import text_for

logger = logging.getLogger(__name__)

StreamWriter = Callable[[Any], None]

ProgressMessages = Mapping[str, Mapping[str, str]]
"""Phrases for progress events (P4): ``EVENT`` or ``"tool:EVENT"`` → language → phrase."""

PhraseFn = Callable[[str, str | None], str]
"""The phrase of ``(event, detail)`` for one tool call, in the user's language."""

# fmt: off
LIBRARY_MESSAGES: ProgressMessages = {
    "SEARCHING": {"en": "Searching the documents", "hu": "Keresés a dokumentumokban",
                  "pl": "Szukam w dokumentach"},
    "SEARCHING_FOR": {"en": "Searching the documents for “{detail}”",
                      "hu": "Keresés a dokumentumokban: „{detail}”",
                      "pl": "Szukam w dokumentach: „{detail}”"},
    "FOUND": {"en": "Passages found: {detail}", "hu": "Talált szövegrészek: {detail}",
              "pl": "Znalezione fragmenty: {detail}"},
    "CANDIDATE_PAGES": {"en": "Pages that may say it: {detail}",
                        "hu": "Lehetséges oldalak: {detail}", "pl": "Możliwe strony: {detail}"},
    "SCANNING_DOMAIN": {"en": "Looking through every page", "hu": "Minden oldalt átnézek",
                        "pl": "Przeglądam wszystkie strony"},
    "READING_PAGE": {"en": "Reading “{name}” ({n}/{total})",
                     "hu": "Olvasom: „{name}” ({n}/{total})",
                     "pl": "Czytam: „{name}” ({n}/{total})"},
    "NOTHING_NEW": {"en": "“{name}” ({n}/{total}): nothing new there",
                    "hu": "„{name}” ({n}/{total}): nincs benne új",
                    "pl": "„{name}” ({n}/{total}): nic nowego"},
    "NOT_IN_PAGE": {"en": "“{name}” ({n}/{total}): no answer there",
                    "hu": "„{name}” ({n}/{total}): nincs benne válasz",
                    "pl": "„{name}” ({n}/{total}): brak odpowiedzi"},
    "ANSWER_IN_PAGE": {"en": "“{name}” ({n}/{total}): found an answer",
                       "hu": "„{name}” ({n}/{total}): van benne válasz",
                       "pl": "„{name}” ({n}/{total}): jest odpowiedź"},
    "BUDGET_SPENT": {"en": "Stopped reading: the reading budget is spent",
                     "hu": "Abbahagytam az olvasást: elfogyott a keret",
                     "pl": "Koniec czytania: limit wyczerpany"},
    "NOT_FOUND": {"en": "No page is about it", "hu": "Nem találtam róla oldalt",
                  "pl": "Brak strony na ten temat"},
    "TOO_MANY_PAGES": {"en": "Too many pages to read: taking the best sentences",
                       "hu": "Túl sok oldal: a legjobb mondatokat veszem",
                       "pl": "Za dużo stron: biorę najlepsze zdania"},
    "NOT_READ": {"en": "Taking the best sentences, without reading the pages",
                 "hu": "A legjobb mondatokat veszem, az oldalak elolvasása nélkül",
                 "pl": "Biorę najlepsze zdania, bez czytania stron"},
    "ERROR": {"en": "A step did not work; answering from what was found",
              "hu": "Egy lépés nem sikerült; a megtalált adatokból válaszolok",
              "pl": "Jeden krok się nie powiódł; odpowiedź opiera się na tym, co znaleziono"},
}
# fmt: on
"""The library's own phrases (search tools' events, ``ERROR``), after the tool's and domain's."""

PHRASE_LANGUAGES = ("en", "hu", "pl")
"""The languages of :data:`LIBRARY_MESSAGES` (any other gets English)."""

PAGE_DETAIL = re.compile(
    r"(?P<n>\d+)/(?P<total>\d+): (?P<name>.+?)(?: \(p\. (?P<page>\d+)\))?", re.DOTALL
)
"""A page read's detail, ``"3/6: Study rooms (p. 2)"``: ``{n}``, ``{total}``, ``{name}``."""

_PLACEHOLDER = re.compile(r"\{(detail|n|total|name)\}")


def plain_words(event: str) -> str:
    """The fallback phrase of an event name: ``"FETCHING_DATA"`` → ``"Fetching data"`` (P4)."""
    flat = " ".join(event.replace("_", " ").replace("-", " ").split()).lower()
    return flat[:1].upper() + flat[1:]


def progress_phrase(
    tool: str, event: str, detail: str | None, lang: str, *catalogs: ProgressMessages | None
) -> str:
    """The phrase for people of one progress event (P4), from the first catalog that fills it.

    The tool's and the domain's catalogs come first, unless neither says the event in the
    person's language and the library does: then the library's phrase, as the library's
    sentences are looked up (``text_for``), so a domain that gives its search phrases in its
    own language only still shows an English question's search lines in English.
    """
    keys = (f"{tool}:{event}", event)
    own = [catalog for catalog in catalogs if catalog]
    if not _speaks(own, keys, lang) and _speaks([LIBRARY_MESSAGES], keys, lang):
        own = []
    for catalog in (*own, LIBRARY_MESSAGES):
        for key in keys:
            phrases = catalog.get(key)
            if phrases:
                phrase = phrases.get(lang) or phrases.get("en") or next(iter(phrases.values()))
                filled = fill_phrase(phrase, detail, lang)
                if filled is not None:
                    return filled
    return plain_words(event) + (f" ({detail})" if detail else "")


def _speaks(catalogs: Sequence[ProgressMessages], keys: Sequence[str], lang: str) -> bool:
    """Whether one of ``catalogs`` says one of ``keys`` in ``lang`` (P4)."""
    return any(lang in (catalog.get(key) or {}) for catalog in catalogs for key in keys)


def fill_phrase(phrase: str, detail: str | None, lang: str = "en") -> str | None:
    """``phrase`` with its placeholders filled from ``detail``, or ``None`` if it cannot be."""
    read = PAGE_DETAIL.fullmatch(detail or "")
    parts = {k: v for k, v in (read.groupdict() if read else {}).items() if v is not None}
    if "page" in parts:
        label = text_for("page", lang, pages=parts.pop("page"))
        parts["name"] = f"{parts['name']}, {label}"
    values = {"detail": detail or "", **parts}
    if any(key not in values for key in _PLACEHOLDER.findall(phrase)):
        return None
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], phrase).strip()


def phrases_for(tool: str, lang: str, *catalogs: ProgressMessages | None) -> PhraseFn:
    """The :data:`PhraseFn` of one tool call: ``tool``'s events in ``lang`` from ``catalogs``."""
    return lambda event, detail: progress_phrase(tool, event, detail, lang, *catalogs)


def stream_sink(event: Any) -> None:
    """Write ``event`` to the custom stream of the LangGraph task running now (P2), if any."""
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # not inside a LangGraph run
        return
    writer(event)


def progress_text(tool_name: str, event: str) -> str:
    """The client-facing form of a progress event (P1): ``TOOL_PROGRESS:<TOOL>:<EVENT>``."""
    return f"TOOL_PROGRESS:{tool_name.upper()}:{event}"


class ProgressEmitter:
    """Sends a tool's progress events, redacted (X4), to ``writer`` or the run's sink (P2, P3)."""

    __slots__ = ("_say", "_task_no", "_tool_name", "_writer")

    def __init__(
        self,
        tool_name: str,
        writer: StreamWriter | None = None,
        *,
        task_no: str | None = None,
        say: PhraseFn | None = None,
    ) -> None:
        self._tool_name = tool_name
        self._writer = writer
        self._task_no = task_no
        self._say = say or phrases_for(tool_name, "en")

    def __call__(self, event: str, detail: str | None = None) -> None:
        """Emit ``event`` (upper-case by convention, e.g. ``"FETCHING_DATA"``)."""
        writer = self._writer or progress_sink()
        if writer is None:
            return
        event = redact(event)
        detail = None if detail is None else redact(detail)
        payload = tool_progress_event(
            self._tool_name,
            event,
            task_no=self._task_no,
            detail=detail,
            text=progress_text(self._tool_name, event),
            phrase=redact(self._say(event, detail)),
        )
        try:
            writer(payload)
        except Exception:  # P3: a listener's failure must never fail the tool
            logger.warning("progress listener failed for %s", payload["text"], exc_info=True)


def tool_progress_emitter(
    tool_name: str, writer: StreamWriter | None = None, *, task_no: str | None = None
) -> ProgressEmitter:
    """Seed-style factory for :class:`ProgressEmitter` (``toolProgressEmitter``)."""
    return ProgressEmitter(tool_name, writer, task_no=task_no)
