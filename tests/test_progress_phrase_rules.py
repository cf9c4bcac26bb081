"""Progress in words for people (P4): the tool's or domain's phrase, in the user's language.

The stream keeps the code (``text``, P1) for other clients; the CLI and the page
show ``phrase``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from toolweave.cli.render import progress_line
from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, ToolCallContext
from toolweave.tools.progress import ProgressEmitter, phrases_for, plain_words, progress_phrase
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
    assert progress_phrase("t", "CANDIDATE_PAGES", "4", "hu") == "Candidate pages (4)"
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

    assert progress_phrase("docs_search", "FOUND", "16", "pl") == "Znaleziono: 16"
    assert progress_phrase("docs_search", "SEARCHING", None, "hu") == "Keresés a dokumentumokban"
    assert progress_phrase("docs_search", "FOUND", "3", "de") == "Found: 3"  # English else
    domain = {"FOUND": {"pl": "Mamy {detail} fragmentów"}}
    assert progress_phrase("docs_search", "FOUND", "3", "pl", None, domain) == "Mamy 3 fragmentów"
