"""X6: per-run state lives in a per-run scope; nothing is installed process-wide.

Also X4 through the scope (redaction by the logging filter, progress events) and
X5's deadline, one clock per run.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support import graph_of, make_tool

from toolweave import Limits, RedactingFilter, RunContext, ToolResult, build_graph
from toolweave.llm import deadline
from toolweave.llm.errors import RunDeadlineError
from toolweave.state.run_scope import (
    RunScope,
    aiterate_in,
    current_scope,
    iterate_in,
    run_secrets,
    scoped,
    with_secrets,
)
from toolweave.state.secrets import REDACTED, redact
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ToolCallContext

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "tok-3b9f00aa11-secret"
GO = {"messages": [("human", "go")]}


def route_all(text: str, tools: Any) -> list[str]:
    return [tool.name for tool in tools]


def one_tool_graph(result: Any, **kwargs: Any) -> Any:
    tool = make_tool("probe", result=result)
    return graph_of([tool], assistant=FunctionAssistant(route=route_all), **kwargs)


# --- logging: the library's loggers redact, the application's lines stay its own ------------


def test_X6_host_log_lines_are_not_redacted(caplog):
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        token = (ctx.user_data or {})["crm_token"]
        logging.getLogger("toolweave.tests.probe").warning("library line %s", token)
        logging.getLogger("host.app").warning("host line %s", token)
        return ToolResult.as_answer(name, "ok")

    graph = one_tool_graph(result)
    with caplog.at_level(logging.WARNING):
        graph.invoke({**GO, "user_data": {"crm_token": TOKEN}})
        logging.getLogger("host.app").warning("after the run token=%s", TOKEN)
    lines = {record.name: [] for record in caplog.records}
    for record in caplog.records:
        lines[record.name].append(record.getMessage())
    assert lines["toolweave.tests.probe"] == [f"library line {REDACTED}"]
    assert lines["host.app"] == [f"host line {TOKEN}", f"after the run token={TOKEN}"]


def test_X6_no_log_record_factory_is_installed():
    before = logging.getLogRecordFactory()
    graph = one_tool_graph(lambda name, ctx: ToolResult.as_answer(name, "ok"))
    graph.invoke({**GO, "user_data": {"api_key": TOKEN}})
    assert logging.getLogRecordFactory() is before
    record = logging.getLogger("host.app").makeRecord(
        "host.app", logging.INFO, __file__, 1, "key %s", (TOKEN,), None
    )
    assert record.getMessage() == f"key {TOKEN}"


def test_X4_redacting_filter_on_an_application_handler_redacts_the_run_secrets():
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Collect()
    handler.addFilter(RedactingFilter())
    host = logging.getLogger("host.redacting")
    host.addHandler(handler)
    host.propagate = False

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        host.warning("host line %s", (ctx.user_data or {})["member_no"])
        return ToolResult.as_answer(name, "ok")

    try:
        graph = one_tool_graph(result)
        context = RunContext(
            user_data={"member_no": "M-2299-4411"}, secret_keys=frozenset({"member_no"})
        )
        graph.invoke(GO, context=context)
        host.warning("outside a run %s", "M-2299-4411")
    finally:
        host.removeHandler(handler)
        host.propagate = True
    assert seen == [f"host line {REDACTED}", "outside a run M-2299-4411"]


def test_X4_library_tracebacks_are_redacted_by_the_filter(caplog):
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        raise RuntimeError(f"backend refused {(ctx.user_data or {})['db_password']}")

    graph = one_tool_graph(result)
    with caplog.at_level(logging.WARNING):
        graph.invoke({**GO, "user_data": {"db_password": "hunter2-long"}})
    assert "tool probe raised" in caplog.text
    assert "RuntimeError: backend refused [redacted]" in caplog.text
    assert "hunter2-long" not in caplog.text


def test_X6_secrets_of_a_run_are_forgotten_after_it():
    seen: list[frozenset[str]] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        seen.append(run_secrets())
        return ToolResult.as_answer(name, "ok")

    graph = one_tool_graph(result)
    graph.invoke({**GO, "user_data": {"crm_token": TOKEN}})
    graph.invoke({**GO, "user_data": {"city": "Szeged"}})
    assert seen == [frozenset({TOKEN}), frozenset()]
    assert redact(f"token {TOKEN}") == f"token {TOKEN}"  # no process-wide registry
    assert current_scope() is None


def test_X6_no_traceback_without_logging_config():
    script = textwrap.dedent(
        """
        from toolweave import ChatbotTool, EmptyRequest, ToolResult, build_graph
        from toolweave.testing import FunctionAssistant

        class Broken(ChatbotTool[EmptyRequest]):
            name = "broken"
            executable_instruction = "broken: always."
            request_model = EmptyRequest

            def execute(self, request, ctx):
                raise RuntimeError("the backend is down")

        route = FunctionAssistant(route=lambda text, tools: ["broken"], answer=lambda r: "sorry")
        graph = build_graph("test", [Broken()], assistant=route)
        out = graph.invoke({"messages": [("human", "go")]})
        print(out["answer"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "sorry"
    assert done.stderr == ""


def test_X6_the_library_logger_has_a_null_handler():
    import toolweave

    top = logging.getLogger(toolweave.__name__)
    assert any(type(handler) is logging.NullHandler for handler in top.handlers)


# --- the deadline: one clock per run -------------------------------------------------------


def test_X6_deadline_is_per_run():
    """Two runs at once, one with a short deadline and one with a long one: each keeps its own."""
    left: dict[str, float | None] = {}
    entered = threading.Barrier(2, timeout=30)

    def graph_with(label: str, seconds: float) -> Any:
        def route(text: str, tools: Any) -> list[str]:
            entered.wait()  # both runs are inside the graph now
            left[label] = deadline.remaining()
            time.sleep(0.5 if label == "short" else 0.0)
            return [tool.name for tool in tools]

        tool = make_tool("probe", result=lambda name, ctx: ToolResult.as_answer(name, "ok"))
        assistant = FunctionAssistant(route=route, answer=lambda request: "done")
        return build_graph(
            "test", [tool], assistant=assistant, limits=Limits(run_deadline_s=seconds)
        )

    short, long = graph_with("short", 0.3), graph_with("long", 60.0)
    outcome: dict[str, Any] = {}

    def run(label: str, graph: Any) -> None:
        try:
            outcome[label] = graph.invoke(GO)["answer"]
        except RunDeadlineError as exc:
            outcome[label] = exc

    threads = [
        threading.Thread(target=run, args=("long", long)),
        threading.Thread(target=run, args=("short", short)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert (left["short"] or 99) <= 0.3
    assert (left["long"] or 0) > 30
    assert isinstance(outcome["short"], RunDeadlineError)
    assert outcome["long"] == "ok"
    assert deadline.remaining() is None  # outside a run there is no deadline


def test_X6_deadline_is_per_run_on_the_async_path():
    left: dict[str, float | None] = {}

    def graph_with(label: str, seconds: float) -> Any:
        def route(text: str, tools: Any) -> list[str]:
            left[label] = deadline.remaining()
            return [tool.name for tool in tools]

        tool = make_tool("probe", result=lambda name, ctx: ToolResult.as_answer(name, "ok"))
        assistant = FunctionAssistant(route=route)
        return build_graph(
            "test", [tool], assistant=assistant, limits=Limits(run_deadline_s=seconds)
        )

    async def both() -> None:
        await asyncio.gather(
            graph_with("short", 30.0).ainvoke(GO),
            graph_with("long", 600.0).ainvoke(GO),
            graph_with("batch", 100.0).with_config(tags=["x"]).abatch([GO]),
        )

    asyncio.run(both())
    assert 0 < (left["short"] or 0) <= 30.0
    assert 500 < (left["long"] or 0) <= 600.0
    assert 60 < (left["batch"] or 0) <= 100.0


def test_X6_batch_runs_each_input_in_a_scope_of_its_own():
    seen: list[frozenset[str]] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        seen.append(run_secrets())
        return ToolResult.as_answer(name, "ok")

    graph = one_tool_graph(result)
    graph.batch([{**GO, "user_data": {"token": f"secret-{n:04d}"}} for n in range(3)])
    assert len(seen) == 3
    assert set(seen) == {frozenset({f"secret-{n:04d}"}) for n in range(3)}


# --- the scope reaches every node and never leaks to the caller -----------------------------


@pytest.mark.parametrize("path", ["invoke", "ainvoke", "stream", "astream"])
def test_X6_scope_reaches_the_nodes_and_stays_out_of_the_caller(path):
    inside: list[str] = []
    between: list[RunScope | None] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        inside.append(redact(f"token={(ctx.user_data or {})['token']}"))  # a sync node
        return ToolResult.as_answer(name, "ok")

    graph = one_tool_graph(result)
    run_input = {**GO, "user_data": {"token": TOKEN}}
    match path:
        case "invoke":
            graph.invoke(run_input)
        case "ainvoke":  # the sync node runs in LangGraph's thread pool
            asyncio.run(graph.ainvoke(run_input))
        case "stream":
            for _chunk in graph.stream(run_input):
                between.append(current_scope())
        case "astream":

            async def consume() -> None:
                async for _chunk in graph.astream(run_input):
                    between.append(current_scope())

            asyncio.run(consume())
    assert inside == [f"token={REDACTED}"]
    assert all(scope is None for scope in between)
    assert current_scope() is None


def test_X6_runs_stepped_in_turn_keep_their_scopes_apart():
    """Two streams advanced alternately in one thread: each step sees its own run's scope."""

    def numbers(tag: str) -> Any:
        for _ in range(3):
            yield tag, run_secrets()

    first = iterate_in(RunScope(secrets=frozenset({"first-secret"})), numbers("a"))
    second = iterate_in(RunScope(secrets=frozenset({"second-secret"})), numbers("b"))
    seen = []
    for a, b in zip(first, second, strict=True):
        seen.extend([a, b])
        assert current_scope() is None
    assert {(tag, secrets) for tag, secrets in seen} == {
        ("a", frozenset({"first-secret"})),
        ("b", frozenset({"second-secret"})),
    }


def test_X6_async_runs_stepped_in_turn_keep_their_scopes_apart():
    async def numbers(tag: str) -> Any:
        for _ in range(3):
            await asyncio.sleep(0)
            yield tag, run_secrets()

    async def main() -> list[Any]:
        first = aiterate_in(RunScope(secrets=frozenset({"first-secret"})), numbers("a"))
        second = aiterate_in(RunScope(secrets=frozenset({"second-secret"})), numbers("b"))
        seen = []
        for _ in range(3):
            seen.append(await anext(first))
            seen.append(await anext(second))
            assert current_scope() is None
        return seen

    seen = asyncio.run(main())
    assert {(tag, secrets) for tag, secrets in seen} == {
        ("a", frozenset({"first-secret"})),
        ("b", frozenset({"second-secret"})),
    }


def test_X6_a_stream_left_early_is_closed_inside_its_run_scope_on_both_paths():
    """Closing a stepped stream closes its items, and their cleanup still sees the run's scope."""
    closed: list[frozenset[str]] = []
    scope = RunScope(secrets=frozenset({"stream-secret"}))

    def numbers() -> Any:
        try:
            yield from range(3)
        finally:
            closed.append(run_secrets())

    async def anumbers() -> Any:
        try:
            for number in range(3):
                yield number
        finally:
            closed.append(run_secrets())

    async def first_async() -> Any:
        stream = aiterate_in(scope, anumbers())
        first = await anext(stream)
        await stream.aclose()
        return first

    stream = iterate_in(scope, numbers())
    assert next(stream) == 0
    stream.close()
    assert asyncio.run(first_async()) == 0
    assert closed == [frozenset({"stream-secret"})] * 2
    assert current_scope() is None


def test_X6_a_run_inside_a_run_keeps_the_outer_deadline_and_secrets():
    outer = RunScope(secrets=frozenset({"outer-secret"}))
    with scoped(outer), scoped(RunScope(secrets=frozenset({"inner-secret"}))):
        assert run_secrets() == {"outer-secret", "inner-secret"}
    with with_secrets(["api-key-1234"]):
        assert redact("key api-key-1234") == f"key {REDACTED}"
    assert current_scope() is None


# --- X4: progress events carry no secret ---------------------------------------------------


def test_X4_progress_events_are_redacted():
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress("FETCHING_DATA", f"as {(ctx.user_data or {})['crm_token']}")
        return ToolResult.as_answer(name, "ok")

    graph = one_tool_graph(result)
    events = [
        chunk
        for chunk in graph.stream({**GO, "user_data": {"crm_token": TOKEN}}, stream_mode="custom")
        if chunk.get("type") == "tool_progress"
    ]
    assert [event["detail"] for event in events] == [f"as {REDACTED}"]
    assert TOKEN not in repr(events)


class KeyedAssistant(FunctionAssistant):
    """A model double configured with an API key, as a ``ChatModelAssistant`` is."""

    def secret_values(self) -> frozenset[str]:
        return frozenset({"sk-built-0123456789"})


def test_X4_the_built_assistants_key_is_redacted_from_library_lines_of_every_run(caplog):
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        logging.getLogger("toolweave.tests.probe").warning("calling with sk-built-0123456789")
        return ToolResult.as_answer(name, "ok")

    tool = make_tool("probe", result=result)
    graph = build_graph("test", [tool], assistant=KeyedAssistant(route=route_all))
    with caplog.at_level(logging.WARNING):
        graph.invoke(GO)
        asyncio.run(graph.with_config(tags=["copy"]).ainvoke(GO))  # a copy keeps the key
    messages = [r.getMessage() for r in caplog.records if r.name == "toolweave.tests.probe"]
    assert messages == [f"calling with {REDACTED}"] * 2


@pytest.mark.parametrize("use_async", [False, True])
def test_X4_user_data_stored_with_the_thread_stays_secret_in_later_runs(caplog, use_async):
    from langgraph.checkpoint.memory import InMemorySaver

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        logging.getLogger("toolweave.tests.probe").warning("as %s", (ctx.user_data or {}))
        return ToolResult.as_answer(name, "ok")

    tool = make_tool("probe", result=result)
    graph = graph_of(
        [tool], assistant=FunctionAssistant(route=route_all), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "stored"}}
    with caplog.at_level(logging.WARNING):
        if use_async:

            async def twice() -> None:
                await graph.ainvoke({**GO, "user_data": {"crm_token": TOKEN}}, config)
                await graph.ainvoke(GO, config)  # no user_data: the thread's is used

            asyncio.run(twice())
        else:
            graph.invoke({**GO, "user_data": {"crm_token": TOKEN}}, config)
            graph.invoke(GO, config)
    messages = [r.getMessage() for r in caplog.records if r.name == "toolweave.tests.probe"]
    assert messages == [f"as {{'crm_token': '{REDACTED}'}}"] * 2
