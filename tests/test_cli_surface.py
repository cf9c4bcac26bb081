"""What reaches the person at the command line (issue 17 "what reaches the person").

By default ``toolweave ask`` / ``chat`` print what a person asking should see: the
progress phrases (P4), the answer, its sources (R9), a clarification question, in the
question's language; the routing and gatekeeper lines and the task numbers only with
``-v/--verbose`` (or in ``toolweave explain``). An error says what happened in words;
the exception's class only with ``-v`` (X2).
"""

from __future__ import annotations

import io
import re
import sys
from typing import Any

import pytest
from cli_support import run

from toolweave import cli
from toolweave.llm.errors import LlmBrokenReplyError, LlmUnavailableError
from toolweave.state.errors import ToolweaveError

CARDIOLOGY_HU = "Mikor van rendelés a kardiológián?"
VISITING_EN = "When are visiting hours on the surgery ward?"
INTERACTION_EN = "Can I take ibuprofen with warfarin?"
DEVELOPER_LINES = ("routed:", "gatekeeper:", "coordinated by", "(conditional)", "deep search")
TASK_NUMBER = re.compile(r"^· \d+(\.\d+)* ", re.MULTILINE)


pytestmark = pytest.mark.usefixtures("offline_cli")


# --- P4: progress phrases only, by default ---------------------------------------------------


def test_P4_ask_shows_the_progress_phrases_and_no_developer_line_by_default(capsys):
    code, out, err = run(capsys, "ask", CARDIOLOGY_HU)
    assert code == 0, err
    for line in DEVELOPER_LINES:
        assert line not in out
    assert not TASK_NUMBER.search(out)  # "· 1 ..." is a task number: for developers
    lines = out.splitlines()
    assert "· Az osztály adatait nézem" in lines  # the domain's phrase, in Hungarian
    assert "· Keresek a kórház oldalain" in lines
    assert "TOOL_PROGRESS" not in out
    assert "A Kardiológia rendelési ideje" in out


@pytest.mark.parametrize("flag", ["before", "after"])
def test_P4_verbose_shows_routing_gatekeeper_and_task_numbers(capsys, flag):
    argv = ["-v", "ask", CARDIOLOGY_HU] if flag == "before" else ["ask", "--verbose", CARDIOLOGY_HU]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    routed = next(line for line in out.splitlines() if line.startswith("· 1 routed: "))
    assert "department_info" in routed
    assert "· 1 gatekeeper: context sufficient" in out
    assert "· 1 Az osztály adatait nézem" in out


def test_P4_a_phrase_two_subtasks_say_in_a_row_is_shown_once(capsys):
    code, out, err = run(capsys, "ask", INTERACTION_EN)
    assert code == 0, err
    lines = out.splitlines()
    assert lines.count("· Looking up the medicine") == 1  # once, not once per substance
    assert "· Checking how the medicines interact" in lines
    assert lines[1] == "· Split the question into 2 parts"  # the coordinator, in words (C5)
    assert "coordinated by" not in out
    code, out, _ = run(capsys, "ask", "-v", INTERACTION_EN)
    assert "· 1.1 Looking up the medicine" in out  # each subtask's line, with -v
    assert "· 1.2 Looking up the medicine" in out


def test_P4_a_custom_event_is_shown_to_people_only_when_it_carries_a_phrase():
    from toolweave.cli.render import person_line, progress_line

    assert person_line({"type": "routed", "task_no": "1", "tools": ["a"]}) is None
    assert person_line({"type": "gatekeeper", "task_no": "1", "sufficient": True}) is None
    short = {"type": "gatekeeper", "task_no": "1", "sufficient": False, "missing": ["fee?"]}
    assert person_line(short, "hu") == (
        "· Tovább keresek: az első oldalak nem mondtak el mindent"  # D1, as the page says it
    )
    assert person_line({"type": "conditional", "task_no": "1.2", "decision": "skip"}) is None
    unchanged = {"type": "coordinated", "task_no": "1", "changed": [], "subtasks": []}
    assert person_line(unchanged) is None  # C5: a coordinator that changed nothing is no news
    assert person_line({"type": "my_node", "task_no": "1"}) is None  # a raw id: not for people
    assert person_line({"type": "my_node", "phrase": " Checking  stock "}) == "· Checking stock"
    assert person_line({"type": "tool_progress", "tool": "t", "event": "FETCHING_DATA"}) == (
        "· Fetching data"  # an event written before phrases: its name in plain words
    )
    assert progress_line({"type": "my_node", "task_no": "1"}) == "· 1 my_node"  # -v: as before


# --- R9 and the language of the command line's own lines ------------------------------------


def test_R9_sources_follow_the_answer_in_the_questions_language(capsys):
    code, out, err = run(capsys, "ask", VISITING_EN)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("answers come from the offline model")
    heading = lines.index("Sources:")
    assert any("Visiting hours" in line for line in lines[heading + 1 :])
    code, out, err = run(capsys, "ask", CARDIOLOGY_HU)
    lines = out.splitlines()
    assert lines[0].startswith("a válaszokat az offline modell adja")
    assert "Források:" in lines
    assert "Sources:" not in lines


def test_Q2_a_hungarian_question_gets_the_reply_hint_in_hungarian(capsys):
    code, out, err = run(capsys, "ask", "Mikor van rendelés?")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "· Az osztály adatait nézem"
    hint = lines[-1]
    assert hint.startswith("(válaszoljon így: toolweave ask --thread ")
    assert "reply with" not in out
    thread = hint.split("--thread ", 1)[1].split(" ", 1)[0]
    code, out, err = run(capsys, "ask", "--thread", thread, "2")  # the reply, by its number
    assert code == 0, err
    assert "Kardiológia" in out


def test_Q2_chat_speaks_the_domains_language_before_anything_is_asked(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("exit\n"))
    code, out, err = run(capsys, "chat", "--thread", "c-hu")
    assert code == 0, err
    assert out.splitlines()[1:] == [
        'beszélgetés: c-hu (folytatás: toolweave ask --thread c-hu --domain korhaz "...")',
        'kilépés: "exit" vagy Ctrl-D',
        "ön> ",  # the prompt of the message to type
    ]


# --- X2: errors in words, the class only with -v --------------------------------------------


def _broken_reply() -> LlmUnavailableError:
    """The chain a 200 reply with no chat completion makes: the client's bare AssertionError."""
    try:
        try:
            raise AssertionError
        except AssertionError as cause:
            raise LlmBrokenReplyError(
                "the endpoint's HTTP 200 reply is not a chat completion; check the base URL "
                "(AssertionError)"
            ) from cause
    except LlmBrokenReplyError as broken:
        error = LlmUnavailableError(
            f"activation: model unavailable after 1 attempt(s) (LlmBrokenReplyError: {broken})"
        )
        error.__cause__ = broken
        return error


def _failing(error: BaseException) -> Any:
    def command(args: Any, out: Any) -> int:
        raise error

    return command


def test_X2_a_model_error_is_one_line_in_words_without_exception_classes(capsys, monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "domains", _failing(_broken_reply()))
    code, out, err = run(capsys, "domains")
    assert out == ""
    assert code == cli.EXIT_FAILED
    assert err == (
        "toolweave: error: activation: model unavailable after 1 attempt(s) (the endpoint's "
        "HTTP 200 reply is not a chat completion; check the base URL) (run with -v for details)\n"
    )
    assert "Error" not in err


def test_X2_verbose_names_the_error_and_each_cause(capsys, monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "domains", _failing(_broken_reply()))
    code, _, err = run(capsys, "domains", "-v")
    assert code == cli.EXIT_FAILED
    lines = err.splitlines()
    assert lines[0].endswith(
        "(LlmBrokenReplyError: the endpoint's HTTP 200 reply is not a chat completion; check "
        "the base URL (AssertionError)) (LlmUnavailableError)"
    )
    assert lines[1].startswith("toolweave:   caused by toolweave.llm.errors.LlmBrokenReplyError: ")
    assert lines[2] == "toolweave:   caused by AssertionError"


def test_X2_an_error_that_names_no_class_is_printed_as_it_is(capsys, monkeypatch):
    error = ToolweaveError("no conversation is stored under thread 'x'")
    monkeypatch.setitem(cli.COMMANDS, "domains", _failing(error))
    _, _, err = run(capsys, "domains")
    assert err == "toolweave: error: no conversation is stored under thread 'x'\n"  # no hint


def test_X2_an_unexpected_error_says_it_is_a_bug_without_its_class(capsys, monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "domains", _failing(TypeError("'NoneType' is not iterable")))
    code, _, err = run(capsys, "domains")
    assert code == cli.EXIT_FAILED
    assert err == (
        "toolweave: error: unexpected error: 'NoneType' is not iterable; a bug: please report "
        "it (run with -v for details)\n"
    )
