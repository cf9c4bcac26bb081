"""Orchestration overhead of task trees: a 10 x 3 forced-tool fan-out and a depth-4 chain.

A coordinator splits the root task; every subtask forces its tools
(``required_tool_names``), so no routing call is made below the root. The
assistant is zero-latency and the tools do nothing, so the time measured is
toolweave's and LangGraph's. Prints a markdown table.

Usage (from the repository root)::

    python -m bench.tree            # defaults
    python -m bench.tree --quick    # smoke run for CI
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import (
    CHECKPOINTERS,
    DURABILITIES,
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
from toolweave import AgentCoordinator, ChatbotTool, TaskInfo, build_graph
from toolweave.testing import FunctionAssistant

TARGET_MS_PER_TASK = 1.0
"""Orchestration ms per task (tools are no-ops, so their own time is ~0)."""
FAN_OUT = 10
TOOLS_PER_SUBTASK = 3
CHAIN_DEPTH = 4
DOMAIN = "bench"

Shape = Callable[[TaskInfo], list[TaskInfo]]


def fan_out(root: TaskInfo) -> list[TaskInfo]:
    """10 subtasks of the root, each forcing 3 distinct tools."""
    return [
        TaskInfo(
            task_no=f"1.{i + 1}",
            task_prompt=f"{root.task_prompt} (part {i + 1})",
            required_tool_names=[
                tool_name(i * TOOLS_PER_SUBTASK + k) for k in range(TOOLS_PER_SUBTASK)
            ],
        )
        for i in range(FAN_OUT)
    ]


def chain(root: TaskInfo) -> list[TaskInfo]:
    """Nested subtasks 1.1 > 1.1.1 > ... down to depth 4, each forcing one tool."""
    below: list[TaskInfo] = []
    for level in range(CHAIN_DEPTH, 0, -1):
        task = TaskInfo(
            task_no="1" + ".1" * level,
            task_prompt=f"{root.task_prompt} (level {level})",
            required_tool_names=[tool_name(level - 1)],
            sub_tasks=below,
        )
        below = [task]
    return below


class TreeCoordinator(ChatbotTool[Any], AgentCoordinator):
    """Splits the root task by a fixed shape; leaves every other task alone."""

    name = "tree_coordinator"
    priority = 10

    def __init__(self, shape: Shape) -> None:
        """Use ``shape(root)`` as the root's subtasks."""
        self._shape = shape

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """Attach the shape's subtasks to the root (C1)."""
        if task.task_no == "1":
            task.sub_tasks = self._shape(task)
        return task


def tree_graph(shape: Shape, tools: int, saver: Any) -> Any:
    """A graph over ``tools`` forced-only no-op tools and the shape's coordinator."""
    registry: list[ChatbotTool[Any]] = [
        *make_noop_tools(tools, routable=False),
        TreeCoordinator(shape),
    ]
    return build_graph(DOMAIN, registry, assistant=FunctionAssistant(), checkpointer=saver)


SHAPES: dict[str, tuple[Shape, int]] = {
    f"fan-out {FAN_OUT} x {TOOLS_PER_SUBTASK} forced tools": (fan_out, FAN_OUT * TOOLS_PER_SUBTASK),
    f"chain depth {CHAIN_DEPTH}, 1 forced tool each": (chain, CHAIN_DEPTH),
}


def tree_rows(requests: int, warmup: int, durability: str) -> list[list[Any]]:
    """Time every shape with every checkpointer kind."""
    rows: list[list[Any]] = []
    inputs = question("Tell me everything about parking.")
    for label, (shape, tools) in SHAPES.items():
        for kind in CHECKPOINTERS:
            with checkpointer(kind) as saver, checkpointer(kind) as bare_saver:
                graph = tree_graph(shape, tools, saver)
                probe = graph.invoke(inputs, fresh_config())
                tasks = len(list(_walk(probe["task"])))
                runs = len(probe["activated"])
                steps = count_steps(graph, inputs)
                bare = build_bare_graph(steps, bare_saver)
                timing, base = time_interleaved(
                    [invoker(graph, inputs, durability), invoker(bare, {"step": -1}, durability)],
                    requests,
                    warmup,
                )
            per_task = timing.median / tasks
            over_bare = (timing.median - base.median) / tasks
            cpu_over_bare = (timing.cpu_median - base.cpu_median) / tasks
            rows.append(
                [
                    label,
                    kind,
                    tasks,
                    runs,
                    steps,
                    probe["llm_calls"],
                    requests,
                    timing.median,
                    timing.p95,
                    per_task,
                    timing.median / steps,
                    base.median,
                    over_bare,
                    verdict(over_bare <= TARGET_MS_PER_TASK),
                    timing.cpu_median,
                    base.cpu_median,
                    cpu_over_bare,
                    verdict(cpu_over_bare <= TARGET_MS_PER_TASK),
                ]
            )
            print(f"  timed {label} / {kind}", file=sys.stderr, flush=True)
    return rows


def _walk(task: TaskInfo) -> Sequence[TaskInfo]:
    out = [task]
    for sub in task.sub_tasks:
        out.extend(_walk(sub))
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=None, help="timed requests per configuration (default 100)"
    )
    parser.add_argument("--warmup", type=int, default=None, help="untimed requests first")
    parser.add_argument(
        "--durability",
        choices=DURABILITIES,
        default="async",
        help="LangGraph checkpoint durability (default: its default, async)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 5 requests each")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the tree benchmarks and print the table."""
    args = parse_args(argv)
    started = time.perf_counter()
    requests = args.requests or (5 if args.quick else 100)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 5)
    rows = tree_rows(requests, warmup, args.durability)
    print("## Task-tree orchestration overhead (zero-latency FunctionAssistant, no-op tools)\n")
    print(
        markdown_table(
            [
                "tree",
                "checkpointer",
                "tasks",
                "tool runs",
                "steps",
                "llm_calls",
                "requests",
                "median ms",
                "p95 ms",
                "ms/task",
                "ms/step",
                "bare chain median ms",
                "over bare ms/task",
                f"<= {TARGET_MS_PER_TASK:g} ms/task over bare",
                "CPU ms",
                "bare CPU ms",
                "CPU over bare ms/task",
                f"CPU <= {TARGET_MS_PER_TASK:g} ms/task over bare",
            ],
            rows,
        )
    )
    print(
        "\nms/task = median ms per request / tasks (root included). over bare ms/task = "
        "(median - bare chain median) / tasks: toolweave's own orchestration per task on top "
        "of LangGraph running the same number of steps; the target (<= "
        f"{TARGET_MS_PER_TASK:g} ms per task on top of the tools' own time) is judged on it. "
        "Forced tools with a request field still get a (zero-latency) extraction call. "
        f"Bare chain = as many no-op nodes as steps; durability={args.durability}. "
        "CPU ms = median `time.process_time()` per request (all threads of the process, "
        "LangGraph's checkpoint threads included; no waiting for a core), interleaved the "
        "same way; CPU over bare ms/task is the same difference in CPU time."
    )
    print(f"\n_total runtime: {time.perf_counter() - started:.1f} s_")


if __name__ == "__main__":
    main()
