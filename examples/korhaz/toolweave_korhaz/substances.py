"""The substance table behind ``substance_lookup``: names, brands, interaction classes.

``data/substances.json`` lists active substances with their English and
Hungarian names, brand names and aliases, interaction classes and a short
description; group aliases ("blood thinner", "vérhígító") name every substance
of a class. Names are matched on case- and diacritic-folded words, and a text
word matches a name word it starts with (at most a few letters more), so
Hungarian inflected forms resolve (``ibuprofent``, ``warfarinnal``, ``Algoflexet``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from toolweave.tools.search.text import fold

_PACKAGE = "toolweave_korhaz"
_TOKEN = re.compile(r"\w+")
_MIN_PREFIX = 4
"""Name words shorter than this must match exactly (``H`` in ``Enap-H``)."""
_MAX_SUFFIX = 4
"""Most letters an inflected form may add to a name word (``-nal``, ``-mmal``, ``-ját``)."""


@cache
def bundled_json(name: str) -> Any:
    """A parsed JSON file from the korhaz ``data/`` directory (cached; do not mutate)."""
    path = resources.files(_PACKAGE).joinpath("data", name)
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Substance:
    """One active substance (or fixed combination) of the bundled table."""

    id: str
    name_en: str
    name_hu: str
    aliases: tuple[str, ...]
    classes: tuple[str, ...]
    about_en: str
    about_hu: str

    def name(self, lang: str) -> str:
        """The generic name in ``lang`` (Hungarian for ``"hu"``, else English)."""
        return self.name_hu if lang == "hu" else self.name_en

    def about(self, lang: str) -> str:
        """The short description in ``lang``."""
        return self.about_hu if lang == "hu" else self.about_en

    def label(self, lang: str) -> str:
        """The name with its first brand name, e.g. ``"warfarin (Marfarin)"``."""
        brand = next((a for a in self.aliases if a[:1].isupper()), None)
        return f"{self.name(lang)} ({brand})" if brand else self.name(lang)


@dataclass(frozen=True)
class Mention:
    """A place in a text naming one substance, or several when the name is ambiguous."""

    surface: str
    """The words as written in the text, e.g. ``"ibuprofent"``."""
    candidates: tuple[Substance, ...]
    """The substances the words may mean, in table order."""

    @property
    def ambiguous(self) -> bool:
        """Whether the words fit more than one substance."""
        return len(self.candidates) > 1


@cache
def substances() -> tuple[Substance, ...]:
    """Every substance of ``data/substances.json``, in table order."""
    return tuple(
        Substance(
            id=raw["id"],
            name_en=raw["name_en"],
            name_hu=raw["name_hu"],
            aliases=tuple(raw["aliases"]),
            classes=tuple(raw["classes"]),
            about_en=raw["about_en"],
            about_hu=raw["about_hu"],
        )
        for raw in bundled_json("substances.json")["substances"]
    )


def substance_by_id(substance_id: str) -> Substance | None:
    """The substance with this id, or ``None``."""
    return next((s for s in substances() if s.id == substance_id), None)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(text)]


@cache
def _name_index() -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
    """Every name, alias and group alias as folded words → the substance ids it names."""
    index: dict[tuple[str, ...], set[str]] = {}
    for sub in substances():
        for name in (sub.name_en, sub.name_hu, *sub.aliases):
            index.setdefault(tuple(t for t, _, _ in _tokens(name)), set()).add(sub.id)
    for group in bundled_json("substances.json")["groups"]:
        members = {s.id for s in substances() if group["class"] in s.classes}
        for alias in group["aliases"]:
            index.setdefault(tuple(t for t, _, _ in _tokens(alias)), set()).update(members)
    return tuple((words, frozenset(ids)) for words, ids in index.items() if words)


def _word_matches(text_word: str, name_word: str) -> bool:
    if len(name_word) < _MIN_PREFIX:
        return text_word == name_word
    return text_word.startswith(name_word) and len(text_word) - len(name_word) <= _MAX_SUFFIX


def find_mentions(text: str) -> list[Mention]:
    """The substances ``text`` names, in order of mention (the longest name wins at a place).

    A repeated name is reported once; two different names of one substance
    (``Advil`` and ``ibuprofen``) are two mentions.
    """
    tokens = _tokens(text)
    found: list[Mention] = []
    seen: set[str] = set()
    i = 0
    ids: set[str]
    while i < len(tokens):
        best, ids = 0, set()
        for words, named in _name_index():
            span = len(words)
            window = [t for t, _, _ in tokens[i : i + span]]
            if span < best or len(window) < span:
                continue
            if all(_word_matches(t, n) for t, n in zip(window, words, strict=True)):
                ids = set(named) if span > best else ids | named
                best = span
        if not best:
            i += 1
            continue
        surface = text[tokens[i][1] : tokens[i + best - 1][2]]
        if fold(surface) not in seen:
            seen.add(fold(surface))
            candidates = tuple(s for s in substances() if s.id in ids)
            found.append(Mention(surface=surface, candidates=candidates))
        i += best
    return found


def choose_candidate(reply: str, candidates: Sequence[Substance]) -> Substance | None:
    """The substance a clarification reply picks: a choice number, a label or a name.

    A reply naming exactly one known substance outside ``candidates`` is taken
    as the user's correction. ``None`` when the reply picks nothing or is still ambiguous.
    """
    text = reply.strip()
    if text.isdigit() and 1 <= int(text) <= len(candidates):
        return candidates[int(text) - 1]
    folded = fold(text)
    for candidate in candidates:
        if folded in {fold(candidate.label(lang)) for lang in ("en", "hu")}:
            return candidate
    named = [c for m in find_mentions(text) for c in m.candidates]
    picked = [c for c in candidates if c in named]
    if len(picked) == 1:
        return picked[0]
    unique = {c.id: c for c in named}
    return next(iter(unique.values())) if not picked and len(unique) == 1 else None


__all__ = [
    "Mention",
    "Substance",
    "bundled_json",
    "choose_candidate",
    "find_mentions",
    "substance_by_id",
    "substances",
]
