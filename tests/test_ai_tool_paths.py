"""W4-W6: the Python client, plugins by entry points, orchestration and native tool calling."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ai_support import (
    ENDS_IN_ED_SCHEMA,
    ExampleTool,
    client_payload,
    config,
    example_graph,
    results,
)
from fake_openai import FakeToolCalls
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import ChatModelAssistant, build_graph, default_assistant
from toolweave.client_tools import (
    ClientToolRegistry,
    arun_with_client_tools,
    run_with_client_tools,
)
from toolweave.persistence import open_checkpointer
from toolweave.tools.ai.base import AiToolScope
from toolweave.tools.ai.langchain import as_langchain_tools
from toolweave.tools.ai.orchestration import as_chatbot_tools
from toolweave.tools.ai.registry import AiToolRegistry
from toolweave.tools.plugins import PLUGIN_GROUP, discover_plugins, register_plugins
from toolweave.tools.registry import ToolRegistry

ROOT = Path(__file__).resolve().parents[1]

# -- W4 -------------------------------------------------------------------------------


def test_W4_python_client_answers_client_calls_through_the_compiled_graph() -> None:
    tool = ExampleTool(AiToolScope.CLIENT)
    graph = example_graph(tool)
    client = ClientToolRegistry()
    seen: list[str] = []

    def implementation(input: str) -> str:
        seen.append(input)
        return json.dumps(json.loads(input)["exampleParam"] + " answered in the client")

    client.register("example-tool", implementation)
    out = run_with_client_tools(graph, {"messages": [("human", "hi")]}, config(), client)
    assert seen == ['{"exampleParam": "example_tool input"}']
    assert "answered in the client" in out["answer"]
    assert tool.ran == []


def test_W4_async_implementations_and_failures_reach_the_run() -> None:
    a = ExampleTool(AiToolScope.CLIENT, "tool-a")
    b = ExampleTool(AiToolScope.CLIENT, "tool-b")
    graph = example_graph(a, b)
    client = ClientToolRegistry()

    @client.implements("tool-a")
    async def tool_a(input: str) -> str:
        await asyncio.sleep(0)
        return "A from async"

    @client.implements("tool-b")
    def tool_b(input: str) -> str:
        raise ValueError("no form on this page")

    out = asyncio.run(
        arun_with_client_tools(graph, {"messages": [("human", "hi")]}, config(), client)
    )
    assert out["context_buffer"]["1:tool_a"][0].context == "A from async"
    assert "1:tool_b" not in out["context_buffer"]
    assert any("no form on this page" in e.reason for e in out["ledger"])


def test_W3_W4_pause_is_durable_and_resumed_from_another_process_nothing_repeated(tmp_path) -> None:
    db = tmp_path / "threads.db"
    log = tmp_path / "extractions.txt"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from ai_support import ENDS_IN_ED_SCHEMA, ExampleTool, example_graph, config
        from toolweave.persistence import open_checkpointer
        from toolweave.tools.ai.base import AiToolScope

        def extract(text, tool):
            with open({str(log)!r}, "a") as f:
                f.write(tool.name + "\\n")
            return {{"exampleParam": "durable"}}

        with open_checkpointer({str(db)!r}) as saver:
            tool = ExampleTool(AiToolScope.CLIENT)
            graph = example_graph(tool, extract=extract, checkpointer=saver)
            run = {{"messages": [("human", "hi")], "client_tools": ["example-tool"]}}
            out = graph.invoke(run, config("d"))
            print(out["__interrupt__"][0].value["calls"][0]["call_id"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    call_id = done.stdout.strip().splitlines()[-1]
    assert log.read_text().splitlines() == ["example_tool"]

    def extract(text: str, tool: Any) -> dict[str, Any]:
        raise AssertionError("the input was extracted before the pause; never again")

    client = ClientToolRegistry()
    client.register("example-tool", lambda input: f"client saw {input}")
    with open_checkpointer(str(db)) as saver:
        graph = example_graph(ExampleTool(AiToolScope.CLIENT), extract=extract, checkpointer=saver)
        payload = graph.get_state(config("d")).interrupts[0].value
        assert payload["calls"][0]["call_id"] == call_id
        out = graph.invoke(Command(resume=client.answer(payload)), config("d"))
    assert (
        out["context_buffer"]["1:example_tool"][0].context
        == 'client saw {"exampleParam": "durable"}'
    )
    assert log.read_text().splitlines() == ["example_tool"]


@pytest.mark.slow
@pytest.mark.network
def test_W4_langgraph_sdk_client_fills_the_hospital_form_and_the_run_continues(server_url) -> None:
    from langgraph_sdk import get_sync_client

    from toolweave.client_tools import run_remote_with_client_tools

    sdk = get_sync_client(url=server_url, api_key=None)
    thread = sdk.threads.create()["thread_id"]
    question = {
        "messages": [
            {"role": "human", "content": "Szeretnék időpontot kérni a kardiológiára hétfőre"}
        ]
    }
    paused = sdk.runs.wait(
        thread, "korhaz", input={**question, "client_tools": ["fill_appointment_form"]}
    )
    status = sdk.threads.get(thread)
    assert status["status"] == "interrupted"  # a client that never answers: the thread says so
    [found] = [i for items in status["interrupts"].values() for i in items]
    call = found["value"]["calls"][0]
    assert call["tool_id"] == "fill_appointment_form"
    assert json.loads(call["input"]) == {"department": "Kardiológia", "day": "Monday"}
    del paused
    form: dict[str, Any] = {}

    def fill(input: str) -> str:
        form.update(json.loads(input))
        return json.dumps({"filled": True, **form})

    client = ClientToolRegistry()
    client.register("fill_appointment_form", fill)
    second = sdk.threads.create()["thread_id"]
    result = run_remote_with_client_tools(sdk, second, "korhaz", question, client)
    assert form == {"department": "Kardiológia", "day": "Monday"}
    assert "1:fill_appointment_form" in result["activated"]
    assert "1:check_appointment_slots" in result["activated"]
    assert sdk.threads.get(second)["status"] == "idle"


# -- W5 -------------------------------------------------------------------------------


def _write_plugin_dist(root: Path) -> None:
    package = root / "tw_demo_plugin"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import json
            from toolweave.tools.ai.base import AiTool, AiToolScope
            from toolweave.tools.plugins import Plugin

            class Echo(AiTool):
                def define(self, builder):
                    builder.id("example-tool").name("echo").user_description("Echoes.").ai_description(
                        "echoes its input").scope(AiToolScope.SERVER)
                def execute(self, input):
                    return json.dumps({"echo": json.loads(input)})

            def plugin():
                return Plugin(name="demo", ai_tools=[Echo()])
            """
        )
    )
    info = root / "tw_demo_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tw-demo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\ndemo = tw_demo_plugin:plugin\n")


def test_W5_plugins_are_discovered_from_a_real_distribution_in_order_last_wins(
    tmp_path, monkeypatch, caplog
) -> None:
    _write_plugin_dist(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with caplog.at_level("INFO"):
        found = discover_plugins()
    names = [(p.distribution, p.plugin.name) for p in found]
    # by distribution, whatever other domain packages are installed beside them (N4)
    assert names == sorted(names)
    assert {("toolweave-korhaz", "korhaz"), ("tw-demo-plugin", "demo")} <= set(names)
    assert "plugin demo from tw-demo-plugin" in caplog.text
    registry = AiToolRegistry([ExampleTool()])
    with caplog.at_level("WARNING"):
        register_plugins(found, ai_tools=registry, tools=ToolRegistry())
    assert registry["example-tool"].source == "plugin demo"  # last loaded wins
    assert "Echo (plugin demo) replaces ExampleTool (explicit)" in caplog.text
    assert {"fill_appointment_form", "check_appointment_slots", "format_date"} <= set(
        registry.ids()
    )


def test_W5_issue9_hospital_domain_is_an_entry_point_not_an_import() -> None:
    source = (ROOT / "toolweave" / "domains" / "__init__.py").read_text()
    assert "import korhaz" not in source
    assert "toolweave_korhaz" not in source
    pyproject = (ROOT / "examples" / "korhaz" / "pyproject.toml").read_text()
    assert 'korhaz = "toolweave_korhaz.plugin:plugin"' in pyproject
    from toolweave.domains import load_domain

    domain, tools = load_domain("korhaz")
    assert domain.name == "korhaz"
    assert {"fill_appointment_form", "check_appointment_slots", "format_date"} <= {
        t.name for t in tools
    }


# -- W6 -------------------------------------------------------------------------------


@pytest.mark.network
def test_W6a_ai_tool_routed_and_extracted_in_the_batched_call_with_real_chatopenai(
    fake_openai,
) -> None:
    assistant = default_assistant(
        model="fake", api_key="sk-test", base_url=fake_openai.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    tool = ExampleTool(AiToolScope.SERVER)
    fake_openai.script(  # A10: no normalization call for a first message
        {
            "example_tool": {
                "reason": "asked",
                "run": True,
                "request": {"exampleParam": "from the model"},
            }
        },
        "The tool said: from the model answered.",
    )
    graph = build_graph("demo", as_chatbot_tools([tool]), assistant=assistant)
    out = graph.invoke({"messages": [HumanMessage("run it from the model")]})  # T7: grounded
    assert tool.ran == ['{"exampleParam": "from the model"}']
    assert out["context_buffer"]["1:example_tool"][0].context == '"from the model answered"'
    routing = fake_openai.requests[0]
    schema = json.dumps(routing["response_format"])
    assert "exampleParam" in schema  # the tool's JSON schema is in the constrained decoding
    assert "example-tool-description-shown-to-ai" in json.dumps(routing["messages"])
    assert len(fake_openai.requests) == 2  # one batched routing+extraction, the answer (A10)


@pytest.mark.network
def test_W6b_native_tool_calling_client_tool_pauses_the_agent_and_resumes(fake_openai) -> None:
    from langchain_openai import ChatOpenAI

    server_tool = ExampleTool(AiToolScope.SERVER, "server-tool")
    client_tool = ExampleTool(AiToolScope.CLIENT, "client-tool")
    tools = as_langchain_tools(AiToolRegistry([server_tool, client_tool]))
    assert tools[0].args_schema["required"] == ["exampleParam"]
    llm = ChatOpenAI(model="fake", api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)
    fake_openai.script(
        FakeToolCalls((("call_bad", "server-tool", {"exampleParam": 7}),)),
        FakeToolCalls(
            (
                ("call_s", "server-tool", {"exampleParam": "x"}),
                ("call_c", "client-tool", {"exampleParam": "y"}),
            )
        ),
        "Both tools answered.",
    )
    from langchain.agents import create_agent

    agent = create_agent(llm, tools, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "agent", "client_tools": ["client-tool"]}}
    paused = agent.invoke({"messages": [HumanMessage("use the tools")]}, cfg)
    payload = client_payload(paused)
    assert payload["calls"] == [
        {
            "call_id": "call_c",
            "tool_id": "client-tool",
            "name": "client-tool-name",
            "input": '{"exampleParam": "y"}',
        }
    ]
    client = ClientToolRegistry()
    client.register("client-tool", lambda input: "y from the client")
    out = run_with_client_tools(agent, Command(resume=client.answer(payload)), cfg, client)
    messages = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert "field 'exampleParam'" in messages["call_bad"]  # W2: the model got the error back
    assert messages["call_s"] == '"x answered"'
    assert messages["call_c"] == "y from the client"
    # create_agent runs each tool call as its own task: the server tool of the same model
    # turn as the paused client tool is not run again on resume
    assert server_tool.ran == ['{"exampleParam": "x"}']
    assert client_tool.ran == []
    assert isinstance(out["messages"][-1], AIMessage)
    assert out["messages"][-1].content == "Both tools answered."


@pytest.mark.network
def test_W2_the_error_reaches_the_model_and_its_corrected_input_runs(fake_openai) -> None:
    assistant = default_assistant(
        model="fake", api_key="sk-test", base_url=fake_openai.base_url, env={}
    )
    tool = ExampleTool(AiToolScope.SERVER, schema=ENDS_IN_ED_SCHEMA)
    fake_openai.script(  # A10: no normalization call for a first message
        {"example_tool": {"reason": "asked", "run": True, "request": {"exampleParam": "run"}}},
        {"exampleParam": "corrected"},  # the extraction asked again, with the error
        "Done.",
    )
    graph = build_graph("demo", as_chatbot_tools([tool]), assistant=assistant)
    out = graph.invoke({"messages": [HumanMessage("run it, corrected")]})  # T7: grounded
    assert tool.ran == ['{"exampleParam": "corrected"}']
    retry = json.dumps(fake_openai.requests[1]["messages"])
    assert "Your previous input for this tool was rejected" in retry
    assert "does not match 'ed$'" in retry  # W2 (a missing input is T13's: no retry)
    assert out["llm_calls"] == 3
    rejected = [e for e in out["ledger"] if e.verdict == "skipped" and e.tool == "example_tool"]
    assert [e.reason.split(":")[0] for e in rejected] == ["input rejected (attempt 1 of 2)"]


@pytest.mark.network
def test_W6b_R7_raising_tool_is_an_error_message_and_a_progress_event(fake_openai) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    class Broken(ExampleTool):
        def execute(self, input: str) -> str:
            raise RuntimeError("boom")

    llm = ChatOpenAI(model="fake", api_key="sk-test", base_url=fake_openai.base_url, max_retries=0)
    fake_openai.script(
        FakeToolCalls((("call_b", "example-tool", {"exampleParam": "x"}),)), "It failed."
    )
    agent = create_agent(llm, as_langchain_tools(AiToolRegistry([Broken()])))
    custom: list[Any] = []
    final: dict[str, Any] = {}
    for mode, data in agent.stream(
        {"messages": [HumanMessage("go")]}, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            custom.append(data)
        else:
            final = data
    assert [e["text"] for e in custom] == ["TOOL_PROGRESS:EXAMPLE-TOOL:ERROR"]
    [message] = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert "failed (RuntimeError)" in message.content
    assert final["messages"][-1].content == "It failed."


@settings(max_examples=15, deadline=None)
@given(
    announced=st.lists(st.sampled_from(["client-tool", "other"]), max_size=2),
    args=st.sampled_from([{"exampleParam": "y"}, {"exampleParam": 3}, {}]),
    answer=st.sampled_from(["ok", "error", "garbage"]),
)
def test_W3_W6b_client_tool_never_runs_on_server_through_function_calling(
    announced, args, answer
) -> None:
    from langchain.agents import create_agent

    from toolweave.testing import ScriptedChatModel

    tool = ExampleTool(AiToolScope.CLIENT, "client-tool")
    call = AIMessage(content="", tool_calls=[{"id": "call_1", "name": "client-tool", "args": args}])
    model = ScriptedChatModel(script=[call, "done", "done"])
    agent = create_agent(
        model, as_langchain_tools(AiToolRegistry([tool])), checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "p", "client_tools": announced}}
    out = agent.invoke({"messages": [HumanMessage("go")]}, cfg)
    for _ in range(3):
        pending = out.get("__interrupt__")
        if not pending:
            break
        value: Any = {
            "ok": results(("call_1", "from client")),
            "error": results(("call_1", "failed"), error=True),
            "garbage": {"type": "client_tool_results", "results": [{"call_id": "call_1"}]},
        }[answer]
        out = agent.invoke(Command(resume=value), cfg)
    assert tool.ran == []
