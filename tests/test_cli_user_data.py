"""N3: ``toolweave ask/chat --user-data`` passes the person's data to the gates and tools.

A neutral ``club`` domain has a tool gated on ``user_data`` (T4): it runs only for a
member. The data travels in the run's context: never in a checkpoint, a log line or a
progress event (X4); bad data is refused before anything runs or is stored (X5).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from cli_support import run

from toolweave import ClarifiableTool, EmptyRequest, ToolResult

pytestmark = pytest.mark.usefixtures("offline_cli")

MEMBER_ID = "M-5531-7720"
ACTIVE = "Your membership is active until the end of May."
QUESTION = "Is my membership account active?"
seen: list[Any] = []


def _club_bundle() -> Any:
    from support import make_tool

    from toolweave import Domain

    def account(name: str, ctx: Any) -> ToolResult:
        member = (ctx.user_data or {})["member_id"]
        seen.append(dict(ctx.user_data))
        ctx.progress("FETCHING_DATA", f"account {member}")
        logging.getLogger("toolweave.tests.club").info("looking up %s", member)
        return ToolResult.as_answer(name, ACTIVE)

    member_account = make_tool(
        "member_account",
        domain="club",
        routing="member_account: true when the user asks about their membership account.",
        eligible=lambda data: bool(data and data.get("member_id")),
        result=account,
    )
    return Domain(name="club"), [member_account, BranchHours()]


class BranchHours(ClarifiableTool[EmptyRequest]):
    """Asks which branch, then answers for the member (a round that needs the data again)."""

    name = "branch_hours"
    domain = "club"
    executable_instruction = "branch_hours: true when the user asks when the club is open."

    def execute(self, request: EmptyRequest, ctx: Any) -> ToolResult:
        return ToolResult.clarification(self.name, "Which branch?", ["Central", "East"])

    def execute_with_clarification(self, request: EmptyRequest, ctx: Any, reply: str) -> Any:
        seen.append(dict(ctx.user_data or {}))
        return ToolResult.as_answer(self.name, f"{reply.strip()}: open 9-17 for members.")


@pytest.fixture(autouse=True)
def club(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolweave.domains as domains
    from toolweave import Plugin

    class Point:
        name, value, dist = "club", "club_pkg:plugin", None

        def load(self) -> Plugin:
            return Plugin(name="club", domains={"club": _club_bundle})

    monkeypatch.setattr(domains, "entry_points", lambda *, group: [Point()])
    monkeypatch.setenv("TOOLWEAVE_DOMAIN", "club")
    seen.clear()


def _stored_bytes(data_dir: Path) -> bytes:
    files = sorted(data_dir.glob("toolweave.db*"))
    assert files, "the thread was stored"
    return b"".join(path.read_bytes() for path in files)


def test_N3_user_data_reaches_the_gate_and_the_tool_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "ask", "--json", QUESTION)
    assert code == 0, err
    assert json.loads(out)["answer"] != ACTIVE  # T4: no user data, the tool is not offered
    assert seen == []

    user_data = json.dumps({"member_id": MEMBER_ID})
    code, out, err = run(capsys, "ask", "--user-data", user_data, "--json", QUESTION)
    assert code == 0, err
    assert json.loads(out)["answer"] == ACTIVE
    assert seen == [{"member_id": MEMBER_ID}]


def test_N3_user_data_may_come_from_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "me.json"
    path.write_text(json.dumps({"member_id": MEMBER_ID}), encoding="utf-8")
    code, out, err = run(capsys, "ask", "--user-data", f"@{path}", "--json", QUESTION)
    assert code == 0, err
    assert json.loads(out)["answer"] == ACTIVE


def test_N3_X4_user_data_never_reaches_the_checkpoints_the_logs_or_the_progress_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    user_data = json.dumps({"member_id": MEMBER_ID})
    argv = ["-v", "ask", "--thread", "n3", "--user-data", user_data, QUESTION]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert ACTIVE in out
    assert "account [redacted]" in out  # the progress line, with -v
    assert "looking up [redacted]" in err  # a toolweave log line, with -v
    assert MEMBER_ID not in out + err
    stored = _stored_bytes(tmp_path / "data")
    assert ACTIVE.encode() in stored  # the thread is there ...
    assert MEMBER_ID.encode() not in stored  # ... without the user data
    code, out, _ = run(capsys, "explain", "n3")
    assert code == 0
    assert "member_account: ran" in out
    assert MEMBER_ID not in out


def test_N3_chat_passes_user_data_to_every_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(f"{QUESTION}\nexit\n"))
    user_data = json.dumps({"member_id": MEMBER_ID})
    code, out, err = run(capsys, "chat", "--thread", "n3-chat", "--user-data", user_data)
    assert code == 0, err
    assert ACTIVE in out
    assert seen == [{"member_id": MEMBER_ID}]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('{"member_id": ', "--user-data is not valid JSON (Expecting value at line 1"),
        ("member_id=M-1", "--user-data is not valid JSON"),
        ('["M-1"]', "--user-data must be a JSON object, not an array"),
        ('"M-1"', "--user-data must be a JSON object, not a string"),
        ("12.5", "--user-data must be a JSON object, not a number"),
        ("@/nonexistent/me.json", "--user-data: cannot read /nonexistent/me.json"),
        ('{"member_no": 123456789012345678901234567890}', "'user_data'"),
    ],
)
def test_N3_X5_bad_user_data_is_a_usage_error_and_nothing_is_stored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str, words: str
) -> None:
    code, out, err = run(capsys, "ask", "--thread", "bad", "--user-data", value, QUESTION)
    assert (code, out) == (2, "")
    assert err.startswith(f"toolweave: error: {words}" if words[0] == "-" else "toolweave: error: ")
    assert words in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert not list((tmp_path / "data").glob("toolweave.db*"))  # nothing stored
    assert seen == []


def test_N3_X5_bad_user_data_on_a_reply_leaves_the_paused_thread_answerable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_data = json.dumps({"member_id": MEMBER_ID})
    argv = ["ask", "--thread", "paused", "--user-data", user_data]
    code, out, err = run(capsys, *argv, "When is the club open?")
    assert code == 0, err
    assert "Which branch?" in out
    code, out, err = run(capsys, "ask", "--thread", "paused", "--user-data", "{oops", "East")
    assert (code, out) == (2, "")
    assert "--user-data is not valid JSON" in err
    code, out, _ = run(capsys, "explain", "paused")
    assert "status: waiting for a reply: Which branch?" in out.splitlines()  # still paused
    code, out, err = run(capsys, *argv, "--json", "East")
    assert code == 0, err
    assert json.loads(out)["answer"] == "East: open 9-17 for members."
    assert seen == [{"member_id": MEMBER_ID}]  # the reply's run got the data again
