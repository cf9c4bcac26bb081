"""Progress in words for people (P4): the tool's or domain's phrase, in the user's language.

The stream keeps the code (``text``, P1) for other clients; the CLI and the page
show ``phrase``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from toolweave.cli.render import progress_line
from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, ToolCallContext
from toolweave.tools.progress import (
    LIBRARY_MESSAGES,
    PHRASE_LANGUAGES,
    ProgressEmitter,
    fill_phrase,
    phrases_for,
    plain_words,
    progress_phrase,
)
from toolweave_korhaz import korhaz_domain

TOOL_MESSAGES = {"FETCHING_DATA": {"hu": "Nézem az adatokat", "en": "Looking at the data"}}
DOMAIN_MESSAGES = {
    "FETCHING_DATA": {"hu": "domain hu", "en": "domain en"},
    "other:FETCHING_DATA": {"en": "other's own"},
    "FOUND": {"en": "Found {detail} pages"},
}


def test_P4_the_tools_phrase_in_the_users_language_wins_over_the_domains() -> None:
    assert progress_phrase("t", "FETCHING_DATA", None, "hu", TOOL_MESSAGES, DOMAIN_MESSAGES) == (
        "Nézem az adatokat"
    )
    assert progress_phrase("t", "FETCHING_DATA", None, "en", None, DOMAIN_MESSAGES) == "domain en"
    # "tool:EVENT" in the domain's messages beats the plain "EVENT"
    assert progress_phrase("other", "FETCHING_DATA", None, "en", None, DOMAIN_MESSAGES) == (
        "other's own"
    )
    # a language the entry lacks: English, then the entry's first phrase
    assert progress_phrase("other", "FETCHING_DATA", None, "hu", None, DOMAIN_MESSAGES) == (
        "other's own"
    )
    assert progress_phrase("t", "FOUND", "3", "en", DOMAIN_MESSAGES) == "Found 3 pages"


def test_P4_without_a_phrase_the_event_name_is_said_in_plain_words() -> None:
    assert plain_words("FETCHING_DATA") == "Fetching data"
    assert progress_phrase("t", "LOOKING_AROUND", "4", "hu") == "Looking around (4)"
    # a failing step is said without the exception's class name (that is for developers)
    assert "ValueError" not in progress_phrase("t", "ERROR", "ValueError", "en")


class _Tool(ChatbotTool[Any]):
    name = "t"
    progress_messages: ClassVar[Any] = TOOL_MESSAGES

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return None


def test_P4_the_stream_keeps_the_code_and_adds_the_phrase() -> None:
    events: list[Any] = []
    say = phrases_for("t", "hu", _Tool.progress_messages, DOMAIN_MESSAGES)
    ProgressEmitter("t", events.append, task_no="1", say=say)("FETCHING_DATA")
    assert events[0]["text"] == "TOOL_PROGRESS:T:FETCHING_DATA"  # P1, for other clients
    assert events[0]["phrase"] == "Nézem az adatokat"
    assert progress_line(events[0]) == "· 1 Nézem az adatokat"


def test_P4_cli_line_of_an_event_without_a_phrase_is_plain_words_not_the_code() -> None:
    event = {"type": "tool_progress", "tool": "t", "event": "LOOKING_UP", "task_no": "1.2"}
    assert progress_line(event) == "· 1.2 Looking up"


def test_P4_the_hospital_domain_ships_hungarian_and_english_phrases() -> None:
    messages = korhaz_domain().progress_messages
    for key in ("department_info:FETCHING_DATA", "SEARCHING", "LOOKING_UP", "CHECKING"):
        assert set(messages[key]) >= {"hu", "en"}, key
    say = phrases_for("korhaz_search", "en", None, messages)
    assert say("SEARCHING", None) == "Searching the hospital's pages"


def test_P4_the_library_search_events_read_in_each_language_and_a_domain_phrase_wins():
    from toolweave.tools.progress import progress_phrase

    assert progress_phrase("docs_search", "FOUND", "16", "pl") == "Znalezione fragmenty: 16"
    assert progress_phrase("docs_search", "SEARCHING", None, "hu") == "Keresés a dokumentumokban"
    assert progress_phrase("docs_search", "FOUND", "3", "de") == "Passages found: 3"  # English
    domain = {"FOUND": {"pl": "Mamy {detail} fragmentów"}}
    assert progress_phrase("docs_search", "FOUND", "3", "pl", None, domain) == "Mamy 3 fragmentów"


PAGE_READ = "3/6: Study rooms"
"""A page read's detail as the library's searches write it: place, count and page name."""


def test_P4_found_says_what_was_found_in_every_language() -> None:
    """New-user notes 5, item 13: "Found: 11" left the person asking "11 what?"."""
    said = {lang: progress_phrase("docs_search", "FOUND", "11", lang) for lang in PHRASE_LANGUAGES}
    assert said == {
        "en": "Passages found: 11",
        "hu": "Talált szövegrészek: 11",
        "pl": "Znalezione fragmenty: 11",
    }


def test_P4_a_page_read_names_the_page_and_what_came_of_it_in_words() -> None:
    """Not "Reading page (3/6: Study rooms)" nor "Nothing new: 3/6: Study rooms"."""
    assert progress_phrase("s", "READING_PAGE", PAGE_READ, "en") == "Reading “Study rooms” (3/6)"
    assert progress_phrase("s", "NOTHING_NEW", PAGE_READ, "en") == (
        "“Study rooms” (3/6): nothing new there"
    )
    assert progress_phrase("s", "NOT_IN_PAGE", PAGE_READ, "en") == (
        "“Study rooms” (3/6): no answer there"
    )
    assert progress_phrase("s", "ANSWER_IN_PAGE", PAGE_READ, "en") == (
        "“Study rooms” (3/6): found an answer"
    )
    assert progress_phrase("s", "READING_PAGE", PAGE_READ, "hu") == "Olvasom: „Study rooms” (3/6)"
    assert progress_phrase("s", "NOTHING_NEW", PAGE_READ, "pl") == "„Study rooms” (3/6): nic nowego"


@pytest.mark.parametrize("event", sorted(LIBRARY_MESSAGES))
def test_P4_every_library_phrase_is_in_every_language_and_says_only_its_detail(event: str) -> None:
    """Each language the phrases have, each placeholder filled, nothing but the detail (X4).

    A phrase carries no data of its own: what varies between two details is the
    detail's parts, never anything else the event could hold.
    """
    assert set(LIBRARY_MESSAGES[event]) == set(PHRASE_LANGUAGES)
    for lang in PHRASE_LANGUAGES:
        for detail in (PAGE_READ, "7", None):
            phrase = progress_phrase("docs_search", event, detail, lang)
            assert "{" not in phrase, (event, lang, phrase)
            assert "}" not in phrase, (event, lang, phrase)
        one = progress_phrase("docs_search", event, "1/2: Alpha", lang)
        other = progress_phrase("docs_search", event, "1/2: Beta", lang)
        assert one.replace("Alpha", "Beta") == other


def test_P4_a_phrase_whose_page_parts_the_detail_lacks_is_passed_over() -> None:
    """A domain's own READING_PAGE detail that is no page read: its words, not ``{name}``."""
    assert progress_phrase("s", "READING_PAGE", "the index", "en") == "Reading page (the index)"
    domain = {"READING_PAGE": {"en": "Opening {name}"}}
    assert progress_phrase("s", "READING_PAGE", PAGE_READ, "en", domain) == "Opening Study rooms"
    assert progress_phrase("s", "READING_PAGE", "x", "en", domain) == "Reading page (x)"
    assert fill_phrase("{name}", "odd") is None


def test_P4_a_page_of_a_document_of_several_is_named_with_its_page_in_each_language() -> None:
    """Two pages of one document read as two lines naming the same page otherwise."""
    detail = "6/8: Study rooms (p. 2)"
    assert progress_phrase("s", "NOT_IN_PAGE", detail, "en") == (
        "“Study rooms, p. 2” (6/8): no answer there"
    )
    assert progress_phrase("s", "READING_PAGE", detail, "hu") == (
        "Olvasom: „Study rooms, 2. oldal” (6/8)"
    )
    assert (
        progress_phrase("s", "NOTHING_NEW", detail, "pl") == "„Study rooms, s. 2” (6/8): nic nowego"
    )
    # a one-page document's detail has no page: its name alone, as before
    assert progress_phrase("s", "NOT_IN_PAGE", "6/8: Study rooms", "en") == (
        "“Study rooms” (6/8): no answer there"
    )
