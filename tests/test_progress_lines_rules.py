"""P4 on the command line: one progress line per page a search reads, naming the page.

New-user notes 5, item 13: a deep search printed "Reading page (n/6: ...)" for every
page, then "Nothing new: 1/6: Study rooms" for one of them. A search now says what
came of every page it reads (an answer, nothing new, no answer); the stream keeps
every event (P1, P2), and ``toolweave ask`` shows one line per page: its outcome in
the place of its reading (the phrase names the page), or the reading while it lasts.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolweave.cli import main
from toolweave.cli.render import PageReads, person_line
from toolweave.state.events import tool_progress_event


def _progress(event: str, detail: str | None, *, task_no: str = "1.1") -> dict[str, Any]:
    return dict(
        tool_progress_event(
            "docs_context_search", event, task_no=task_no, detail=detail, text="", phrase=""
        )
    )


def _lines(events: list[dict[str, Any]]) -> list[str]:
    pages = PageReads()
    shown = [e for event in events for e in pages.feed(event)] + pages.flush()
    return [line for line in (person_line(e) for e in shown) if line is not None]


def test_P4_a_page_reads_outcome_takes_the_place_of_its_reading_line() -> None:
    events = [
        _progress("CANDIDATE_PAGES", "3"),
        _progress("READING_PAGE", "1/3: Fees"),
        _progress("NOTHING_NEW", "1/3: Fees"),
        _progress("READING_PAGE", "2/3: Rooms"),
        _progress("NOT_IN_PAGE", "2/3: Rooms"),
        _progress("READING_PAGE", "3/3: Events"),
        _progress("ANSWER_IN_PAGE", "3/3: Events"),
        _progress("FOUND", "1"),
    ]
    assert _lines(events) == [
        "· Pages that may say it: 3",
        "· “Fees” (1/3): nothing new there",
        "· “Rooms” (2/3): no answer there",
        "· “Events” (3/3): found an answer",
        "· Passages found: 1",
    ]


def test_P4_a_reading_is_never_dropped_for_another_pages_or_tasks_outcome() -> None:
    events = [
        _progress("READING_PAGE", "1/2: Fees"),
        _progress("NOTHING_NEW", "2/2: Rooms"),  # another page's: both are shown
        _progress("READING_PAGE", "1/2: Fees", task_no="1.2"),
        _progress("NOTHING_NEW", "1/2: Fees", task_no="1.3"),  # another task's
        _progress("READING_PAGE", "2/2: Rooms", task_no="1.2"),  # held to the end: flushed
    ]
    assert _lines(events) == [
        "· Reading “Fees” (1/2)",
        "· “Rooms” (2/2): nothing new there",
        "· Reading “Fees” (1/2)",
        "· “Fees” (1/2): nothing new there",
        "· Reading “Rooms” (2/2)",
    ]


READS = "Mennyibe kerül az éjszakázás a beteg mellett?"
"""A korhaz question whose deep search reads page after page, none of which says it offline."""
FEES = "Mennyi a térítési díj, ha a hozzátartozóm bent alszik?"
"""The korhaz deep example whose full search reads the fee page (the answer)."""


@pytest.mark.usefixtures("offline_cli")
def test_P4_toolweave_ask_shows_one_line_per_page_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--domain", "korhaz", "-v", READS]) == 0
    out = capsys.readouterr().out
    assert "· 1.2 „Térítési díjak” (4/8): nincs benne válasz" in out  # the page, what came of it
    assert "Olvasom: „Térítési díjak” (4/8)" not in out  # ... in one line, not two
    assert "· 1.2 „Szülészet” (3/8): nincs benne válasz" in out
    assert "Olvasom:" not in out  # every page read says what came of it
    pages = [line for line in out.splitlines() if "/8)" in line]
    assert len(pages) == len(set(pages)) >= 3  # each page read, one line each
    # D7: the offline model's reads cost no model call (free_calls): no cap ends them
    assert "Abbahagytam az olvasást: elfogyott a keret" not in out
    assert "Talált szövegrészek: " in out  # what was found, not "Találat: 18"
    assert "Találat:" not in out


def test_P4_the_deep_searchs_line_names_the_piece_it_looks_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two pieces' searches read as two lines, not "Searching the documents" twice."""
    from toolweave.tools.progress import progress_phrase

    assert main(["ask", "--domain", "korhaz", "-v", FEES]) == 0
    out = capsys.readouterr().out
    assert f"· 1.2 Keresés a dokumentumokban: „{FEES}”" in out
    said = [progress_phrase("s", "SEARCHING_FOR", piece, "en") for piece in ("sell", "helmets")]
    assert said == ["Searching the documents for “sell”", "Searching the documents for “helmets”"]


@pytest.mark.slow
@pytest.mark.network
def test_P4_the_chat_page_shows_one_line_per_page_read(
    server_url: str, page: Any, request: pytest.FixtureRequest
) -> None:
    """The page, like the command line: a page read's outcome replaces its reading line."""
    from web_support import ask, check_state, open_page, wait_answer

    open_page(page, f"{server_url}/chat")
    ask(page, FEES)
    wait_answer(page, "6 000 Ft")
    check_state(page, request, "page-reads")
    lines = page.locator(".msg.bot .progress li").all_inner_texts()
    assert "„Térítési díjak” (1/8): van benne válasz" in lines
    assert not [line for line in lines if line.startswith("Olvasom:")]  # each replaced
    assert len([line for line in lines if "(1/8)" in line]) == 1
    (deeper,) = [line for line in lines if line.startswith("Alaposabban keresek:")]
    assert deeper.count(f"“{FEES}”") == 1  # each phrasing once
