"""The ``toolweave`` command line, in-process through ``main(argv)`` and once as a process."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run

from toolweave.cli.session import DB_NAME, Session
from toolweave.persistence import data_dir
from toolweave_korhaz.examples import EXAMPLE_QUESTIONS

ROOT = Path(__file__).resolve().parents[1]
CORPUS_CACHE = "cache"
CARDIOLOGY = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)


pytestmark = pytest.mark.usefixtures("offline_cli")


def assert_one_line_error(err: str) -> None:
    assert err.startswith("toolweave: error: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_ask_answers_an_example_offline_with_progress_and_sources(capsys):
    code, out, err = run(capsys, "ask", CARDIOLOGY.question)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("a válaszokat az offline modell adja")  # the question's language
    assert "· Az osztály adatait nézem" in lines  # P4: the domain's phrase, in Hungarian
    assert "TOOL_PROGRESS" not in out
    for expected in CARDIOLOGY.expected_substrings:
        assert expected in out
    sources = lines.index("Források:")  # the question is Hungarian: so is the heading
    assert lines[sources + 1].startswith("  [1] ")  # numbered as the answer cites it (R9)
    assert "https://" in out[out.index("\nForrások:") :]
    assert out.count("Források") == 1  # once: the answer text itself embeds no sources
    assert "Sources" not in out
    assert err == ""


def test_ask_json_prints_one_json_object_and_nothing_else(capsys):
    code, out, _ = run(capsys, "ask", "--json", CARDIOLOGY.question)
    assert code == 0
    payload = json.loads(out)
    assert {"answer", "sources", "activated", "llm_calls", "thread_id"} <= payload.keys()
    assert CARDIOLOGY.expected_substrings[0] in payload["answer"]
    assert "1:department_info" in payload["activated"]
    assert payload["sources"]
    assert {"name", "pages", "url"} <= payload["sources"][0].keys()
    assert payload["llm_calls"] >= 1


def test_ask_reads_the_message_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(CARDIOLOGY.question + "\n"))
    code, out, _ = run(capsys, "ask", "--json", "-")
    assert code == 0
    assert CARDIOLOGY.expected_substrings[0] in json.loads(out)["answer"]


def test_ask_without_thread_stores_nothing(capsys, tmp_path):
    code, _, _ = run(capsys, "ask", "--json", CARDIOLOGY.question)
    assert code == 0
    data = tmp_path / "data"
    # only the bundled corpus's index cache may appear (korhaz/corpus.py), no thread store
    assert not data.exists() or {p.name for p in data.iterdir()} == {CORPUS_CACHE}


def test_X1_empty_message_exits_2_with_one_line_and_no_traceback(capsys):
    for message in ("", "   \n\t"):
        code, out, err = run(capsys, "ask", message)
        assert code == 2
        assert out == ""
        assert_one_line_error(err)
        assert "empty" in err


def test_X1_unknown_domain_exits_2_and_names_the_known_ones(capsys):
    code, out, err = run(capsys, "ask", "--domain", "nosuch", "hello")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "nosuch" in err
    assert "korhaz" in err


def test_X1_oversized_message_exits_2(capsys):
    code, out, err = run(capsys, "ask", "x" * 8_001)
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "8000" in err


def test_X1_usage_errors_are_one_line(capsys):
    code, _, err = run(capsys, "ask")
    assert code == 2
    assert_one_line_error(err)
    code, _, err = run(capsys, "frobnicate")
    assert code == 2
    assert_one_line_error(err)


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "explain" in out


def test_ctrl_c_exits_130_quietly(capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Session, "turn", interrupted)
    code, _, err = run(capsys, "ask", CARDIOLOGY.question)
    assert code == 130
    assert err.strip() == ""


def test_tools_lists_the_domain_tools(capsys):
    code, out, _ = run(capsys, "tools", "--domain", "korhaz")
    assert code == 0
    header = out.splitlines()[1]
    for column in ("NAME", "DOMAIN", "SYSTEM", "PRIORITY", "KIND", "TRAITS", "ROUTING QUESTION"):
        assert column in header
    row = next(line for line in out.splitlines() if line.startswith("department_info "))
    assert "korhaz" in row
    assert "tool" in row
    assert "department_info:" in row  # the routing question starts with the name (T5)
    retrieval = next(line for line in out.splitlines() if line.startswith("korhaz_search "))
    assert "default retrieval" in retrieval


def test_domains_lists_korhaz(capsys):
    code, out, _ = run(capsys, "domains")
    assert code == 0
    assert "korhaz" in out.split()


def test_A1_follow_up_on_a_thread_sees_the_earlier_turn(capsys):
    code, _, _ = run(capsys, "ask", "--thread", "t-follow", "--json", "When is cardiology open?")
    assert code == 0
    code, out, _ = run(capsys, "ask", "--thread", "t-follow", "--json", "And on Friday?")
    assert code == 0
    payload = json.loads(out)
    assert payload["thread_id"] == "t-follow"
    assert "cardiology" in payload["answer"].lower()
    assert "1:department_info" in payload["activated"]


def test_L1_explain_prints_the_ledger_tree_of_a_thread(capsys, tmp_path):
    store = tmp_path / "elsewhere"
    code, _, _ = run(capsys, "ask", "--data-dir", str(store), "--thread", "t1", CARDIOLOGY.question)
    assert code == 0
    assert (store / DB_NAME).is_file()
    code, out, err = run(capsys, "explain", "--data-dir", str(store), "t1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "thread t1 (latest message)"
    assert "gates:" in lines
    assert any(line.startswith("  offered: ") and "department_info" in line for line in lines)
    assert "1" in lines  # the root task, not indented
    assert any(line.startswith("  department_info: routed") for line in lines)
    assert any(line.startswith("  korhaz_search: default") for line in lines)
    assert any(line.startswith("  department_info: ran, result context") for line in lines)
    assert any(line.startswith("  answer: generated") for line in lines)
    assert "answer:" in lines
    assert CARDIOLOGY.expected_substrings[0] in out
    # R9: the answer's sentences end with the numbers of the sources listed under them,
    # and the answer entry carries the citation figures
    below = lines[lines.index("answer:") + 1 :]
    assert below[0].endswith("[1]")
    assert "    [1] " in [line[:8] for line in below]  # indented under "answer:"
    assert any("sentences supported, citation precision" in line for line in lines)


def test_L1_explain_tool_option_says_why_a_tool_did_not_run(capsys, tmp_path):
    store = tmp_path / "why"
    code, _, _ = run(capsys, "ask", "--data-dir", str(store), "--thread", "t1", CARDIOLOGY.question)
    assert code == 0
    code, out, err = run(
        capsys, "explain", "--data-dir", str(store), "t1", "--tool", "emergency_numbers"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "thread t1 (latest message), tool emergency_numbers:"
    assert lines[1].startswith("  1: emergency_numbers: declined")  # named, with its own reason
    code, out, _ = run(
        capsys, "explain", "--data-dir", str(store), "t1", "--tool", "callback_request"
    )
    assert code == 0
    assert "callback_request: refused: eligibility" in out  # T4: no phone in user_data
    code, out, _ = run(capsys, "explain", "--data-dir", str(store), "t1")
    declined = next(line for line in out.splitlines() if "declined" in line)
    assert "emergency_numbers" in declined  # the tree's summary line names the tools too


def test_L1_explain_of_an_unknown_thread_exits_2_and_leaves_the_store_alone(capsys, tmp_path):
    store = tmp_path / "data"
    code, out, err = run(capsys, "explain", "t-missing")
    assert code == 2
    assert_one_line_error(err)
    assert not (store / DB_NAME).exists()  # reading never creates the store
    assert run(capsys, "ask", "--thread", "t-known", CARDIOLOGY.question)[0] == 0
    before = sha(store / DB_NAME)
    code, out, err = run(capsys, "explain", "t-missing")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "t-missing" in err
    assert "ask with `--thread ID` to keep it" in err  # what to do (E: errors say what to do)
    assert sha(store / DB_NAME) == before  # read-only: SQLite may only add its -wal/-shm files
    stored = {p.name for p in store.iterdir()}
    assert stored <= {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", CORPUS_CACHE}
    assert run(capsys, "explain", "t-known")[0] == 0


def test_chat_keeps_one_thread_and_exits_on_exit(capsys, monkeypatch):
    script = f"{CARDIOLOGY.question}\n\n   \nAnd on Friday?\nexit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    code, out, err = run(capsys, "chat", "--thread", "t-chat")
    assert code == 0, err
    assert "thread t-chat" in out
    headings = [line for line in out.splitlines() if line in ("Sources:", "Források:")]
    # one list per answered message, in its language; "no information" lists none (R9)
    nothing = out.count("I found no information") + out.count("Nem találtam erről információt")
    assert len(headings) == 2 - nothing
    code, out, _ = run(capsys, "explain", "t-chat")
    assert code == 0
    assert "Friday" in out


def test_chat_ends_cleanly_on_eof_and_prints_a_new_thread_id(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, out, _ = run(capsys, "chat")
    assert code == 0
    thread = out.splitlines()[1].split()[1]
    assert len(thread) == 32


def test_N2_chats_continue_hint_names_the_domain_so_it_runs_with_several_installed(
    capsys, monkeypatch
):
    """The hint's command must run as printed: with two domains installed it needs --domain."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, out, _ = run(capsys, "chat", "--domain", "korhaz")
    assert code == 0
    line = out.splitlines()[1]
    thread = line.split()[1]
    assert f"toolweave ask --thread {thread} --domain korhaz " in line


def test_data_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("TOOLWEAVE_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "toolweave"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_dir() == tmp_path / ".local" / "share" / "toolweave"
    assert data_dir(tmp_path / "x") == tmp_path / "x"


def _subprocess(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolweave", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_X1_exit_codes_of_the_real_process(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["TOOLWEAVE_DATA_DIR"] = str(tmp_path)
    bad = _subprocess("ask", "  ", env=env)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert_one_line_error(bad.stderr)
    good = _subprocess("ask", "--json", CARDIOLOGY.question, env=env)
    assert good.returncode == 0, good.stderr
    assert CARDIOLOGY.expected_substrings[0] in json.loads(good.stdout)["answer"]
    unknown = _subprocess("explain", "nobody", env=env)
    assert unknown.returncode == 2
    assert_one_line_error(unknown.stderr)


def test_X4_a_failing_model_call_never_prints_the_key(capsys, monkeypatch):
    secret = "sk-toolweave-test-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    code, out, err = run(capsys, "ask", "--json", CARDIOLOGY.question)
    assert code == 1
    assert out == ""
    assert_one_line_error(err)
    assert secret not in out + err
    assert secret[-8:] not in out + err


class FakeEntryPoint:
    """Stands in for an installed plugin's ``importlib.metadata.EntryPoint``."""

    def __init__(self, name: str, loader) -> None:
        self.name, self.value, self._loader = name, f"plugin_pkg:{name}", loader

    def load(self):
        return self._loader


def _library_bundle():
    from support import make_tool

    from toolweave import Domain, ToolResult

    hours = make_tool(
        "opening_hours",
        domain="library",
        routing="opening_hours: true when the user asks when the library is open.",
        result=lambda name, ctx: ToolResult.as_answer(name, "Open 9-17 (plugin)."),
    )
    return Domain(name="library"), [hours]


def _broken_bundle():
    raise RuntimeError("cannot reach the catalogue")


@pytest.fixture
def plugins(monkeypatch):
    import toolweave.domains as domains
    from toolweave import Plugin
    from toolweave.tools.plugins import PLUGIN_GROUP
    from toolweave_korhaz.plugin import plugin as korhaz_plugin

    def provides(name, loader):
        return FakeEntryPoint(name, lambda: Plugin(name=name, domains={name: loader}))

    points = [
        provides("library", _library_bundle),
        provides("broken", _broken_bundle),
        provides("wrong", lambda: "not a bundle"),
        FakeEntryPoint("korhaz", korhaz_plugin),  # the example package, a plugin like any
    ]

    def entry_points(*, group):
        assert group == PLUGIN_GROUP  # the one group (issue 16 item 5)
        return points

    monkeypatch.setattr(domains, "entry_points", entry_points)


@pytest.mark.usefixtures("plugins")
def test_W5_domains_from_entry_point_plugins_are_listed_and_used(capsys):
    from toolweave.domains import available_domains, load_domain

    assert available_domains() == ["broken", "korhaz", "library", "wrong"]
    assert load_domain("korhaz")[0].name == "korhaz"
    code, out, _ = run(capsys, "tools", "--domain", "library")
    assert code == 0
    assert any(line.startswith("opening_hours ") for line in out.splitlines())
    code, out, _ = run(capsys, "ask", "--domain", "library", "--json", "When are you open?")
    assert code == 0
    assert json.loads(out)["answer"] == "Open 9-17 (plugin)."


@pytest.mark.usefixtures("plugins")
def test_X1_a_broken_domain_plugin_is_a_one_line_error(capsys):
    for name, words in (("broken", "cannot reach the catalogue"), ("wrong", "(Domain, tools)")):
        code, out, err = run(capsys, "tools", "--domain", name)
        assert code == 2
        assert out == ""
        assert_one_line_error(err)
        assert words in err


def test_P1_progress_lines_for_every_event_type():
    from toolweave.cli.render import progress_line

    assert (
        progress_line(
            {
                "type": "tool_progress",
                "tool": "department_info",
                "event": "FETCHING_DATA",
                "task_no": "1",
                "detail": None,
                "text": "TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA",
                "phrase": "Az osztály adatait nézem",
            }
        )
        == "· 1 Az osztály adatait nézem"  # P4: the phrase, not the code
    )
    assert progress_line({"type": "routed", "task_no": "1", "tools": ["a", "b"]}) == (
        "· 1 routed: a, b"
    )
    assert progress_line({"type": "routed", "task_no": "1.1", "tools": []}) == (
        "· 1.1 routed: no tool"
    )
    assert progress_line(
        {
            "type": "coordinated",
            "task_no": "1",
            "coordinators": ["c", "d"],
            "changed": ["c"],
            "subtasks": ["1.1", "1.2"],
        }
    ) == ("· 1 coordinated by c → subtasks 1.1, 1.2")
    assert progress_line({"type": "conditional", "task_no": "1.2", "decision": "skip"}) == (
        "· 1.2 skipped (conditional)"
    )
    assert progress_line({"type": "conditional", "task_no": "1.2", "decision": "run"}) == (
        "· 1.2 runs (conditional)"
    )
    assert progress_line("not a dict") is None


def test_L1_ledger_tree_indents_subtasks_by_depth():
    from toolweave import LedgerEntry, LedgerKind
    from toolweave.cli.render import ledger_tree

    entries = [
        LedgerEntry(kind=LedgerKind.GATE, tool="x", verdict="refused: system", reason="why"),
        LedgerEntry(kind=LedgerKind.COORDINATOR_RUN, task_no="1", tool="c", verdict="changed"),
        LedgerEntry(kind=LedgerKind.FORCED, task_no="1.1", tool="g", verdict="forced"),
        LedgerEntry(kind=LedgerKind.TOOL_ERROR, task_no="1.1.1", tool="g", verdict="failed"),
        LedgerEntry(
            kind=LedgerKind.CONDITIONAL, task_no="1.2", tool="c", verdict="skip", reason="saw []"
        ),
        LedgerEntry(kind=LedgerKind.ROUTING, task_no="1", tool="b", verdict="declined"),
    ]
    lines = ledger_tree(entries, offered=["b", "c", "g"], question="q?", answer="A.")
    assert lines == [
        "question: q?",
        "gates:",
        "  offered: b, c, g",
        "  x: refused: system — why",
        "1",
        "  coordinator c: ran, changed",
        "  b: declined",
        "  1.1",
        "    g: forced",
        "    1.1.1",
        "      g: failed",
        "  1.2",
        "    conditional: skip (owner: c) — saw []",
        "answer:",
        "  A.",
    ]


def _branch_bundle():
    from toolweave import ClarifiableTool, Domain, EmptyRequest, ToolResult

    class BranchHours(ClarifiableTool[EmptyRequest]):
        name = "branch_hours"
        domain = "library"
        executable_instruction = "branch_hours: true when the user asks when the library is open."

        def execute(self, request, ctx):
            return ToolResult.clarification(self.name, "Which branch?", ["Central", "East"])

        def execute_with_clarification(self, request, ctx, reply):
            return ToolResult.as_answer(self.name, f"{reply.strip()}: open 9-17.")

    return Domain(name="library"), [BranchHours()]


def test_Q2_a_clarification_question_is_answered_on_the_same_thread(capsys, monkeypatch):
    import toolweave.domains as domains
    from toolweave import Plugin

    branch = Plugin(name="library", domains={"library": _branch_bundle})
    monkeypatch.setattr(
        domains, "entry_points", lambda *, group: [FakeEntryPoint("library", lambda: branch)]
    )
    code, out, err = run(capsys, "ask", "--domain", "library", "--thread", "q", "When open?")
    assert code == 0, err
    lines = out.splitlines()
    asked = lines.index("Which branch?")
    assert lines[asked + 1 : asked + 4] == [
        "  1. Central",
        "  2. East",
        '(reply with: toolweave ask --thread q --domain library "...")',
    ]
    assert "Sources:" not in out
    code, out, err = run(capsys, "ask", "--domain", "library", "--thread", "q", "--json", "East")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["answer"] == "East: open 9-17."
    assert payload["pending_question"] is None
    code, out, _ = run(capsys, "explain", "q")
    assert code == 0
    assert "clarification" in out


def test_T3_a_system_no_tool_names_is_a_usage_error_listing_the_known_ones(capsys):
    # issue 18 item 4: a mistyped --system used to switch every tool off without a word
    argv = ["ask", "--thread", "t-sys", "--system", "radiology", "--json", CARDIOLOGY.question]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("toolweave: error: unknown system 'radiology'")
    assert "the tools name: none" in err
    assert run(capsys, "explain", "t-sys")[0] == 2  # nothing was stored


# --- Q2: clarification rounds of the korhaz domain from the command line ---------------------

DEPARTMENT_QUESTION_HU = "Melyik osztály? Írja be az osztály nevét vagy a sorszámát."
DEPARTMENTS_HU = [
    "Belgyógyászat",
    "Kardiológia",
    "Neurológia",
    "Sebészet",
    "Szülészet-nőgyógyászat",
    "Gyermekgyógyászat",
    "Radiológia",
    "Sürgősségi Betegellátó Osztály",
    "Bőrgyógyászat",
    "Központi Laboratórium",
]
CARDIOLOGY_HOURS_HU = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."
CARDIOLOGY_HOURS_EN = "Consultation hours of Cardiology: Monday-Thursday 9:00-13:00."


def test_Q2_chat_shows_the_department_question_takes_the_reply_and_continues(capsys, monkeypatch):
    script = "Mikor van rendelés?\nkardiológia\nexit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    code, out, err = run(capsys, "chat", "--thread", "t-dept")
    assert code == 0, err
    lines = out.splitlines()
    asked = next(i for i, line in enumerate(lines) if line.endswith(DEPARTMENT_QUESTION_HU))
    choices = len(DEPARTMENTS_HU)
    assert lines[asked + 1 : asked + 1 + choices] == [
        f"  {no}. {name}" for no, name in enumerate(DEPARTMENTS_HU, start=1)
    ]
    # Q2, Q8: the reply, or a new question (answered as one), in the language asked: hu
    hint = "(válaszoljon rá, vagy kérdezzen mást: az új kérdésre új választ kap)"
    assert lines[asked + 1 + choices] == hint
    answered = next(i for i, line in enumerate(lines) if CARDIOLOGY_HOURS_HU in line)
    assert answered > asked
    assert lines.count("Források:") == 1  # only the answered turn lists sources
    assert "Források:" in lines[answered:]
    code, out, _ = run(capsys, "explain", "t-dept")
    assert code == 0
    assert "clarification department_info: asked" in out
    assert "clarification department_info: replied" in out


def test_Q2_ask_thread_continues_a_paused_department_question(capsys):
    code, out, err = run(capsys, "ask", "--thread", "t-ask", "When are consultation hours?")
    assert code == 0, err
    lines = out.splitlines()
    asked = lines.index("Which department? Type its name or its number in the list.")
    assert lines[asked + 1 : asked + 3] == ["  1. Internal Medicine", "  2. Cardiology"]
    assert '(reply with: toolweave ask --thread t-ask --domain korhaz "...")' in lines
    assert "Sources:" not in out
    code, out, err = run(capsys, "ask", "--thread", "t-ask", "--json", "surgeon")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["pending_question"] is None
    assert (
        "Consultation hours of Surgery: Tuesday 10:00-14:00, Thursday 10:00-14:00."
        in (payload["answer"])
    )
    assert payload["activated"] == ["1:department_info", "1:korhaz_search"]


def test_Q2_ask_thread_reply_naming_no_department_asks_again_then_answers(capsys):
    run(capsys, "ask", "--thread", "t-again", "--json", "When are consultation hours?")
    code, out, _ = run(capsys, "ask", "--thread", "t-again", "--json", "dentistry")
    assert code == 0
    pending = json.loads(out)["pending_question"]
    assert pending.startswith("Which department? I found no department called “dentistry”.")
    code, out, _ = run(capsys, "ask", "--thread", "t-again", "2")
    assert code == 0
    assert CARDIOLOGY_HOURS_EN in out
    assert "Sources:" in out.splitlines()


def test_N3_the_reply_hint_asks_for_the_user_data_again_without_printing_it(capsys):
    """The person's data is never stored with the thread: the reply must give it again."""
    data = '{"member_id": "secret-member-7"}'
    argv = ["ask", "--thread", "t-ud", "--user-data", data, "When are consultation hours?"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    hint = "(reply with: toolweave ask --thread t-ud --domain korhaz --user-data '...' \"...\")"
    assert hint in out.splitlines()
    assert "secret-member-7" not in out + err
