"""Concurrent conversations against a slow, zero-CPU model (issue 9, item 1).

Each conversation is one question that routes to one tool: three model calls
(normalize, route, answer), each of which sleeps ``--latency`` seconds (1 s by
default) and uses no CPU, so the ideal wall time of N concurrent conversations is
that of one. Rows:

- **async**: ``ainvoke`` with an assistant whose async twins ``await asyncio.sleep``
  and a tool with ``aexecute``; no node, tool or model call holds a thread;
- **async + SQLite / Postgres**: the same, checkpointed by
  ``open_async_checkpointer`` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``);
  Postgres only when ``TOOLWEAVE_TEST_DATABASE_URL`` or ``TOOLWEAVE_DATABASE_URL``
  is set (``eval "$(bash scripts/postgres.sh start)"``);
- **sync model under ainvoke**: the same graph, but the model has only sync
  methods (``time.sleep``), so each call waits in LangGraph's small thread pool:
  what every deployment did before the async nodes;
- **invoke, one thread each**: the sync path, ``graph.invoke`` in N threads.

Prints a markdown table; wall time per N and the ratio to N = 1 of the same row.

Usage (from the repository root)::

    python -m bench.concurrency            # N = 1, 100, 200 (the sync-model row: 1, 100)
    python -m bench.concurrency --quick    # N = 1, 20, 0.2 s latency
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench.harness import markdown_table, verdict
from toolweave import (
    AnswerRequest,
    ChatbotTool,
    EmptyRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
    open_async_checkpointer,
)
from toolweave.testing import FunctionAssistant
from toolweave.tools.registry import AnyTool

TARGET_RATIO = 3.0
"""Issue 9: 100 concurrent conversations within 3x the time of one."""
ENV_URLS = ("TOOLWEAVE_TEST_DATABASE_URL", "TOOLWEAVE_DATABASE_URL")
TOOL = "opening_hours"
_DOC = UniqueTextDocument(
    document_id="hours", document_name="hours", page=1, sentence_number=1, text="Open 8-16."
)


class SlowSyncModel(FunctionAssistant):
    """Every port call sleeps ``latency`` seconds in ``time.sleep`` (sync methods only)."""

    def __init__(self, latency: float) -> None:
        super().__init__(route=lambda text, tools: [TOOL], answer=lambda request: "Open 8-16.")
        self.latency = latency

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Sleep, then keep the message."""
        time.sleep(self.latency)
        return super().normalize(message, history, default_lang=default_lang)

    def route(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """Sleep, then route to the one tool."""
        time.sleep(self.latency)
        return super().route(task_prompt, tools)

    def answer(self, request: AnswerRequest) -> AIMessage:
        """Sleep, then answer."""
        time.sleep(self.latency)
        return super().answer(request)

    # no native async: the port's defaults, which run the sync methods in a worker thread
    anormalize = LlmAssistant.anormalize
    aroute = LlmAssistant.aroute
    aanswer = LlmAssistant.aanswer


class SlowAsyncModel(SlowSyncModel):
    """The same model with native async twins that ``await asyncio.sleep``."""

    async def anormalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Await the latency, then keep the message."""
        await asyncio.sleep(self.latency)
        return FunctionAssistant.normalize(self, message, history, default_lang=default_lang)

    async def aroute(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """Await the latency, then route to the one tool."""
        await asyncio.sleep(self.latency)
        return FunctionAssistant.route(self, task_prompt, tools)

    async def aanswer(self, request: AnswerRequest) -> AIMessage:
        """Await the latency, then answer."""
        await asyncio.sleep(self.latency)
        return FunctionAssistant.answer(self, request)


class HoursTool(ChatbotTool[EmptyRequest]):
    """A zero-CPU tool with both bodies."""

    name = TOOL
    executable_instruction = f"{TOOL}: does the user ask when something is open?"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """One context document."""
        return ToolResult.as_context(self.name, [_DOC])

    async def aexecute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """One context document, without a thread."""
        return ToolResult.as_context(self.name, [_DOC])


def _graph(model: LlmAssistant, checkpointer: Any = None) -> Any:
    return build_graph("bench", [HoursTool()], assistant=model, checkpointer=checkpointer)


def _inputs() -> tuple[dict[str, Any], dict[str, Any]]:
    config = {"configurable": {"thread_id": f"c-{uuid.uuid4().hex[:12]}"}}
    return {"messages": [HumanMessage("When is it open?")]}, config


async def _gather(graph: Any, n: int) -> float:
    async def one() -> None:
        inputs, config = _inputs()
        out = await graph.ainvoke(inputs, config)
        assert out["answer"] == "Open 8-16.", out["answer"]

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - start


def _async_row(model: LlmAssistant, target: str | None) -> Callable[[int], float]:
    def run(n: int) -> float:
        async def main() -> float:
            async with open_async_checkpointer(target, env={}) as saver:
                return await _gather(_graph(model, saver), n)

        return asyncio.run(main())

    return run


def _threads_row(model: LlmAssistant) -> Callable[[int], float]:
    graph = _graph(model)

    def one(_: int) -> None:
        inputs, config = _inputs()
        out = graph.invoke(inputs, config)
        assert out["answer"] == "Open 8-16."

    def run(n: int) -> float:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(one, range(n)))
        return time.perf_counter() - start

    return run


def _postgres_url() -> str | None:
    return next((os.environ[k] for k in ENV_URLS if os.environ.get(k, "").strip()), None)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rows and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: N = 1, 20")
    parser.add_argument("--latency", type=float, default=None, help="seconds per model call")
    args = parser.parse_args(argv)
    latency = args.latency if args.latency is not None else (0.2 if args.quick else 1.0)
    sizes = (1, 20) if args.quick else (1, 100, 200)
    sync_sizes = sizes if args.quick else (1, 100)
    fast, slow = SlowAsyncModel(latency), SlowSyncModel(latency)
    rows_spec: list[tuple[str, Callable[[int], float], Sequence[int]]] = [
        ("async (ainvoke), memory", _async_row(fast, None), sizes),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        rows_spec.append(
            ("async (ainvoke), AsyncSqliteSaver", _async_row(fast, str(Path(tmp) / "t.db")), sizes)
        )
        url = _postgres_url()
        if url is not None:
            rows_spec.append(("async (ainvoke), AsyncPostgresSaver", _async_row(fast, url), sizes))
        rows_spec.append(("sync model under ainvoke, memory", _async_row(slow, None), sync_sizes))
        rows_spec.append(("invoke, one thread each, memory", _threads_row(slow), sizes))
        print(_table(rows_spec, sizes, latency, postgres=url is not None))


def _table(
    rows_spec: Sequence[tuple[str, Callable[[int], float], Sequence[int]]],
    sizes: Sequence[int],
    latency: float,
    *,
    postgres: bool,
) -> str:
    rows: list[list[object]] = []
    big = sizes[1]
    for label, run, row_sizes in rows_spec:
        times = {n: run(n) for n in row_sizes}
        base = times[1]
        cells: list[object] = [label]
        for n in sizes:
            cells.append(f"{times[n]:.2f} s ({times[n] / base:.1f}x)" if n in times else "not run")
        ratio = times[big] / base if big in times else float("inf")
        cells.append(verdict(ratio <= TARGET_RATIO))
        rows.append(cells)
        print(f"  {label}: {times}", file=sys.stderr)
    headers = ["path", *(f"N = {n}" for n in sizes), f"N = {big} within {TARGET_RATIO:g}x"]
    note = (
        f"\n\n3 model calls of {latency:g} s per conversation "
        f"(ideal: {3 * latency:g} s at any N); Postgres "
        + ("included." if postgres else "not set (TOOLWEAVE_TEST_DATABASE_URL), skipped.")
    )
    return markdown_table(headers, rows) + note


if __name__ == "__main__":
    main()
