"""The department registry behind ``department_info``: lookup by (inflected) name, answer sentences.

Names are matched on case- and diacritic-folded words, and a word matches a
name word it starts with, so Hungarian inflected forms resolve
(``kardiológián``, ``kardiológiára`` -> Kardiológia).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

from toolweave.tools.search.text import fold, words
from toolweave_korhaz.corpus import departments_data

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Topic = Literal["consultation_hours", "visiting_hours", "phone", "location", "head"]
WEEKDAYS: tuple[Weekday, ...] = get_args(Weekday)
TOPICS: tuple[Topic, ...] = get_args(Topic)

_MIN_PREFIX = 4
"""Name words shorter than this must match exactly (``SBO``, ``lab``)."""
_MAX_SUFFIX = 8
"""Most characters an inflected form may add to a name word (``-jában``, ``-ról``)."""

_DAY_WORDS: dict[Weekday, tuple[str, ...]] = {
    "monday": ("hetfo", "monday", "mon"),
    "tuesday": ("kedd", "tuesday", "tue"),
    "wednesday": ("szerda", "wednesday", "wed"),
    "thursday": ("csutortok", "thursday", "thu"),
    "friday": ("pentek", "friday", "fri"),
    "saturday": ("szombat", "saturday", "sat"),
    "sunday": ("vasarnap", "sunday", "sun"),
}
_TOPIC_WORDS: dict[Topic, tuple[str, ...]] = {
    "consultation_hours": ("rendel", "consult", "office", "open", "nyitva", "idopont"),
    "visiting_hours": ("latogat", "visit"),
    "phone": ("telefon", "phone", "call", "hivhat", "hivni", "number"),
    "location": ("hol", "where", "emelet", "floor", "epulet", "building", "merre", "locat"),
    "head": ("vezet", "foorvos", "head", "chief", "director"),
}
_ASKING_WORDS = ("rendel", "consult")
"""Words that ask for consultation hours, which only a department has (visiting rules
are also hospital-wide: the documents answer a visiting question that names no ward)."""
_DEPARTMENT_WORDS = ("osztaly", "department", "ward", "foorvos", "physician")
"""Words that make a phone, location or head question one about a department."""
_PERSON_WORDS = ("dr", "doktor", "doktorno", "doctor", "szakorvos", "specialist")
"""Words that make a question one about a doctor, not a department (``doctor_finder``, or
the guest specialists' page: "Hol rendel az endokrinológus vendég szakorvos?"), in any
form."""
_DAY_HU = ("hétfő", "kedd", "szerda", "csütörtök", "péntek", "szombat", "vasárnap")
_DAY_HU_ON = ("hétfőn", "kedden", "szerdán", "csütörtökön", "pénteken", "szombaton", "vasárnap")


@dataclass(frozen=True)
class Department:
    """One department of ``data/departments.json``."""

    id: str
    name_hu: str
    name_en: str
    aliases: tuple[str, ...]
    building: str
    floor: int
    floor_hu: str
    floor_en: str
    phone: str
    consultation_hours: Mapping[str, str | None]
    visiting_hours: Mapping[str, str] | None
    head: str

    @property
    def names(self) -> tuple[str, ...]:
        """Official names in both languages, then the aliases."""
        return (self.name_hu, self.name_en, *self.aliases)

    def name(self, lang: str) -> str:
        """The name in ``lang`` (Hungarian for ``"hu"``, English otherwise)."""
        return self.name_hu if lang == "hu" else self.name_en


def _department(raw: Mapping[str, Any]) -> Department:
    floor = int(raw["floor"])
    ordinal = {1: "st", 2: "nd", 3: "rd"}.get(floor, "th")
    return Department(
        id=raw["id"],
        name_hu=raw["name_hu"],
        name_en=raw["name_en"],
        aliases=tuple(raw.get("aliases", ())),
        building=raw["building"],
        floor=floor,
        floor_hu=raw.get("floor_hu") or f"{floor}. emelet",
        floor_en=raw.get("floor_en") or f"{floor}{ordinal} floor",
        phone=raw["phone"],
        consultation_hours=dict(raw["consultation_hours"]),
        visiting_hours=raw.get("visiting_hours"),
        head=raw["head"],
    )


@cache
def departments() -> tuple[Department, ...]:
    """All departments of the bundled registry (parsed once per process)."""
    return tuple(_department(raw) for raw in departments_data()["departments"])


@cache
def known_department_names() -> tuple[str, ...]:
    """Every official name and alias, for the request model's examples (T6)."""
    return tuple(name for dept in departments() for name in dept.names)


def _word_matches(text_word: str, name_word: str) -> bool:
    if len(name_word) < _MIN_PREFIX:
        return text_word == name_word
    return text_word.startswith(name_word) and len(text_word) - len(name_word) <= _MAX_SUFFIX


def _find(text_words: list[str], name: str) -> int | None:
    name_words = [fold(w) for w in words(name)]
    span = len(name_words)
    for start in range(len(text_words) - span + 1):
        window = text_words[start : start + span]
        if all(_word_matches(t, n) for t, n in zip(window, name_words, strict=True)):
            return start
    return None


def resolve_departments(text: str) -> list[Department]:
    """The departments named in ``text`` (inflected forms too), in order of mention."""
    text_words = [fold(w) for w in words(text)]
    found: list[tuple[int, int, Department]] = []
    for order, dept in enumerate(departments()):
        positions = [p for p in (_find(text_words, n) for n in dept.names) if p is not None]
        if positions:
            found.append((min(positions), order, dept))
    return [dept for _, _, dept in sorted(found, key=lambda item: (item[0], item[1]))]


_KIN_ENDING = 3
"""Letters two words may differ in at their ends and still be one word's kin
("kardiológus" and "kardiológia", "sebész" and "sebészet")."""


def _kin(first: str, second: str) -> bool:
    shared = next(
        (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
        min(len(first), len(second)),
    )
    return shared >= _MIN_PREFIX and shared >= min(len(first), len(second)) - _KIN_ENDING


def named_as(dept: Department, text: str, lang: str) -> str | None:
    """The other name ``text`` calls ``dept`` by ("szívgyógyászat" for Kardiológia), or ``None``.

    ``None`` when the text uses the name in ``lang`` or a name that shares a word with
    it ("kardiológiai osztály"). A source titled with the user's word says which
    department answered a question that named it otherwise.
    """
    text_words = [fold(w) for w in words(text)]
    if _find(text_words, dept.name(lang)) is not None:
        return None
    own = [fold(w) for w in words(dept.name(lang))]

    def shares_a_word(name: str) -> bool:  # a form of a word of the name, or a kin word
        said = [fold(w) for w in words(name)]
        return any(_kin(w, o) for w in said for o in own)

    for name in dept.names:
        if _find(text_words, name) is not None and not shares_a_word(name):
            return name
    return None


def parse_weekday(value: object) -> Weekday | None:
    """A weekday from an English or Hungarian day name (``"pénteken"`` -> ``"friday"``)."""
    if not isinstance(value, str):
        return None
    for word in (fold(w) for w in words(value)):
        for day, prefixes in _DAY_WORDS.items():
            if any(word == p if len(p) < _MIN_PREFIX else word.startswith(p) for p in prefixes):
                return day
    return None


def infer_topics(text: str) -> set[Topic]:
    """The topics a question asks about, guessed from its words."""
    text_words = [fold(w) for w in words(text)]
    return {
        topic
        for topic, keys in _TOPIC_WORDS.items()
        if any(_word_matches(word, key) for word in text_words for key in keys)
    }


def asks_department_topic(text: str) -> bool:
    """Whether ``text`` asks for something only a department has, without a doctor's name.

    Consultation hours always count; visiting hours, a phone number, location or
    head physician count when the text also speaks of a department or ward
    (``"Mi az osztály telefonszáma?"``), so "Where can I park?" and "How many
    visitors may a patient have?" (the hospital-wide visiting rules) do not.
    """
    text_words = [fold(w) for w in words(text)]
    if any(_word_matches(word, person) for word in text_words for person in _PERSON_WORDS):
        return False

    def has(keys: tuple[str, ...]) -> bool:
        return any(_word_matches(word, key) for word in text_words for key in keys)

    return has(_ASKING_WORDS) or (has(_DEPARTMENT_WORDS) and bool(infer_topics(text)))


def pick_departments(reply: str, choices: tuple[Department, ...]) -> list[Department]:
    """The departments a clarification reply picks: a choice number or (inflected) names.

    ``"2"`` (or ``"2."``) is the second of ``choices``; otherwise every department
    the reply names, in either language. Empty when the reply picks none.
    """
    number = reply.strip().rstrip(".)")
    if number.isdigit():
        index = int(number) - 1
        return [choices[index]] if 0 <= index < len(choices) else []
    return resolve_departments(reply)


def _article(name: str) -> str:
    return "Az" if fold(name[:1]) in "aeiou" else "A"


def _hours_summary(hours: Mapping[str, str | None], lang: str) -> str:
    names = _DAY_HU if lang == "hu" else tuple(d.capitalize() for d in WEEKDAYS)
    if all(hours.get(d) for d in WEEKDAYS) and len({hours[d] for d in WEEKDAYS}) == 1:
        return f"{'minden nap' if lang == 'hu' else 'every day'} {hours['monday']}"
    groups: list[tuple[int, int, str]] = []
    for index, day in enumerate(WEEKDAYS):
        value = hours.get(day)
        if not value:
            continue
        if groups and groups[-1][1] == index - 1 and groups[-1][2] == value:
            groups[-1] = (groups[-1][0], index, value)
        else:
            groups.append((index, index, value))
    if not groups:
        return "nincs rendelés" if lang == "hu" else "none"
    return ", ".join(
        f"{names[a]}-{names[b]} {value}" if b > a else f"{names[a]} {value}"
        for a, b, value in groups
    )


def department_sentences(
    dept: Department, lang: str, day: Weekday | None = None
) -> list[tuple[Topic, int, str]]:
    """Answer sentences about ``dept`` in ``lang``: ``(topic, sentence_number, text)``.

    Every fact is one sentence, so an extractive answer can quote it whole.
    """
    hu = lang == "hu"
    name = dept.name(lang)
    the = _article(name)
    hours = _hours_summary(dept.consultation_hours, lang)
    visiting = None if dept.visiting_hours is None else dept.visiting_hours["hu" if hu else "en"]
    if hu:
        rows: list[tuple[Topic, int, str]] = [
            ("location", 1, f"{the} {name} helye: {dept.building} épület, {dept.floor_hu}."),
            ("phone", 2, f"{the} {name} telefonszáma: {dept.phone}."),
            ("consultation_hours", 3, f"{the} {name} rendelési ideje: {hours}."),
            (
                "visiting_hours",
                4,
                f"{the} {name} látogatási ideje: {visiting}."
                if visiting
                else f"{the} {name} járóbeteg-ellátást végez, ezért nincs látogatási idő.",
            ),
            ("head", 5, f"{the} {name} osztályvezető főorvosa {dept.head}."),
        ]
    else:
        rows = [
            ("location", 1, f"{name} is in Building {dept.building}, {dept.floor_en}."),
            ("phone", 2, f"The phone number of {name} is {dept.phone}."),
            ("consultation_hours", 3, f"Consultation hours of {name}: {hours}."),
            (
                "visiting_hours",
                4,
                f"Visiting hours on the {name} ward: {visiting}."
                if visiting
                else f"{name} has no inpatient ward, so there are no visiting hours.",
            ),
            ("head", 5, f"The head of {name} is {dept.head}."),
        ]
    if day is not None:
        index = WEEKDAYS.index(day)
        value = dept.consultation_hours.get(day)
        if hu:
            text = f"{the} {name} rendelési ideje {_DAY_HU_ON[index]}: {value or 'nincs rendelés'}."
        elif value:
            text = f"On {day.capitalize()} the consultation hours of {name} are {value}."
        else:
            text = f"{name} has no consultation hours on {day.capitalize()}."
        rows.insert(0, ("consultation_hours", 10 + index, text))
    return rows
