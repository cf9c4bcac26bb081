"""Orchestration overhead of a single-tool request, next to a bare LangGraph chain.

Prints markdown tables. First the issue-16 ratio: wall and CPU per request of
toolweave (10 tools, ``InMemorySaver``) against a bare LangGraph chain of the same
supersteps, per durability mode, with the target (SPEC PF1: <= 1.3x) met or the gap split
into its causes (a third graph, the bare chain over toolweave's state channels
with conditional edges, separates LangGraph's per-step work over that layout from
toolweave's own). Then ms per request (median, p95) for 10/100/1000 registered
tools with ``InMemorySaver`` and ``SqliteSaver``, each next to a bare graph of
as many no-op nodes as the toolweave run executes; LLM calls per request; and
the characters of the routing prompt per request and per candidate tool.

Usage (from the repository root)::

    python -m bench.overhead               # defaults, about a minute on 2 cores
    python -m bench.overhead --ratio-only  # just the ratio table (docs/benchmarks-overhead.md)
    python -m bench.overhead --quick       # smoke run for CI, a few seconds
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from bench.harness import (
    CHECKPOINTERS,
    DURABILITIES,
    Timing,
    build_bare_graph,
    checkpointer,
    count_steps,
    fresh_config,
    invoker,
    make_noop_tools,
    markdown_table,
    question,
    time_interleaved,
    tool_name,
    verdict,
)
from toolweave import ChatbotTool, EmptyRequest, GraphState, build_graph
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.testing import FunctionAssistant, ScriptedChatModel

TARGET_MEDIAN_MS = 5.0
"""Median ms per single-tool request, 10 tools, in memory."""
TARGET_RATIO = 1.5
"""toolweave / bare graph, medians."""
TARGET_LLM_CALLS = 2
"""Fused route/extract + answer: a first message is not normalized by the model (A10)."""
TOOL_COUNTS = (10, 100, 1000)
DOMAIN = "bench"
OVERHEAD_HEADERS = (
    "tools|checkpointer|steps|requests|toolweave median ms|toolweave p95 ms"
    "|bare median ms|bare p95 ms|ratio|on target"
)
PROMPT_HEADERS = (
    "tools|routing call|prompt chars|chars/candidate|schema chars|schema chars/candidate"
    "|total chars/candidate|requests|median ms (fake model)"
)


def single_tool_text(target: str) -> str:
    """The benchmark question: it concerns exactly one tool."""
    return f"What does {target} say about parking?"


def function_assistant(target: str) -> FunctionAssistant:
    """Zero-latency assistant whose routing picks exactly ``target``."""
    chosen = [target]
    return FunctionAssistant(route=lambda text, tools: chosen)


def overhead_rows(
    counts: Sequence[int], requests: dict[int, int], warmup: int, durability: str
) -> list[list[Any]]:
    """Time toolweave and the bare chain, interleaved, per tool count and checkpointer."""
    rows: list[list[Any]] = []
    for count in counts:
        tools = make_noop_tools(count)
        target = tool_name(count // 2)
        inputs = question(single_tool_text(target))
        for kind in CHECKPOINTERS:
            with checkpointer(kind) as saver, checkpointer(kind) as bare_saver:
                graph = build_graph(
                    DOMAIN, tools, assistant=function_assistant(target), checkpointer=saver
                )
                steps = count_steps(graph, inputs)
                bare = build_bare_graph(steps, bare_saver)
                timings = time_interleaved(
                    [invoker(graph, inputs, durability), invoker(bare, {"step": -1}, durability)],
                    requests[count],
                    warmup,
                )
            tw, base = timings
            ratio = tw.median / base.median
            target_ok = ratio <= TARGET_RATIO
            if count == 10 and kind == "memory":
                target_ok = target_ok and tw.median <= TARGET_MEDIAN_MS
            rows.append(
                [
                    count,
                    kind,
                    steps,
                    requests[count],
                    tw.median,
                    tw.p95,
                    base.median,
                    base.p95,
                    f"{ratio:.2f}x",
                    verdict(target_ok),
                ]
            )
            print(f"  timed {count} tools / {kind}", file=sys.stderr, flush=True)
    return rows


TARGET_BARE_RATIO = 1.3
"""SPEC PF1 (issue 16 asked 1.2x): toolweave / bare chain of the same supersteps."""
RATIO_HEADERS = (
    "durability|steps|channels (toolweave / bare)|checkpoint puts + writes per request"
    " (toolweave / bare)|toolweave wall ms|bare wall ms|wall ratio|toolweave CPU ms"
    "|layout CPU ms|static layout CPU ms|bare CPU ms|CPU ratio|<= 1.3x"
)


class CountingSaver(InMemorySaver):
    """An ``InMemorySaver`` that counts checkpoints (``put``) and pending writes stored.

    The counts live in one shared dict: toolweave runs on a shallow copy of its saver
    (the one reading with the graph's msgpack allowlist), which shares it.
    """

    def __init__(self) -> None:
        """Start with both counts at zero."""
        super().__init__()
        self.counts = {"puts": 0, "writes": 0}

    @property
    def puts(self) -> int:
        """Checkpoints stored."""
        return self.counts["puts"]

    @property
    def stored_writes(self) -> int:
        """Pending writes stored."""
        return self.counts["writes"]

    def reset(self) -> None:
        """Both counts back to zero."""
        self.counts["puts"] = self.counts["writes"] = 0

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Count one checkpoint, then store it."""
        self.counts["puts"] += 1
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Count the task's writes, then store them."""
        self.counts["writes"] += len(writes)
        super().put_writes(config, writes, task_id, task_path)


def build_layout_graph(nodes: int, saver: Any, *, conditional: bool = True) -> Any:
    """The bare chain over toolweave's state channels, routed by conditional edges.

    Each no-op node writes one key, as the bare chain's nodes do; what it adds to the
    bare chain is LangGraph's per-step work over toolweave's channel layout and (with
    ``conditional``) its conditional-edge routing, which copies every channel to read
    the state after each node.
    """

    def node(state: Any) -> dict[str, Any]:
        return {"terminal": None}

    graph = StateGraph(GraphState)
    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        graph.add_node(name, node)
    graph.add_edge(START, names[0])
    for source, target in zip(names, [*names[1:], END], strict=True):
        if conditional:
            graph.add_conditional_edges(source, lambda state, to=target: to, [target])
        else:
            graph.add_edge(source, target)
    return graph.compile(checkpointer=saver)


def _per_request(saver: CountingSaver, requests: int) -> str:
    return f"{(saver.puts + saver.stored_writes) / requests:.0f}"


def ratio_rows(
    durabilities: Sequence[str], requests: int, warmup: int
) -> tuple[list[list[Any]], list[str]]:
    """Time toolweave against the bare chain per durability mode (10 tools, memory saver).

    Returns:
        The table rows and, per mode, one line on the target: met, or the gap and
        where it goes (LangGraph over toolweave's layout vs toolweave's own work).
    """
    tools = make_noop_tools(10)
    target = tool_name(5)
    inputs = question(single_tool_text(target))
    rows: list[list[Any]] = []
    notes: list[str] = []
    for durability in durabilities:
        savers = [CountingSaver(), CountingSaver(), CountingSaver(), CountingSaver()]
        graph = build_graph(
            DOMAIN, tools, assistant=function_assistant(target), checkpointer=savers[0]
        )
        steps = count_steps(graph, inputs)
        layout = build_layout_graph(steps, savers[1])
        static = build_layout_graph(steps, savers[3], conditional=False)
        bare = build_bare_graph(steps, savers[2])
        runs = [
            invoker(graph, inputs, durability),
            invoker(layout, {"terminal": None}, durability),
            invoker(bare, {"step": -1}, durability),
            invoker(static, {"terminal": None}, durability),
        ]
        for _ in range(warmup):
            for run in runs:
                run()
        for saver in savers:
            saver.reset()
        tw, lay, base, stat = time_interleaved(runs, requests, 0)
        calls = requests
        wall, cpu = tw.median / base.median, tw.cpu_median / base.cpu_median
        rows.append(
            [
                durability,
                steps,
                f"{len(graph.channels)} / {len(bare.channels)}",
                f"{_per_request(savers[0], calls)} / {_per_request(savers[2], calls)}",
                tw.median,
                base.median,
                f"{wall:.2f}x",
                tw.cpu_median,
                lay.cpu_median,
                stat.cpu_median,
                base.cpu_median,
                f"{cpu:.2f}x",
                verdict(wall <= TARGET_BARE_RATIO and cpu <= TARGET_BARE_RATIO),
            ]
        )
        notes.append(
            _gap_note(durability, tw.cpu_median, lay.cpu_median, stat.cpu_median, base.cpu_median)
        )
    return rows, notes


def _gap_note(durability: str, toolweave: float, layout: float, static: float, bare: float) -> str:
    """The target met, or toolweave's extra CPU split by cause."""
    budget = bare * TARGET_BARE_RATIO
    if toolweave <= budget:
        return f"- durability={durability}: target met ({toolweave / bare:.2f}x CPU)."
    extra = toolweave - bare
    channels = static - bare
    routing = layout - static
    own = toolweave - layout
    return (
        f"- durability={durability}: {toolweave - budget:.2f} ms CPU over the "
        f"{TARGET_BARE_RATIO:g}x budget. "
        f"Of the {extra:.2f} ms toolweave adds: {channels:.2f} ms ({channels / extra:.0%}) "
        "LangGraph's per-step work over toolweave's channels (static layout - bare), "
        f"{routing:.2f} ms ({routing / extra:.0%}) its conditional edges (a branch run after "
        f"each node: a fresh state read, then the route; layout - static layout), {own:.2f} ms "
        f"({own / extra:.0%}) toolweave's own work: input checks, the phase nodes "
        "(normalization, gates, routing, the tool, the answer), ledger entries and typed "
        "state written and checkpointed (toolweave - layout)."
    )


def routing_reply(tools: Sequence[ChatbotTool[Any]], target: str, *, fused: bool) -> dict[str, Any]:
    """Canned routing reply: ``target`` runs, every other candidate does not."""
    reply: dict[str, Any] = {}
    for tool in tools:
        run = tool.name == target
        entry: dict[str, Any] = {"reason": "asked" if run else "not asked", "run": run}
        if fused and tool.request_model.model_fields:
            entry["request"] = {"topic": "parking"} if run else None
        reply[tool.name] = entry
    return reply


def chat_script(
    tools: Sequence[ChatbotTool[Any]], target: str, text: str, *, fused: bool
) -> list[Any]:
    """The replies of one request: routing (+ extraction when unfused), answer (A10)."""
    script: list[Any] = [routing_reply(tools, target, fused=fused)]
    if not fused and tools[0].request_model.model_fields:
        script.append({"topic": "parking"})
    return [*script, "It says: pay at the gate."]


def run_chat(
    tools: Sequence[ChatbotTool[Any]], target: str, *, fused: bool, requests: int
) -> tuple[int, int, dict[str, int], float]:
    """Run ``requests`` single-tool requests over a recording fake chat model.

    Returns:
        State ``llm_calls``, model calls recorded, the routing call's sizes in
        characters (``prompt`` = system + human message, ``schema`` = the tool
        JSON schema bound for structured output) and the median ms per request.
    """
    model = ScriptedChatModel()
    assistant = ChatModelAssistant(model, fuse_routing=fused, max_retries=0)
    text = single_tool_text(target)
    with checkpointer("memory") as saver:
        graph = build_graph(DOMAIN, tools, assistant=assistant, checkpointer=saver)
        samples: list[float] = []
        state: dict[str, Any] = {}
        for _ in range(requests):
            model.script = chat_script(tools, target, text, fused=fused)
            before = len(model.calls)
            start = time.perf_counter()
            state = graph.invoke(question(text), fresh_config())
            samples.append((time.perf_counter() - start) * 1000.0)
    calls = model.calls[before:]
    routing = next(c for c in calls if c.tools and "Tool" in c.tools[0]["function"]["name"])
    sizes = {
        "prompt": len(routing.system) + len(routing.human),
        "system": len(routing.system),
        "schema": len(json.dumps(routing.tools)),
    }
    return state["llm_calls"], len(calls), sizes, statistics.median(samples)


def llm_call_rows() -> list[list[Any]]:
    """LLM calls of one single-tool request (10 tools) per assistant and tool shape."""
    rows: list[list[Any]] = []
    target = tool_name(5)
    for label, request_model in (("no fields", EmptyRequest), ("one field", None)):
        tools = (
            make_noop_tools(10)
            if request_model is None
            else make_noop_tools(10, request_model=request_model)
        )
        graph = build_graph(DOMAIN, tools, assistant=function_assistant(target))
        state = graph.invoke(question(single_tool_text(target)), fresh_config())
        rows.append(
            [
                f"FunctionAssistant (tool: {label})",
                state["llm_calls"],
                "-",
                "(reference: counts its normalize as a call)",
            ]
        )
    for fused in (True, False):
        calls, recorded, _, _ = run_chat(make_noop_tools(10), target, fused=fused, requests=1)
        rows.append(
            [
                f"ChatModelAssistant fuse_routing={fused} (tool: one field)",
                calls,
                recorded,
                verdict(calls <= TARGET_LLM_CALLS) if fused else "(reference)",
            ]
        )
    return rows


def prompt_rows(counts: Sequence[int], requests: dict[int, int]) -> list[list[Any]]:
    """Routing-prompt characters per request and per candidate, fused and unfused call."""
    rows: list[list[Any]] = []
    for count in counts:
        tools = make_noop_tools(count)
        runs = max(3, requests[count] // 10)
        for fused in (True, False):
            _, _, sizes, median = run_chat(tools, tool_name(count // 2), fused=fused, requests=runs)
            rows.append(
                [
                    count,
                    "fused route+extract" if fused else "routing only",
                    sizes["prompt"],
                    f"{sizes['prompt'] / count:.1f}",
                    sizes["schema"],
                    f"{sizes['schema'] / count:.1f}",
                    f"{(sizes['prompt'] + sizes['schema']) / count:.1f}",
                    runs,
                    median,
                ]
            )
    return rows


SYNC_HEADERS = "synchronous|requests|median ms|p95 ms|x NORMAL"


def sync_rows(requests: int, warmup: int, durability: str) -> list[list[Any]]:
    """Single-tool requests (10 tools) on SQLite threads per ``PRAGMA synchronous``, interleaved.

    Each level gets its own file through :func:`toolweave.open_checkpointer`, the way
    an application opens it.
    """
    import tempfile

    from toolweave.persistence import SqliteSynchronous, open_checkpointer

    tools = make_noop_tools(10)
    target = tool_name(5)
    inputs = question(single_tool_text(target))
    levels: tuple[SqliteSynchronous, ...] = ("NORMAL", "FULL")
    with (
        tempfile.TemporaryDirectory(prefix="toolweave-sync-") as folder,
        contextlib.ExitStack() as stack,
    ):
        graphs = []
        for level in levels:
            saver = stack.enter_context(
                open_checkpointer(f"{folder}/{level}.db", env={}, sqlite_synchronous=level)
            )
            graphs.append(
                build_graph(DOMAIN, tools, assistant=function_assistant(target), checkpointer=saver)
            )
        timings = time_interleaved(
            [invoker(graph, inputs, durability) for graph in graphs], requests, warmup
        )
    normal = timings[0].median
    return [
        [level, requests, timing.median, timing.p95, f"{timing.median / normal:.2f}x"]
        for level, timing in zip(levels, timings, strict=True)
    ]


TARGET_CPU_RATIO = 1.0
"""toolweave CPU per request / create_agent's, at 10 and 100 tools (issue 20 item 5)."""
CPU_TARGET_COUNTS = (10, 100)
CPU_HEADERS = (
    "tools|question per request|requests x runs|toolweave CPU ms|create_agent CPU ms|ratio"
    "|ratio range|toolweave model calls|create_agent model calls|toolweave chars sent"
    "|create_agent chars sent|<= 1.0x at 10 and 100 tools"
)


def sent_chars(calls: Sequence[Any]) -> int:
    """Characters sent over ``calls``: every message's text and the bound tool schemas."""
    return sum(
        sum(len(m.text) + len(json.dumps(getattr(m, "tool_calls", None) or [])) for m in c.messages)
        + len(json.dumps(c.tools))
        for c in calls
    )


def agent_tools(count: int) -> list[Any]:
    """``count`` LangChain tools with the same names and request model as the toolweave ones."""
    from langchain_core.tools import StructuredTool

    from bench.harness import TopicRequest

    def make(name: str) -> Any:
        def run(topic: str | None = None) -> str:
            return f"{name} says hi"

        return StructuredTool.from_function(
            run,
            name=name,
            description=f"{name}: does the user ask about {name}?",
            args_schema=TopicRequest,
        )

    return [make(tool_name(i)) for i in range(count)]


def agent_script(target: str) -> list[Any]:
    """The fake model of create_agent: one call of ``target``, then the final answer."""
    from langchain_core.messages import AIMessage

    call = {"name": target, "args": {"topic": "parking"}, "id": "call_1"}
    return [AIMessage(content="", tool_calls=[call]), "It says: pay at the gate."]


def _scripted_run(graph: Any, model: ScriptedChatModel, script: list[Any], text: str) -> None:
    """One request: reload the fake model's script, invoke on a fresh thread."""
    model.script = list(script)
    graph.invoke(question(text), fresh_config())


def cpu_row(count: int, requests: int, warmup: int, *, vary: bool = False) -> list[Any]:
    """CPU time per request (``time.process_time``): toolweave next to ``create_agent``.

    Both use one :class:`ScriptedChatModel` each (the same fake: it records the
    call and returns the scripted reply) and an ``InMemorySaver``, a fresh thread
    per request, interleaved in one process. toolweave runs normalize, one fused
    route+extract call and the answer; create_agent a tool call and a final answer.
    ``vary``: every request asks about another tool, so above the pre-filter's cap
    (T12) every request offers the routing call another candidate set.
    """
    from langchain.agents import create_agent

    tools = make_noop_tools(count)
    targets = [
        tool_name((count // 2 + 7 * i) % count) if vary else tool_name(count // 2)
        for i in range(warmup + requests)
    ]
    tw_model, agent_model = ScriptedChatModel(), ScriptedChatModel()
    assistant = ChatModelAssistant(tw_model, fuse_routing=True, max_retries=0)
    with checkpointer("memory") as saver, checkpointer("memory") as agent_saver:
        graph = build_graph(DOMAIN, tools, assistant=assistant, checkpointer=saver)
        agent = create_agent(agent_model, agent_tools(count), checkpointer=agent_saver)

        def runs(target: str) -> tuple[Any, Any]:
            text = single_tool_text(target)
            return (
                functools.partial(
                    _scripted_run,
                    graph,
                    tw_model,
                    chat_script(tools, target, text, fused=True),
                    text,
                ),
                functools.partial(_scripted_run, agent, agent_model, agent_script(target), text),
            )

        for target in targets[:warmup]:
            for run in runs(target):
                run()
        calls_before = (len(tw_model.calls), len(agent_model.calls))
        gc.collect()
        samples: list[list[float]] = [[], []]
        for target in targets[warmup:]:
            for i, run in enumerate(runs(target)):
                start = time.process_time()
                run()
                samples[i].append((time.process_time() - start) * 1000.0)
    tw_cpu, ag_cpu = (statistics.median(sample) for sample in samples)
    ratio = tw_cpu / ag_cpu
    return [
        count,
        "a different tool each" if vary else "the same",
        requests,
        tw_cpu,
        ag_cpu,
        f"{ratio:.2f}x",
        (len(tw_model.calls) - calls_before[0]) / requests,
        (len(agent_model.calls) - calls_before[1]) / requests,
        round(sent_chars(tw_model.calls[calls_before[0] :]) / requests),
        round(sent_chars(agent_model.calls[calls_before[1] :]) / requests),
        verdict(ratio <= TARGET_CPU_RATIO) if count in CPU_TARGET_COUNTS else "(reported)",
    ]


def cpu_summary(count: int, requests: int, warmup: int, *, vary: bool, runs: int) -> list[Any]:
    """:func:`cpu_row` ``runs`` times (each a fresh pair of graphs): medians and the ratio's range.

    One run's ratio moves by a few per cent on a shared machine; the table gives the
    median of the runs' CPU times and ratios, and the lowest and highest ratio.
    """
    rows = [cpu_row(count, requests, warmup, vary=vary) for _ in range(runs)]
    ratios = sorted(row[3] / row[4] for row in rows)
    ratio = statistics.median(ratios)
    first = rows[0]
    return [
        count,
        first[1],
        f"{requests} x {runs}",
        statistics.median(row[3] for row in rows),
        statistics.median(row[4] for row in rows),
        f"{ratio:.2f}x",
        f"{ratios[0]:.2f}-{ratios[-1]:.2f}x",
        *first[6:10],
        verdict(ratio <= TARGET_CPU_RATIO) if count in CPU_TARGET_COUNTS else "(reported)",
    ]


def cpu_rows(
    counts: Sequence[int], requests: dict[int, int], warmup: int, runs: int = 1
) -> list[list[Any]]:
    """:func:`cpu_summary` per registered tool count, the same question and a different one."""
    rows = []
    for count in counts:
        for vary in (False, True):
            rows.append(cpu_summary(count, requests[count], warmup, vary=vary, runs=runs))
        print(f"  CPU timed {count} tools", file=sys.stderr, flush=True)
    return rows


PF1_BARE_RATIO = 1.3
"""SPEC PF1: toolweave CPU per request / a bare LangGraph chain of the same supersteps."""
PF1_AGENT_RATIO = 1.0
"""SPEC PF1: toolweave CPU per request / ``create_agent``'s, the same single-tool question."""
PF1_SAVERS = ("none", "memory")
"""PF1 asks for both: no checkpointer and ``InMemorySaver``."""
PF1_HEADERS = (
    "tools|question per request|checkpointer|steps (toolweave / create_agent)|requests"
    "|toolweave (function) CPU ms|bare CPU ms|vs bare|<= 1.3x"
    "|toolweave (chat model) CPU ms|create_agent CPU ms|vs create_agent|<= 1.0x"
)


def _saver(kind: str) -> Any:
    return InMemorySaver() if kind == "memory" else None


def pf1_targets(count: int, total: int, *, vary: bool) -> list[str]:
    """The tool each request asks about: always the middle one, or another one each time."""
    return [
        tool_name((count // 2 + 7 * i) % count) if vary else tool_name(count // 2)
        for i in range(total)
    ]


def named_in_text() -> FunctionAssistant:
    """Zero-latency assistant routing to the tools the question names (one here)."""
    return FunctionAssistant(route=lambda text, tools: [t.name for t in tools if t.name in text])


def pf1_timings(
    count: int, kind: str, *, vary: bool, requests: int, warmup: int
) -> tuple[int, int, list[Timing]]:
    """CPU per request of toolweave, the bare chain and ``create_agent``, interleaved.

    Two toolweave graphs: one over a zero-latency :class:`FunctionAssistant` (no
    model machinery at all) against the bare chain of as many no-op nodes as it runs
    supersteps; one over ``ChatModelAssistant`` (fused routing) and a
    :class:`ScriptedChatModel` against ``create_agent`` over another one with the
    same tools, so both sides pay LangChain's model calls. Each request is on a
    fresh thread; ``kind`` is ``"none"`` (no checkpointer) or ``"memory"``.

    Returns:
        toolweave's supersteps, create_agent's, and the four timings: toolweave
        (function assistant), bare, toolweave (chat model), create_agent.
    """
    from langchain.agents import create_agent

    tools = make_noop_tools(count)
    tw_model, agent_model = ScriptedChatModel(), ScriptedChatModel()
    assistant = ChatModelAssistant(tw_model, fuse_routing=True, max_retries=0)
    light = build_graph(DOMAIN, tools, assistant=named_in_text(), checkpointer=_saver(kind))
    graph = build_graph(DOMAIN, tools, assistant=assistant, checkpointer=_saver(kind))
    agent = create_agent(agent_model, agent_tools(count), checkpointer=_saver(kind))
    first = tool_name(count // 2)
    text = single_tool_text(first)
    steps = count_steps(light, question(text))
    agent_model.script = agent_script(first)
    agent_steps = count_steps(agent, question(text))
    bare = build_bare_graph(steps, _saver(kind))
    asked = pf1_targets(count, warmup + requests, vary=vary)
    scripts = {
        target: (
            chat_script(tools, target, single_tool_text(target), fused=True),
            agent_script(target),
        )
        for target in set(asked)
    }
    # each of the four runs takes the next question in turn: one list, four times over
    targets = iter([target for target in asked for _ in range(4)])

    def light_run() -> None:
        light.invoke(question(single_tool_text(next(targets))), fresh_config())

    def bare_run() -> None:
        next(targets)
        bare.invoke({"step": -1}, fresh_config())

    def tw_run() -> None:
        target = next(targets)
        _scripted_run(graph, tw_model, scripts[target][0], single_tool_text(target))

    def agent_run() -> None:
        target = next(targets)
        _scripted_run(agent, agent_model, scripts[target][1], single_tool_text(target))

    timings = time_interleaved([light_run, bare_run, tw_run, agent_run], requests, warmup)
    return steps, agent_steps, timings


def pf1_row(count: int, kind: str, *, vary: bool, requests: int, warmup: int) -> list[Any]:
    """One row of the PF1 table: CPU medians and both ratios."""
    steps, agent_steps, (light, bare, tw, agent) = pf1_timings(
        count, kind, vary=vary, requests=requests, warmup=warmup
    )
    vs_bare, vs_agent = light.cpu_median / bare.cpu_median, tw.cpu_median / agent.cpu_median
    return [
        count,
        "a different tool each" if vary else "the same",
        kind,
        f"{steps} / {agent_steps}",
        requests,
        light.cpu_median,
        bare.cpu_median,
        f"{vs_bare:.2f}x",
        verdict(vs_bare <= PF1_BARE_RATIO),
        tw.cpu_median,
        agent.cpu_median,
        f"{vs_agent:.2f}x",
        verdict(vs_agent <= PF1_AGENT_RATIO),
    ]


def pf1_rows(counts: Sequence[int], requests: dict[int, int], warmup: int) -> list[list[Any]]:
    """:func:`pf1_row` per tool count, question kind and checkpointer."""
    rows = []
    for count in counts:
        for vary in (False, True):
            for kind in PF1_SAVERS:
                rows.append(
                    pf1_row(count, kind, vary=vary, requests=requests[count], warmup=warmup)
                )
                print(
                    f"  PF1 timed {count} tools / {kind} / vary={vary}", file=sys.stderr, flush=True
                )
    return rows


PARTS_HEADERS = (
    "part switched off|what it buys|checkpointer|requests|toolweave CPU ms|without it CPU ms"
    "|it costs ms|share of toolweave"
)
NODES_HEADERS = "node|body CPU ms (no checkpointer)|body CPU ms (InMemorySaver)|what it does"
NODE_ROLES = {
    "normalize": "the question, language, key words; the domain, system and eligibility "
    "gates (A1, A2, T2-T4); the task tree's root; its ledger entry",
    "route": "the pre-filter, the routing verdicts and extraction, A8/A9's guards, the "
    "tools queued (A5, A6); routing ledger entries and the routed event",
    "execute": "the tool's call with its context, idempotency key and progress sink "
    "(Q6, P1); the result into context buffer and documents (B1, R6); its ledger entry",
    "answer": "the answer from the context (R1, R2), its sources (R9), the task tree "
    "nested for the output; its ledger entry",
}


def _without_key(key: str) -> Any:
    """A node-body wrapper dropping ``key`` from the node's update (bench-only switch)."""

    def wrap(func: Any) -> Any:
        def body(*args: Any, **kwargs: Any) -> Any:
            update = func(*args, **kwargs)
            if isinstance(update, dict) and key in update:
                update = {k: v for k, v in update.items() if k != key}
            return update

        return body

    return wrap


def _wrap_nodes(graph: Any, wrap: Any, names: Sequence[str] | None = None) -> None:
    """Wrap the sync body of ``graph``'s nodes (all, or ``names``) in place."""
    for name, node in graph.nodes.items():
        bound = node.bound
        if getattr(bound, "func", None) is not None and (names is None or name in names):
            bound.func = wrap(bound.func)


def _canned(graph: Any, name: str, inputs: dict[str, Any]) -> Any:
    """A wrapper returning node ``name``'s update of one real run, without running its body."""
    updates = [
        update[name]
        for update in graph.stream(inputs, fresh_config(), stream_mode="updates")
        if name in update
    ]
    return lambda func: lambda *args, **kwargs: updates[0]


@contextlib.contextmanager
def _patched(patches: Sequence[tuple[Any, str, Any]]) -> Any:
    """Set module attributes for the duration of one request (bench-only switches)."""
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in patches]
    for owner, attr, value in patches:
        setattr(owner, attr, value)
    try:
        yield
    finally:
        for owner, attr, value in saved:
            setattr(owner, attr, value)


def part_switches() -> list[tuple[str, str, Any, Sequence[tuple[Any, str, Any]]]]:
    """Each part of a run that can be switched off in the bench.

    Returns:
        ``(part, what it buys, node wrapper or None, module patches)`` per part.
    """
    import toolweave.graph.compiled as compiled
    import toolweave.graph.nodes as nodes
    import toolweave.graph.route as route
    import toolweave.graph.tool_call as tool_call
    import toolweave.tools.progress as progress

    return [
        (
            "ledger",
            "L1: every decision written down, checkpointed, in the output and traces",
            _without_key("ledger"),
            (),
        ),
        (
            "events",
            "P1-P3: the routed event and tool progress on stream_mode=custom",
            None,
            (
                (route, "routed_event", lambda *a, **k: {}),
                (progress, "tool_progress_event", lambda *a, **k: {}),
            ),
        ),
        (
            "idempotency key",
            "Q6: a stable key per tool call, so a re-run step can deduplicate",
            None,
            ((tool_call, "tool_call_key", lambda *a, **k: ""),),
        ),
        (
            "input checks",
            "X1, X5: the input checked and converted before anything is stored",
            None,
            ((compiled, "validate_input", lambda value, limits=None: value),),
        ),
        (
            "trace labels",
            'LangSmith runs named "<phase> <task>" with the ledger as metadata',
            None,
            ((nodes, "label_run", lambda *a, **k: None),),
        ),
    ]


EVERY_BODY = "every phase body"
EVERY_BODY_BUYS = (
    "the phases' own work (normalize, route, execute, answer: a canned update each); "
    "what is left is LangGraph over toolweave's graph, the floor of the ratio to bare"
)
PHASES = ("normalize", "route", "execute", "answer")
"""The nodes a single-tool request runs, one superstep each."""


def canned_graph(graph: Any, inputs: dict[str, Any]) -> Any:
    """``graph`` with every phase node's body replaced by the update one real run made."""
    for name in PHASES:
        _wrap_nodes(graph, _canned(graph, name, inputs), [name])
    return graph


def _fresh_run(graph: Any, inputs: dict[str, Any]) -> None:
    graph.invoke(inputs, fresh_config())


def floor_rows(requests: int, warmup: int) -> list[list[Any]]:
    """The floor of PF1's ratio: toolweave with every phase body canned, next to bare."""
    inputs = question(single_tool_text(tool_name(5)))
    rows = []
    for kind in PF1_SAVERS:
        full = build_graph(
            DOMAIN, make_noop_tools(10), assistant=named_in_text(), checkpointer=_saver(kind)
        )
        canned = canned_graph(
            build_graph(
                DOMAIN, make_noop_tools(10), assistant=named_in_text(), checkpointer=_saver(kind)
            ),
            inputs,
        )
        bare = build_bare_graph(len(PHASES), _saver(kind))
        runs = [
            functools.partial(_fresh_run, full, inputs),
            functools.partial(_fresh_run, canned, inputs),
            functools.partial(_fresh_run, bare, {"step": -1}),
        ]
        tw, floor, base = (t.cpu_median for t in time_interleaved(runs, requests, warmup))
        rows.append([kind, requests, tw, floor, base, f"{tw / base:.2f}x", f"{floor / base:.2f}x"])
    return rows


FLOOR_HEADERS = (
    "checkpointer|requests|toolweave CPU ms|every phase body canned CPU ms|bare CPU ms"
    "|toolweave / bare|canned / bare (the floor)"
)


def parts_rows(kind: str, requests: int, warmup: int) -> list[list[Any]]:
    """What each part costs: toolweave with it and without it, interleaved (10 tools).

    Every variant is its own graph (function assistant, the same single-tool
    question); a part is switched off by a bench-only wrapper around the nodes'
    bodies or by module attributes set for the duration of the variant's request.
    Normalisation is switched off by returning the update a real run's normalize
    made, so the superstep stays and only its body goes.
    """
    tools = make_noop_tools(10)
    inputs = question(single_tool_text(tool_name(5)))

    def build() -> Any:
        return build_graph(DOMAIN, tools, assistant=named_in_text(), checkpointer=_saver(kind))

    variants: list[tuple[str, str, Any, Sequence[tuple[Any, str, Any]]]] = [
        ("(none)", "", build(), ())
    ]
    for part, buys, wrap, patches in part_switches():
        graph = build()
        if wrap is not None:
            _wrap_nodes(graph, wrap)
        variants.append((part, buys, graph, patches))
    light = build()
    _wrap_nodes(light, _canned(light, "normalize", inputs), ["normalize"])
    variants.append(
        ("normalisation", "A1, A2, T2-T4: question, language, gates, offered tools", light, ())
    )
    variants.append((EVERY_BODY, EVERY_BODY_BUYS, canned_graph(build(), inputs), ()))

    def runner(graph: Any, patches: Sequence[tuple[Any, str, Any]]) -> Any:
        def run() -> None:
            with _patched(patches):
                answer = graph.invoke(inputs, fresh_config())["answer"]
            assert answer, "a switched-off part must not change the answer"

        return run

    timings = time_interleaved([runner(g, p) for _, _, g, p in variants], requests, warmup)
    full = timings[0].cpu_median
    rows = []
    for (part, buys, _, _), timing in zip(variants[1:], timings[1:], strict=True):
        cost = full - timing.cpu_median
        rows.append(
            [part, buys, kind, requests, full, timing.cpu_median, cost, f"{cost / full:.0%}"]
        )
    return rows


def node_rows(requests: int, warmup: int) -> list[list[Any]]:
    """Each phase node's body: ``time.thread_time()`` per request (10 tools, single tool)."""
    import collections

    inputs = question(single_tool_text(tool_name(5)))
    per_kind = []
    for kind in PF1_SAVERS:
        graph = build_graph(
            DOMAIN, make_noop_tools(10), assistant=named_in_text(), checkpointer=_saver(kind)
        )
        spent: collections.Counter[str] = collections.Counter()
        _time_nodes(graph, spent)
        for _ in range(warmup):
            graph.invoke(inputs, fresh_config())
        spent.clear()
        for _ in range(requests):
            graph.invoke(inputs, fresh_config())
        per_kind.append({name: ms * 1000.0 / requests for name, ms in spent.items()})
    return [
        [name, per_kind[0].get(name, 0.0), per_kind[1].get(name, 0.0), role]
        for name, role in NODE_ROLES.items()
    ]


def _time_nodes(graph: Any, spent: Any, running: list[str] | None = None) -> None:
    """Wrap each node's sync body: its ``time.thread_time()`` adds to ``spent[name]``.

    ``running[0]``, when given, names the node running (to attribute the calls inside it).
    """

    def timed(func: Any, name: str) -> Any:
        def body(*args: Any, **kwargs: Any) -> Any:
            if running is not None:
                running[0] = name
            start = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] += time.thread_time() - start

        return body

    for name, node in graph.nodes.items():
        if getattr(node.bound, "func", None) is not None:
            node.bound.func = timed(node.bound.func, name)


CHAT_NODES_HEADERS = (
    "graph|node|body CPU ms (no checkpointer)|of it in the model call|the node's own CPU ms"
    "|body CPU ms (InMemorySaver)|of it in the model call|the node's own CPU ms"
)


def _node_split(graph: Any, run: Any, requests: int, warmup: int) -> dict[str, tuple[float, float]]:
    """Per node: body CPU ms a request, and the part spent inside ``BaseChatModel.invoke``.

    ``time.thread_time()`` on the thread that runs the node (LangGraph runs one task inline);
    the model calls are attributed to the node running them.
    """
    import collections

    from langchain_core.language_models.chat_models import BaseChatModel

    spent: collections.Counter[str] = collections.Counter()
    in_model: collections.Counter[str] = collections.Counter()
    running: list[str] = [""]
    _time_nodes(graph, spent, running)
    invoke = BaseChatModel.invoke

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return invoke(self, *args, **kwargs)
        finally:
            in_model[running[0]] += time.thread_time() - start

    with _patched([(BaseChatModel, "invoke", counted)]):
        for _ in range(warmup):
            run()
        spent.clear()
        in_model.clear()
        for _ in range(requests):
            run()
    return {
        name: (ms * 1000.0 / requests, in_model[name] * 1000.0 / requests)
        for name, ms in spent.items()
    }


def chat_node_rows(requests: int, warmup: int) -> list[list[Any]]:
    """Each node of the chat-model request (10 tools): toolweave's and create_agent's.

    The same graphs as the PF1 table's chat-model columns; each node body's CPU, the
    model calls inside it (both sides call the same fake chat model) and the rest: the
    node's own Python, what the 1.0x create_agent target compares besides LangGraph's loop.
    """
    from langchain.agents import create_agent

    tools = make_noop_tools(10)
    target = tool_name(5)
    text = single_tool_text(target)
    per_kind: list[dict[str, dict[str, tuple[float, float]]]] = []
    for kind in PF1_SAVERS:
        tw_model, agent_model = ScriptedChatModel(), ScriptedChatModel()
        assistant = ChatModelAssistant(tw_model, fuse_routing=True, max_retries=0)
        graph = build_graph(DOMAIN, tools, assistant=assistant, checkpointer=_saver(kind))
        agent = create_agent(agent_model, agent_tools(10), checkpointer=_saver(kind))
        script = chat_script(tools, target, text, fused=True)
        per_kind.append(
            {
                "toolweave": _node_split(
                    graph,
                    functools.partial(_scripted_run, graph, tw_model, script, text),
                    requests,
                    warmup,
                ),
                "create_agent": _node_split(
                    agent,
                    functools.partial(
                        _scripted_run, agent, agent_model, agent_script(target), text
                    ),
                    requests,
                    warmup,
                ),
            }
        )
    rows: list[list[Any]] = []
    for side, nodes in (("toolweave", PHASES), ("create_agent", ("model", "tools"))):
        totals = [[0.0, 0.0], [0.0, 0.0]]
        for name in nodes:
            cells: list[Any] = [side, name]
            for i, found in enumerate(per_kind):
                body, model = found[side].get(name, (0.0, 0.0))
                totals[i][0] += body
                totals[i][1] += model
                cells += [body, model, body - model]
            rows.append(cells)
        rows.append(
            [side, "(all)", *(v for body, model in totals for v in (body, model, body - model))]
        )
    return rows


PF1_NOTE = (
    "\nCPU ms = median `time.process_time()` per request (every thread, so LangGraph's "
    "checkpoint threads count), the four graphs interleaved request by request in one "
    "process, a fresh thread each. toolweave (function): a zero-latency `FunctionAssistant` "
    "(no model machinery), against bare: a chain of as many no-op nodes as toolweave's "
    "supersteps, each writing one int. toolweave (chat model): `ChatModelAssistant` (fused "
    "routing) over `ScriptedChatModel`, against create_agent: the same tools (same names "
    "and request model) over another `ScriptedChatModel`, one tool call then the answer. "
    '"A different tool each": request i asks about another tool (another question text). '
    f"PF1: <= {PF1_BARE_RATIO:g}x bare and <= {PF1_AGENT_RATIO:g}x create_agent."
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests",
        type=int,
        default=None,
        help="timed requests per configuration (default 200; 50 for 1000 tools)",
    )
    parser.add_argument("--warmup", type=int, default=None, help="untimed requests first")
    parser.add_argument(
        "--tools", type=int, nargs="+", default=list(TOOL_COUNTS), help="registered tool counts"
    )
    parser.add_argument(
        "--durability",
        choices=DURABILITIES,
        default="async",
        help="LangGraph checkpoint durability (default: its default, async)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 5 requests each")
    parser.add_argument(
        "--ratio-only", action="store_true", help="only the ratio against bare LangGraph"
    )
    parser.add_argument(
        "--cpu-only", action="store_true", help="only the CPU table against create_agent"
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="only what each part of a run costs (node bodies, parts switched off)",
    )
    parser.add_argument(
        "--pf1",
        action="store_true",
        help="only PF1: CPU ratios against a bare chain and create_agent, both checkpointers",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="CPU table: runs per row (fresh graphs each); the median and the ratio's range",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run every measurement and print the tables."""
    args = parse_args(argv)
    started = time.perf_counter()
    default = 5 if args.quick else 200
    requests = {
        n: args.requests or (default if n < 1000 else max(5, default // 4)) for n in args.tools
    }
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 10)
    ratio_requests = args.requests or (5 if args.quick else 300)
    if args.parts:
        print(markdown_table(NODES_HEADERS.split("|"), node_rows(ratio_requests, warmup)))
        print()
        rows = [row for kind in PF1_SAVERS for row in parts_rows(kind, ratio_requests, warmup)]
        print(markdown_table(PARTS_HEADERS.split("|"), rows))
        print()
        print(markdown_table(FLOOR_HEADERS.split("|"), floor_rows(ratio_requests, warmup)))
        print()
        chat = chat_node_rows(ratio_requests, warmup)
        print(markdown_table(CHAT_NODES_HEADERS.split("|"), chat))
        return
    if args.pf1:
        print(markdown_table(PF1_HEADERS.split("|"), pf1_rows(args.tools, requests, warmup)))
        print(PF1_NOTE)
        return
    if args.cpu_only:
        rows = cpu_rows(args.tools, requests, warmup, args.runs)
        print(markdown_table(CPU_HEADERS.split("|"), rows))
        return
    print("## toolweave against bare LangGraph (10 tools, InMemorySaver, single-tool request)\n")
    rows, notes = ratio_rows(DURABILITIES, ratio_requests, warmup)
    print(markdown_table(RATIO_HEADERS.split("|"), rows))
    print(
        f"\nTarget: <= {TARGET_BARE_RATIO:g}x in wall and CPU time (medians of "
        f"{ratio_requests} interleaved requests, fresh thread each). Bare = chain of `steps` "
        "no-op nodes writing one int; layout = the same chain over toolweave's state "
        "channels, routed by conditional edges as toolweave's phases are; static layout = "
        "that chain with plain edges. Checkpoint puts + writes = `put` calls and pending "
        "writes stored per request.\n"
    )
    print("\n".join(notes))
    if args.ratio_only:
        print(f"\n_total runtime: {time.perf_counter() - started:.1f} s_")
        return
    print("\n## Orchestration overhead per single-tool request (zero-latency FunctionAssistant)\n")
    print(
        markdown_table(
            OVERHEAD_HEADERS.split("|"),
            overhead_rows(args.tools, requests, warmup, args.durability),
        )
    )
    print(
        f"\nTargets: median <= {TARGET_MEDIAN_MS:g} ms (10 tools, memory); "
        f"toolweave/bare <= {TARGET_RATIO:g}x (medians). Bare = chain of `steps` no-op "
        f"nodes, same checkpointer kind, fresh thread per request, durability={args.durability}.\n"
    )
    print("## LLM calls per single-tool request (10 tools)\n")
    print(
        markdown_table(
            ["assistant", "state llm_calls", "model calls recorded", f"<= {TARGET_LLM_CALLS}"],
            llm_call_rows(),
        )
    )
    print("\n## Routing prompt per request (ChatModelAssistant)\n")
    print(
        markdown_table(
            PROMPT_HEADERS.split("|"),
            prompt_rows(args.tools, requests),
        )
    )
    print(
        "\nprompt = system + human message of the routing call; schema = JSON of the "
        "structured-output tool bound to the call (also sent to the model)."
    )
    print("\n## SQLite threads: PRAGMA synchronous (10 tools, single-tool request)\n")
    sync_requests = requests[args.tools[0]]
    print(
        markdown_table(SYNC_HEADERS.split("|"), sync_rows(sync_requests, warmup, args.durability))
    )
    print(
        "\nBoth in WAL mode through `open_checkpointer(..., sqlite_synchronous=...)`; "
        "NORMAL is the default (see Durable threads)."
    )
    print("\n## CPU per request with a chat model: toolweave next to LangChain create_agent\n")
    rows = cpu_rows(args.tools, requests, warmup, args.runs)
    print(markdown_table(CPU_HEADERS.split("|"), rows))
    print(
        "\nCPU ms = median `time.process_time()` per request, both sides interleaved in one "
        "process over the same fake chat model (`toolweave.testing.ScriptedChatModel`: "
        "toolweave through `ChatModelAssistant` with fused routing, create_agent answering "
        "one tool call then a final answer), `InMemorySaver`, fresh thread per request. "
        '"A different tool each": request i asks about another tool, so at 100 and '
        "1,000 tools the pre-filter offers another 20 candidates each time. "
        f"Target: <= {TARGET_CPU_RATIO:g}x at 10 and 100 tools. Chars sent = every message's "
        "text and the bound tool schemas, summed over the request's model calls (A10). "
        "With `--runs N` each row is measured N times on fresh graphs: the CPU columns and "
        "the ratio are the runs' medians, the range the lowest and highest run's ratio."
    )
    print(f"\n_total runtime: {time.perf_counter() - started:.1f} s_")


if __name__ == "__main__":
    main()
