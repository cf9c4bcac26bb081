"""P(yes) per tool from the log-probabilities of a routing reply's tokens (T5)."""

from __future__ import annotations

import bisect
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

_YES, _NO = frozenset("{t"), frozenset("fn")
RUN = "run"
"""The key of an entry's yes/no."""


def token_logprobs(message: Any) -> list[Mapping[str, Any]]:
    """The ``logprobs.content`` of a reply or ``include_raw`` dict (``[]`` when it has none)."""
    if isinstance(message, dict):
        message = message.get("raw")
    metadata = getattr(message, "response_metadata", None) or {}
    logprobs = metadata.get("logprobs") if isinstance(metadata, Mapping) else None
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    return [t for t in content or () if isinstance(t, Mapping) and "token" in t]


def _side(text: str) -> bool | None:
    """Whether a value that begins ``text`` says yes (``None``: it does not tell)."""
    head = text[:1].lower()
    return True if head in _YES else False if head in _NO else None


def _squeezed(text: str) -> str:
    return "".join(text.split())


def position_yes(tokens: Sequence[Mapping[str, Any]], starts: list[int], at: int) -> float | None:
    """P(yes) of the value that begins at character ``at`` of the tokens' text."""
    index = bisect.bisect_right(starts, at) - 1
    token = tokens[index]
    before = _squeezed(str(token["token"])[: at - starts[index]])
    mass = {True: 0.0, False: 0.0}
    seen: set[str] = set()
    for alternative in [*(token.get("top_logprobs") or ()), token]:
        text = _squeezed(str(alternative.get("token", "")))
        if text in seen or not text.startswith(before):
            continue
        seen.add(text)
        side = _side(text[len(before) :])
        logprob = alternative.get("logprob")
        if side is not None and isinstance(logprob, int | float):
            mass[side] += math.exp(logprob)
    total = mass[True] + mass[False]
    return mass[True] / total if total > 0 else None


def _members(text: str, at: int) -> Iterator[tuple[str, int, Any]]:
    """``(key, offset of its value, value)`` of each member of the JSON object at ``at``."""
    decoder = json.JSONDecoder()
    at = _skip(text, at + 1)
    while at < len(text) and text[at] != "}":
        key, at = decoder.raw_decode(text, at)
        at = _skip(text, _skip(text, at) + 1)  # past ":"
        value, end = decoder.raw_decode(text, at)
        yield str(key), at, value
        at = _skip(text, end)
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """The offset of the first character from ``at`` on that is no white space."""
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def routing_confidences(message: Any, keys: Sequence[str]) -> dict[str, float]:
    """P(yes) of each of ``keys`` in a routing reply's tokens; empty without log-probabilities."""
    tokens = token_logprobs(message)
    starts = list(itertools.accumulate((len(str(t["token"])) for t in tokens), initial=0))[:-1]
    text = "".join(str(t["token"]) for t in tokens)
    opened = text.find("{")
    if opened < 0:
        return {}
    wanted = set(keys)
    found: dict[str, float] = {}
    try:
        for key, at, value in _members(text, opened):
            if key not in wanted:
                continue
            factors = [position_yes(tokens, starts, at)]
            if isinstance(value, dict):
                factors += [
                    position_yes(tokens, starts, v) for k, v, _ in _members(text, at) if k == RUN
                ]
            known = [f for f in factors if f is not None]
            if known:
                found[key] = math.prod(known)
    except (ValueError, IndexError):  # a cut or malformed reply: what was read before it
        return found
    return found
