"""Misconfiguration says so (issue 18 items 4-6): names, databases, serde, L1, W3 over the API.

- an unknown system name (T3) or a domain naming a tool nobody registered is an
  error listing what exists; an unreachable ``--database-url`` ends every command
  with exit 1 and the URL masked;
- the graph's own state types are read back without LangGraph's "unregistered
  type" warning, in its default (permissive) msgpack mode too, locally and in
  ``langgraph dev``'s default log;
- a skipped conditional subtask names, in a field, every tool it kept from
  running (L1), and ``toolweave explain --tool`` says so;
- a malformed client-tool result re-pauses with a readable error and leaves the
  thread answerable, through the compiled graph and through langgraph-sdk (W3, X5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ai_support import ExampleTool, client_payload, config, example_graph, results
from langgraph.types import Command
from support import ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import Domain, OfflineAssistant, SubtaskDecision, TaskInfo, build_graph, explain
from toolweave.state.errors import ConfigurationError, InvalidRequestError
from toolweave.testing import FunctionAssistant
from toolweave.tools.ai.base import AiToolScope
from toolweave.tools.eligibility import check_systems, known_systems

ROOT = Path(__file__).resolve().parents[1]
DOWN = "postgresql://toolweave:s3cret-pw@127.0.0.1:1/threads"
"""A PostgreSQL URL nobody answers (port 1 refuses at once); its password must never show."""
SERDE_WARNINGS = ("unregistered type", "Blocked deserialization", "has no attribute")
APPOINTMENT = "Szeretnék időpontot kérni a kardiológiára hétfőre"


# -- item 4: names --------------------------------------------------------------------------


def test_T3_a_system_no_tool_names_is_refused_with_the_names_that_exist():
    tools = [
        make_tool("crm_only", eligible_system="crm"),
        make_tool("hr_or_erp", eligible_system=frozenset({"hr", "erp"})),
        make_tool("plain"),
    ]
    assert known_systems(tools) == ["crm", "erp", "hr"]
    check_systems(["crm", "hr"], tools)
    with pytest.raises(InvalidRequestError) as caught:
        check_systems(["crm", "crmm"], tools)
    assert str(caught.value).startswith("unknown system 'crmm'")
    assert str(caught.value).endswith("the tools name: crm, erp, hr")


def test_T3_the_cli_refuses_a_mistyped_system_in_ask_and_chat(capsys, tmp_path):
    from toolweave import cli

    for argv in (["ask", "--system", "wbe", "hi?"], ["chat", "--system", "wbe"]):
        assert cli.main([*argv, "--data-dir", str(tmp_path)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith("toolweave: error: unknown system 'wbe'")


def test_T1_a_domain_naming_an_unregistered_retrieval_tool_is_a_configuration_error():
    domain = Domain(name="d", default_retrieval_tool="serch")
    with pytest.raises(ConfigurationError) as caught:
        build_graph(domain, [make_tool("search"), make_tool("hours")], assistant=OfflineAssistant())
    message = str(caught.value)
    assert "default_retrieval_tool names 'serch'" in message
    assert message.endswith("registered: search, hours")


def test_X1_an_unknown_domain_lists_the_known_ones(capsys, tmp_path):
    from toolweave import cli

    assert cli.main(["tools", "--domain", "korhz", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolweave: error: unknown domain 'korhz'")
    assert "korhaz" in err


# -- item 4: an unreachable database, on every command --------------------------------------


@pytest.mark.network
@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Hol lehet parkolni?"],  # no --thread: answered in memory until now, exit 0
        ["ask", "--thread", "t1", "Hol lehet parkolni?"],
        ["chat"],
        ["tools"],
        ["domains"],
        ["explain", "t1"],
        ["eval"],
        ["ingest", "README.md", "--domain", "docs"],
    ],
    ids=lambda argv: "-".join(argv[:2]),
)
def test_X1_an_unreachable_database_fails_every_command_with_the_url_masked(
    argv, capsys, tmp_path, monkeypatch
):
    from toolweave import cli

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("chat must not start"))
    code = cli.main([*argv, "--data-dir", str(tmp_path), "--database-url", DOWN])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err.startswith(
        "toolweave: error: cannot connect to the database "
        "postgresql://toolweave:***@127.0.0.1:1/threads (--database-url): "
    )
    assert "s3cret-pw" not in captured.err
    assert captured.err.count("\n") == 1  # one line, the driver's own line breaks folded


# -- item 4: the state types are registered, in permissive msgpack mode too ---------------

ROUND_TRIP = """
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from toolweave import OfflineAssistant, build_graph
from toolweave.domains import load_domain

domain, tools = load_domain("korhaz")
graph = build_graph(domain, tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "t"}}
out = graph.invoke({"messages": [("human", "Mikor van rendelés?")]}, config)
assert out["__interrupt__"], out
out = graph.invoke(Command(resume="kardiológia"), config)
print(type(graph.get_state(config).values["tasks"]["1"]).__name__)
print(out["answer"])
"""


def test_X5_a_plain_checkpointer_reads_the_state_types_without_unregistered_warnings():
    """A user's own ``InMemorySaver()`` (LangGraph's permissive default serde): no warnings."""
    env = {k: v for k, v in os.environ.items() if k != "LANGGRAPH_STRICT_MSGPACK"}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-c", ROUND_TRIP],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "TaskNode"  # a model, not a downgraded dict
    assert "Kardiológia" in done.stdout
    assert not [w for w in SERDE_WARNINGS if w in done.stderr], done.stderr


@pytest.mark.slow
@pytest.mark.network
def test_X5_studio_default_log_has_no_unregistered_type_warning(tmp_path, monkeypatch):
    """``langgraph dev`` without LANGGRAPH_STRICT_MSGPACK: a clarification and a client pause."""
    import dev_server
    from langgraph_sdk import get_sync_client

    strict_env = dev_server.server_env

    def permissive() -> dict[str, str]:
        env = strict_env()
        env.pop("LANGGRAPH_STRICT_MSGPACK", None)
        return env

    monkeypatch.setattr(dev_server, "server_env", permissive)
    with dev_server.langgraph_dev(tmp_path) as server:
        client = get_sync_client(url=server.url, api_key=None)
        thread = client.threads.create()["thread_id"]
        message = {"messages": [{"role": "human", "content": "Mikor van rendelés?"}]}
        client.runs.wait(thread, "korhaz", input=message)
        done = client.runs.wait(thread, "korhaz", command={"resume": "kardiológia"})
        assert "Kardiológia" in done["answer"]
        client.threads.get_state(thread)
        _client_round(client)
    log = server.log_path.read_text(errors="replace")
    assert not [line for line in log.splitlines() if any(w in line for w in SERDE_WARNINGS)]


# -- item 5: L1, the tools a skipped conditional subtask kept from running -----------------


def _skipping_graph(saver: Any = None) -> Any:
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt="cheap", required_tool_names=["cheap"]),
                TaskInfo(task_no="", task_prompt="anything else", conditional=True),  # routed
            ]
        return task

    tools = [
        ScriptedCoordinator("coord", decompose, decide=lambda *a: SubtaskDecision.SKIP),
        make_tool("cheap", routing=None),
        make_tool("hours"),
        make_tool("prices"),
        make_tool("vip", eligible=False),
    ]
    route = FunctionAssistant(route=lambda t, ts: [])
    return graph_of(tools, assistant=route, checkpointer=saver)


def test_L1_a_skipped_routed_subtask_names_every_candidate_it_kept_from_running():
    out = ask(_skipping_graph(), "q")
    [skipped] = [e for e in out["ledger"] if e.kind == "conditional"]
    assert (skipped.task_no, skipped.tool, skipped.verdict) == ("1.2", "coord", "skip")
    assert set(skipped.tools) == {"hours", "prices"}  # vip did not pass its gate
    for name in ("hours", "prices"):
        about = [e for e in explain(out, tool=name) if e.kind == "conditional"]
        assert [(e.task_no, e.tool, e.verdict) for e in about] == [("1.2", name, "skip")]


def test_L1_explain_tool_says_which_skipped_subtask_would_have_run_it(capsys, tmp_path):
    from toolweave import cli

    argv = ["--data-dir", str(tmp_path)]
    assert cli.main(["ask", "--thread", "doc", "Hol rendel dr. Kovács Anna?", *argv]) == 0
    capsys.readouterr()
    assert cli.main(["explain", "doc", "--tool", "korhaz_search", *argv]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "conditional" in line)
    assert line.strip().startswith(
        "1.2: conditional: skip, the subtask that would run korhaz_search — doctor_finder decided"
    )
    assert "owner: korhaz_search" not in out


# -- item 6: W3/X5, a malformed client-tool result ----------------------------------------

MALFORMED = (
    "just text",
    {"type": "client_tool_results", "results": [{"call_id": "x"}]},
    {"results": "nope"},
)


def test_W3_X5_a_malformed_client_result_repauses_with_a_readable_error_then_answers():
    tool = ExampleTool(AiToolScope.CLIENT)
    graph = example_graph(tool)
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config())
    call_id = client_payload(out)["calls"][0]["call_id"]
    for bad in MALFORMED:
        again = client_payload(graph.invoke(Command(resume=bad), config()))  # no exception
        assert [c["call_id"] for c in again["calls"]] == [call_id]
        assert again["error"]
        assert "{{" not in again["error"]
        assert graph.get_state(config()).next == ("ask_user",)
    done = graph.invoke(Command(resume=results((call_id, "ok"))), config())
    assert done["activated"] == ["1:example_tool"]
    assert done["answer"]


def _client_round(client: Any) -> None:
    """A client-tool pause over the API, answered badly three ways, then well (W3)."""
    thread = client.threads.create()["thread_id"]
    message = {"messages": [{"role": "human", "content": APPOINTMENT}]}
    message["client_tools"] = ["fill_appointment_form"]
    paused = client.runs.wait(thread, "korhaz", input=message)
    payload = paused["__interrupt__"][0]["value"]
    assert payload["type"] == "client_tool_calls", payload
    call_id = payload["calls"][0]["call_id"]
    for bad in MALFORMED:
        again = client.runs.wait(thread, "korhaz", command={"resume": bad}, raise_error=False)
        assert "__error__" not in again, again
        value = again["__interrupt__"][0]["value"]
        assert [c["call_id"] for c in value["calls"]] == [call_id]
        assert value["error"]
        assert "{{" not in value["error"]
        assert client.threads.get(thread)["status"] == "interrupted"
    filled = json.dumps({"filled": True, "department": "Kardiológia", "day": "Monday"})
    done = client.runs.wait(
        thread,
        "korhaz",
        command={"resume": results((call_id, filled))},
    )
    assert "__error__" not in done, done
    assert "1:fill_appointment_form" in done["activated"]
    assert client.threads.get(thread)["status"] == "idle"


@pytest.mark.slow
@pytest.mark.network
def test_W3_X5_a_malformed_client_result_over_the_sdk_repauses_and_stays_answerable(
    server_url: str,
) -> None:
    from langgraph_sdk import get_sync_client

    _client_round(get_sync_client(url=server_url, api_key=None))


LIBRARY = ("toolweave", "state", "graph", "llm", "tools", "coordinators")


def test_W3_X5_every_message_template_with_escaped_braces_is_formatted():
    """A constant spelling ``{{`` is a ``str.format`` template (or a slot): never shown raw."""
    import ast

    sources = {path: path.read_text() for part in LIBRARY for path in (ROOT / part).rglob("*.py")}
    everything = "\n".join(sources.values())
    unformatted = []
    for path, text in sources.items():
        for node in ast.parse(text).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.expr)):
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if not (isinstance(value, str) and "{{" in value):
                continue
            for target in node.targets:
                used = (f"{target.id}.format(", f".replace({target.id},")  # a template, a slot
                if isinstance(target, ast.Name) and not any(u in everything for u in used):
                    unformatted.append(f"{path.relative_to(ROOT)}: {target.id}")
    assert not unformatted
