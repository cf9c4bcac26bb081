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
}
"""Keyed by ``"tool:EVENT"`` where one tool says it its own way, else by ``"EVENT"``.

The search events the library already says in Hungarian and English (what was found,
the pages to read, each page read and what came of it) are left to its phrases."""
