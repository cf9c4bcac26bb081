"""The 2027 holiday calendar as data: holidays, company days off, working days.

``data/holidays.json`` is the table behind the intranet page "Kalendarz świąt i dni
wolnych 2027"; the calendar tool and the leave planner read it here.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from functools import cache

from toolweave import fold, words
from toolweave_pomoc.corpus import DATA_DIR

WEEKDAYS = {
    "pl": ("poniedziałek", "wtorek", "środa", "czwartek", "piątek", "sobota", "niedziela"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
}
"""Weekday names by language, Monday first."""


@dataclass(frozen=True)
class DayOff:
    """A public holiday or a company day off."""

    date: dt.date
    name: str
    name_en: str
    company: bool = False
    instead_of: dt.date | None = None

    def label(self, lang: str) -> str:
        """``2027-05-27 (czwartek): Boże Ciało`` in the user's language."""
        name = self.name if lang != "en" else self.name_en
        return f"{self.date.isoformat()} ({weekday(self.date, lang)}): {name}"


def weekday(day: dt.date, lang: str) -> str:
    """The weekday's name in Polish, or English for ``lang == "en"``."""
    return WEEKDAYS["en" if lang == "en" else "pl"][day.weekday()]


@cache
def days_off() -> tuple[DayOff, ...]:
    """Every holiday and company day off of the year, by date."""
    data = json.loads((DATA_DIR / "holidays.json").read_text(encoding="utf-8"))
    found = [
        DayOff(dt.date.fromisoformat(h["date"]), h["name"], h["name_en"]) for h in data["holidays"]
    ]
    found += [
        DayOff(
            dt.date.fromisoformat(h["date"]),
            h["name"],
            h["name_en"],
            company=True,
            instead_of=dt.date.fromisoformat(h["instead_of"]),
        )
        for h in data["company_days_off"]
    ]
    return tuple(sorted(found, key=lambda d: d.date))


def day_off(day: dt.date) -> DayOff | None:
    """The holiday or company day off on ``day``, if any."""
    return next((d for d in days_off() if d.date == day), None)


def substitute_for(holiday: DayOff) -> DayOff | None:
    """The company day off given for a holiday that falls on a Saturday."""
    return next((d for d in days_off() if d.instead_of == holiday.date), None)


def is_working_day(day: dt.date) -> bool:
    """Monday to Friday, and neither a holiday nor a company day off."""
    return day.weekday() < 5 and day_off(day) is None


def working_days(first: dt.date, last: dt.date) -> int:
    """How many working days lie from ``first`` to ``last``, both included."""
    count, day = 0, first
    while day <= last:
        count += is_working_day(day)
        day += dt.timedelta(days=1)
    return count


def year_working_days() -> int:
    """Working days in the calendar's year."""
    year = days_off()[0].date.year
    return working_days(dt.date(year, 1, 1), dt.date(year, 12, 31))


def _match(asked: str, own: str) -> int:
    """2 for the same folded word, 1 for a common prefix of five letters, else 0."""
    if asked == own:
        return 2
    return 1 if len(asked) >= 5 and len(own) >= 5 and asked[:5] == own[:5] else 0


def _score(asked: set[str], holiday: DayOff) -> int:
    own = {fold(w) for w in words(f"{holiday.name} {holiday.name_en}") if len(w) >= 3}
    return sum(max((_match(a, o) for o in own), default=0) for a in asked)


def named_in(text: str) -> list[DayOff]:
    """The holidays a text names best ("Boże Ciało", "wigilia", "Easter Monday").

    Each holiday scores 2 for a word of its name written as in the text and 1 for a
    word sharing five first letters ("świąt"); those with the best score win, if it
    holds one whole word ("święta" alone names no one holiday).
    """
    asked = {fold(w) for w in words(text) if len(w) >= 3}
    scored = [(_score(asked, d), d) for d in days_off() if not d.company]
    best = max((score for score, _ in scored), default=0)
    return [d for score, d in scored if score == best] if best >= 2 else []


__all__ = [
    "DayOff",
    "day_off",
    "days_off",
    "is_working_day",
    "named_in",
    "substitute_for",
    "weekday",
    "working_days",
    "year_working_days",
]
