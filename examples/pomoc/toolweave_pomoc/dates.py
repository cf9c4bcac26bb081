"""Dates in the user's words, Polish or English: "8-12 listopada 2027", "24 to 31 December".

Domain code, not the library's: the helpdesk's tools read the dates of a question
with these plain rules (a model-free parser; the offline model fills no dates).
"""

from __future__ import annotations

import datetime as dt
import re

from toolweave import fold

DEFAULT_YEAR = 2027
"""The calendar year the helpdesk's tables cover; a date without a year is in it."""

MONTH_PREFIXES: tuple[tuple[str, int], ...] = (
    ("stycz", 1), ("january", 1), ("jan", 1),
    ("lut", 2), ("february", 2), ("feb", 2),
    ("mar", 3),
    ("kwie", 4), ("april", 4), ("apr", 4),
    ("maj", 5), ("may", 5),
    ("czerw", 6), ("june", 6), ("jun", 6),
    ("lip", 7), ("july", 7), ("jul", 7),
    ("sierp", 8), ("august", 8), ("aug", 8),
    ("wrze", 9), ("september", 9), ("sep", 9),
    ("pazdz", 10), ("october", 10), ("oct", 10),
    ("listopad", 11), ("november", 11), ("nov", 11),
    ("grud", 12), ("december", 12), ("dec", 12),
)  # fmt: skip
"""Folded prefixes of month names in either language (Polish cases included)."""

_DAY_MONTH = re.compile(
    r"\b(\d{1,2})(?:\s*(?:-|–|do|to|until)\s*(\d{1,2}))?\.?\s+([^\W\d_]+)(?:\s+(\d{4}))?",
    re.UNICODE,
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def month_of(word: str) -> int | None:
    """The month a word names ("listopada", "maju", "December"), else ``None``."""
    folded = fold(word)
    for prefix, month in MONTH_PREFIXES:
        if folded.startswith(prefix) and (len(folded) <= len(prefix) + 4 or len(prefix) > 4):
            return month
    return None


def months_in(text: str) -> list[int]:
    """The months a text names, in order, each once."""
    found: list[int] = []
    for word in _WORD.findall(text):
        month = month_of(word)
        if month is not None and month not in found:
            found.append(month)
    return found


def _date(year: str | None, month: int, day: str) -> dt.date | None:
    try:
        return dt.date(int(year) if year else DEFAULT_YEAR, month, int(day))
    except ValueError:
        return None


def dates_in(text: str) -> list[dt.date]:
    """Every date a text names, in order; "8-12 listopada" gives its first and last day.

    Args:
        text: The user's question.

    Returns:
        The dates, a range as its two ends.
    """
    found: list[dt.date] = []
    for year, month, day in _ISO.findall(text):
        found += [d for d in [_date(year, int(month), day)] if d]
    for first, last, word, year in _DAY_MONTH.findall(text):
        month = month_of(word)
        if month is None:
            continue
        found += [d for d in (_date(year, month, first), _date(year, month, last or "")) if d]
    return found


def date_range(text: str) -> tuple[dt.date, dt.date] | None:
    """The period a text asks about: its first and last named date, when they differ."""
    found = dates_in(text)
    if len(found) < 2 or min(found) == max(found):
        return None
    return min(found), max(found)


__all__ = ["DEFAULT_YEAR", "date_range", "dates_in", "month_of", "months_in"]
