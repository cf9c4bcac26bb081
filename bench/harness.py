"""Shared benchmark harness: no-op tools, checkpointers, bare graphs, timing and tables.

Nothing here imports from ``tests/``; the tools and graphs are built from
toolweave's public API only.
"""

from __future__ import annotations

import gc
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument
from toolweave.persistence import open_checkpointer

CHECKPOINTERS = ("memory", "sqlite")
"""Checkpointer kinds every benchmark runs with."""
DURABILITIES = ("async", "sync", "exit")
"""LangGraph's ``durability`` modes; ``async`` is its default."""
_THREADS = itertools.count()


class TopicRequest(BaseModel):
    """A one-field request, so tools look like real ones that need extraction."""

    topic: str | None = Field(default=None, description="What the user asks about")


def tool_name(index: int) -> str:
    """The name of the ``index``-th benchmark tool, e.g. ``tool_0007``."""
    return f"tool_{index:04d}"


def make_noop_tool(
    name: str, *, routable: bool = True, request_model: type[BaseModel] = TopicRequest
) -> ChatbotTool[Any]:
    """A tool whose ``execute`` returns one context document and does nothing else.

    Args:
        name: The tool's name.
        routable: Give it a routing question (else it runs only when forced).
        request_model: Its request model; the default has one optional field.
    """
    document = UniqueTextDocument(
        document_id=f"{name}-doc",
        document_name=name,
        page=1,
        sentence_number=1,
        text=f"{name} says hi",
        sentence_score=1.0,
    )

    def execute(self: ChatbotTool[Any], request: BaseModel, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_context(name, [document])

    attrs = {
        "name": name,
        "request_model": request_model,
        "executable_instruction": f"{name}: does the user ask about {name}?" if routable else None,
        "execute": execute,
    }
    tool: ChatbotTool[Any] = type(f"Bench_{name}", (ChatbotTool,), attrs)()
    return tool


def make_noop_tools(count: int, **kwargs: Any) -> list[ChatbotTool[Any]]:
    """``count`` no-op tools named ``tool_0000`` ... (see :func:`make_noop_tool`)."""
    return [make_noop_tool(tool_name(i), **kwargs) for i in range(count)]


@contextmanager
def checkpointer(kind: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """An ``InMemorySaver`` (``"memory"``) or a ``SqliteSaver`` on a fresh temp file.

    The SQLite saver comes from :func:`toolweave.persistence.open_checkpointer` with its
    defaults (WAL, ``synchronous=NORMAL``), for toolweave and the bare graph alike.
    """
    if kind == "memory":
        yield InMemorySaver()
        return
    with (
        tempfile.TemporaryDirectory(prefix="toolweave-bench-") as folder,
        open_checkpointer(Path(folder) / "checkpoints.sqlite", env={}) as saver,
    ):
        yield saver  # what an application gets: WAL, synchronous=NORMAL


class BareState(TypedDict):
    """State of the bare graph: one integer written by every node."""

    step: int


def build_bare_graph(nodes: int, saver: BaseCheckpointSaver[Any]) -> Any:
    """A compiled chain of ``nodes`` no-op nodes (each writes ``step``), the baseline."""

    def make(index: int) -> Callable[..., dict[str, int]]:
        def node(state: BareState) -> dict[str, int]:
            return {"step": index}

        return node

    graph = StateGraph(BareState)
    names = [f"n{i}" for i in range(nodes)]
    for i, name in enumerate(names):
        graph.add_node(name, make(i))
    for source, target in zip([START, *names], [*names, END], strict=True):
        graph.add_edge(source, target)
    return graph.compile(checkpointer=saver)


def question(text: str) -> dict[str, Any]:
    """A toolweave input with one human message."""
    return {"messages": [HumanMessage(content=text)]}


def fresh_config() -> dict[str, Any]:
    """A run config on a new thread id (a counter: no ``uuid4``/urandom in the timed path)."""
    return {"configurable": {"thread_id": f"bench-{next(_THREADS)}"}}


def invoker(graph: Any, inputs: dict[str, Any], durability: str = "async") -> Callable[[], object]:
    """A callable running one request of ``graph`` on a fresh thread."""

    def run() -> object:
        return graph.invoke(inputs, fresh_config(), durability=durability)

    return run


def count_steps(graph: Any, inputs: dict[str, Any]) -> int:
    """Node executions of one run, counted from ``stream_mode="updates"``."""
    return sum(len(u) for u in graph.stream(inputs, fresh_config(), stream_mode="updates"))


@dataclass(frozen=True)
class Timing:
    """Per-request wall times (and CPU times of the whole process) in milliseconds."""

    samples: tuple[float, ...]
    cpu: tuple[float, ...] = ()
    """``time.process_time()`` per request: every thread's CPU (LangGraph checkpoints
    in background threads), none of the waiting for a core on a shared machine."""

    @property
    def median(self) -> float:
        """Median ms per request."""
        return statistics.median(self.samples)

    @property
    def cpu_median(self) -> float:
        """Median CPU ms per request."""
        return statistics.median(self.cpu)

    @property
    def p95(self) -> float:
        """95th percentile ms per request (nearest rank)."""
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]


def time_interleaved(
    runs: Sequence[Callable[[], object]], requests: int, warmup: int
) -> list[Timing]:
    """Time each callable ``requests`` times, alternating them so drift hits all alike.

    A full collection runs before timing so earlier setup garbage is not billed
    to the first requests; the collector stays on (it is part of real overhead).
    Each round starts one callable later than the round before: a request's place
    in the round (after which other request, when the collector's next pass falls)
    moved one graph's median by 5-10 % against another's when the order was fixed.
    """
    for _ in range(warmup):
        for run in runs:
            run()
    gc.collect()
    samples: list[list[float]] = [[] for _ in runs]
    cpu: list[list[float]] = [[] for _ in runs]
    for round_no in range(requests):
        for offset in range(len(runs)):
            i = (round_no + offset) % len(runs)
            run = runs[i]
            start, start_cpu = time.perf_counter(), time.process_time()
            run()
            samples[i].append((time.perf_counter() - start) * 1000.0)
            cpu[i].append((time.process_time() - start_cpu) * 1000.0)
    return [Timing(tuple(s), tuple(c)) for s, c in zip(samples, cpu, strict=True)]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; floats get two decimals."""

    def cell(value: object) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    """``"yes"`` or ``"**NO**"`` for a target column."""
    return "yes" if ok else "**NO**"
