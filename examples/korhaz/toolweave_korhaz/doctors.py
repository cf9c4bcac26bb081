"""The doctor directory behind ``doctor_directory``: who works where, and when they see patients.

``data/doctors.json`` is a small staff list (family and given name, department,
room, consultation hours, phone). Doctors are found by the names a text gives
after a title (``dr. Kovács Anna``, ``Dr. Anna Kovács``, ``doktor Kovácsnál``) in
either name order, or by a full name without a title; names match on folded
words, inflected forms included (``Annát``, ``Kovácshoz``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from toolweave.tools.search.text import fold
from toolweave_korhaz.departments import departments
from toolweave_korhaz.substances import bundled_json

_UPPER = "A-ZÁÉÍÓÖŐÚÜŰ"
_TITLED = re.compile(
    rf"(?<!\w)(?:[Dd][Rr]\.?|[Dd]okt[oa]r|[Pp]rof\.?)\s+((?:[{_UPPER}][\w'’-]*\s*){{1,3}})"
)
_TOKEN = re.compile(r"\w+")
_POSSESSIVE = re.compile(r"['’]s?$")
_MAX_SUFFIX = 4
"""Most letters an inflected form may add to a name (``Annához``, ``Kovácsnál``)."""
_TEXTS = {
    "hu": "{name} ({specialty}, {department}). Rendelési idő: {hours}. "
    "Hely: {building} épület, {floor}, {room}. szoba. Telefon: {phone}.",
    "en": "{name} ({specialty}, {department}). Consultation hours: {hours}. "
    "Where: Building {building}, {floor}, room {room}. Phone: {phone}.",
}


@dataclass(frozen=True)
class Doctor:
    """One doctor of the bundled directory."""

    id: str
    family: str
    given: str
    department: str
    specialty_hu: str
    specialty_en: str
    building: str
    floor: int
    room: str
    phone: str
    hours_hu: str
    hours_en: str

    def name(self, lang: str) -> str:
        """``dr. Kovács Anna`` in Hungarian, ``Dr. Anna Kovács`` in English."""
        if lang == "hu":
            return f"dr. {self.family} {self.given}"
        return f"Dr. {self.given} {self.family}"

    def describe(self, lang: str) -> str:
        """One sentence: name, specialty, department, hours, room and phone in ``lang``."""
        dept = next((d for d in departments() if d.id == self.department), None)
        hu = lang == "hu"
        floor = (
            ("földszint" if hu else "ground floor")
            if self.floor == 0
            else (f"{self.floor}. emelet" if hu else f"floor {self.floor}")
        )
        return _TEXTS["hu" if hu else "en"].format(
            name=self.name(lang),
            specialty=self.specialty_hu if hu else self.specialty_en,
            department=dept.name(lang) if dept is not None else self.department,
            hours=self.hours_hu if hu else self.hours_en,
            building=self.building,
            floor=floor,
            room=self.room,
            phone=self.phone,
        )


@dataclass(frozen=True)
class AskedName:
    """A person's name a text asks about."""

    surface: str
    """The name as written, with its title, e.g. ``"dr. Kovács Annát"``."""
    words: tuple[str, ...]
    """Its folded name words, e.g. ``("kovacs", "annat")``."""


@cache
def doctors() -> tuple[Doctor, ...]:
    """Every doctor of ``data/doctors.json``, in file order."""
    return tuple(Doctor(**raw) for raw in bundled_json("doctors.json")["doctors"])


def doctor_by_id(doctor_id: str) -> Doctor | None:
    """The doctor with this id, or ``None``."""
    return next((d for d in doctors() if d.id == doctor_id), None)


def _matches(text_word: str, name_word: str) -> bool:
    return text_word.startswith(name_word) and len(text_word) - len(name_word) <= _MAX_SUFFIX


def _fits(doctor: Doctor, words: tuple[str, ...]) -> bool:
    names = (fold(doctor.family), fold(doctor.given))
    return bool(words) and all(any(_matches(w, n) for n in names) for w in words)


def asked_names(text: str) -> list[AskedName]:
    """Names the text gives after a doctor's title, then directory names given without one."""
    found: list[AskedName] = []
    for match in _TITLED.finditer(text):
        surface = _POSSESSIVE.sub("", text[match.start() : match.end(1)].rstrip())
        words = tuple(fold(w) for w in _TOKEN.findall(match.group(1)) if len(w) > 1)
        if words:
            found.append(AskedName(surface=surface, words=words))
    text_words = [fold(w) for w in _TOKEN.findall(text)]
    for doctor in doctors():
        family, given = fold(doctor.family), fold(doctor.given)
        family_at = [w for w in text_words if _matches(w, family)]
        given_at = [w for w in text_words if _matches(w, given)]
        taken = any(_fits(doctor, name.words) for name in found)
        if family_at and given_at and not taken:
            found.append(AskedName(surface=doctor.name("hu"), words=(family_at[0], given_at[0])))
    return found


def find_doctors(text: str) -> list[Doctor]:
    """The directory's doctors that ``text`` names (every name word must fit), in file order."""
    names = asked_names(text)
    return [d for d in doctors() if any(_fits(d, name.words) for name in names)]


__all__ = ["AskedName", "Doctor", "asked_names", "doctor_by_id", "doctors", "find_doctors"]
