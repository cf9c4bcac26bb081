"""What the hospital's tools are doing, said to people in Hungarian and English (P4).

The domain's ``progress_messages``: the CLI and the chat page show these phrases
instead of the events' codes (``TOOL_PROGRESS:KORHAZ_SEARCH:SEARCHING``), which
stay in the stream for other clients.
"""

from __future__ import annotations

from toolweave.tools.progress import ProgressMessages

PROGRESS_MESSAGES: ProgressMessages = {
    "department_info:FETCHING_DATA": {
        "hu": "Az osztály adatait nézem",
        "en": "Looking up the department",
    },
    "emergency_numbers:FETCHING_DATA": {
        "hu": "A sürgősségi számokat nézem",
        "en": "Looking up the emergency numbers",
    },
    "doctor_directory:FETCHING_DATA": {
        "hu": "Az orvosok névsorában keresek",
        "en": "Searching the list of doctors",
    },
    "doctor_directory:FOUND": {"hu": "Találatok: {detail}", "en": "Doctors found: {detail}"},
    "LOOKING_UP": {"hu": "A gyógyszer adatait nézem", "en": "Looking up the medicine"},
    "CHECKING": {
        "hu": "A gyógyszerek kölcsönhatását ellenőrzöm",
        "en": "Checking how the medicines interact",
    },
    "RECORDING": {"hu": "Rögzítem a visszahívási kérést", "en": "Recording the call-back request"},
    "SEARCHING": {"hu": "Keresek a kórház oldalain", "en": "Searching the hospital's pages"},
    "CANDIDATE_PAGES": {"hu": "Átnézendő oldalak: {detail}", "en": "Pages to look at: {detail}"},
    "SCANNING_DOMAIN": {"hu": "Minden oldalt átnézek", "en": "Looking through every page"},
    "READING_PAGE": {"hu": "Olvasom: {detail}", "en": "Reading {detail}"},
    "BUDGET_SPENT": {"hu": "Elég oldalt olvastam", "en": "Read enough pages"},
    "FOUND": {"hu": "Találat: {detail}", "en": "Found: {detail}"},
    "NOT_FOUND": {"hu": "Nem találtam róla oldalt", "en": "No page about it"},
    "NOT_READ": {"hu": "Túl sok oldal, nem olvastam el", "en": "Too many pages to read"},
    "TOO_MANY_PAGES": {"hu": "Túl sok oldal, nem olvastam el", "en": "Too many pages to read"},
}
"""Keyed by ``"tool:EVENT"`` where one tool says it its own way, else by ``"EVENT"``."""
