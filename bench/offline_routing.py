"""The offline model's routing decision, measured: accuracy on a labelled set, and its speed.

Two parts:

- **Decisions.** ``bench/data/routing_tools.jsonl`` holds 58 made-up tools of many
  families (weather, calendar, CRM, shipping, HR, library, banking, travel, ...);
  ``routing_calibration.jsonl`` and ``routing_heldout.jsonl`` hold English and
  Hungarian questions (paraphrases, typos, questions for two tools, questions no
  tool should take), split once by a hash of the question text. The offline
  router's rule (:class:`toolweave.llm.offline_routing.RoutingRule`) is fitted on
  the calibration part only (``--fit`` reruns the grid search); the table shows
  exact-set accuracy, no-route and over-route rates on both parts.
- **Speed.** A generated library of 1,700 tools (the 58 families with made-up
  product words, so the vocabulary grows with the library) routes a 220-character
  question; the table gives milliseconds per question at 17 and 1,700 tools and
  their ratio (the anchor is the 17-tool library in the same run).

Usage (from the repository root)::

    python -m bench.offline_routing           # both tables
    python -m bench.offline_routing --fit     # grid search on the calibration part
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_routing import RoutingRule, decide, score_tools
from toolweave.tools.base import ChatbotTool
from toolweave.tools.registry import AnyTool

DATA = Path(__file__).resolve().parent / "data"
SCALE_QUESTION = (
    "Could you please check for me whether it is going to rain in Szeged on Friday "
    "afternoon, and also tell me how much the postage would be for a two kilo parcel "
    "to Germany, because I am sending a birthday present?"
)


def load_jsonl(name: str) -> list[dict[str, Any]]:
    """The rows of one JSONL file under ``bench/data``."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def make_tool(name: str, description: str, routing_question: str) -> AnyTool:
    """A routable tool with the given texts (no request fields)."""
    cls = type(
        f"Tool_{name}",
        (ChatbotTool,),
        {"name": name, "description": description, "executable_instruction": routing_question},
    )
    tool: AnyTool = cls()
    return tool


def library() -> list[AnyTool]:
    """The 58 tools of the labelled set."""
    rows = load_jsonl("routing_tools.jsonl")
    return [make_tool(r["name"], r["description"], r["routing_question"]) for r in rows]


@dataclass(frozen=True)
class Scores:
    """Exact-set accuracy, no-route and over-route rates of one run."""

    questions: int
    exact: float
    no_route: float
    over_route: float


def evaluate(
    assistant: OfflineAssistant, tools: list[AnyTool], rows: list[dict[str, Any]]
) -> Scores:
    """Route every question; compare the routed set with the expected one."""
    exact = no_route = over = 0
    for row in rows:
        routed = {v.tool for v in assistant.route(row["question"], tools) if v.run}
        expected = set(row["expected"])
        exact += routed == expected
        no_route += bool(expected) and not routed
        over += len(routed) > len(expected)
    n = len(rows)
    return Scores(n, exact / n, no_route / n, over / n)


GRID: dict[str, tuple[Any, ...]] = {
    "min_score": (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0),
    "relative": (0.3, 0.5, 0.7, 0.8, 0.9, 1.0),
    "min_coverage": (0.0, 0.05, 0.1, 0.2, 0.3),
    "max_tools": (1, 2, 3),
    "min_extra": (0.5, 1.0, 1.3, 1.6, 2.0, 2.5),
    "tie": (0.95, 0.98, 1.01),
}


def fit(tools: list[AnyTool], rows: list[dict[str, Any]]) -> tuple[RoutingRule, Scores]:
    """Grid search of the rule's thresholds on ``rows`` (the calibration part only).

    Scores are computed once per question; each grid point only re-decides. Ties
    go to fewer over-routes, then to the stricter rule (higher ``min_score``, then
    higher ``min_coverage``): on a plateau the strictest rule still as accurate is
    the safest on libraries whose tools share domain words.
    """
    scored = [(score_tools(r["question"], tools), set(r["expected"])) for r in rows]
    best: tuple[tuple[float, ...], RoutingRule, Scores] | None = None
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        rule = replace(RoutingRule(), **dict(zip(keys, values, strict=True)))
        exact = no_route = over = 0
        for scores, expected in scored:
            routed = decide(scores, rule)
            exact += routed == expected
            no_route += bool(expected) and not routed
            over += len(routed) > len(expected)
        n = len(scored)
        result = Scores(n, exact / n, no_route / n, over / n)
        key = (result.exact, -result.over_route, rule.min_score, rule.min_coverage)
        if best is None or key > best[0]:
            best = (key, rule, result)
    assert best is not None
    return best[1], best[2]


def decision_table(assistant: OfflineAssistant) -> str:
    """The markdown table of both parts."""
    tools = library()
    lines = [
        "| part | questions | exact set | no route | over-route |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, name in (("calibration", "routing_calibration"), ("held-out", "routing_heldout")):
        s = evaluate(assistant, tools, load_jsonl(f"{name}.jsonl"))
        lines.append(
            f"| {label} | {s.questions} | {s.exact:.0%} | {s.no_route:.0%} | {s.over_route:.0%} |"
        )
    return "\n".join(lines)


def scaled_library(size: int, seed: int = 7) -> list[AnyTool]:
    """``size`` tools: the 58 families, each copy with its own made-up product words."""
    rng = random.Random(seed)
    base = load_jsonl("routing_tools.jsonl")
    letters = "bcdfghklmnprstvz"
    vowels = "aeiou"

    def word() -> str:
        return "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))

    tools: list[AnyTool] = []
    for index in range(size):
        row = base[index % len(base)]
        extra = " ".join(word() for _ in range(6))
        name = f"{row['name']}_{index}"
        tools.append(
            make_tool(
                name,
                f"{row['description']} Product line {extra}.",
                row["routing_question"].replace(row["name"], name, 1),
            )
        )
    return tools


def time_route(assistant: OfflineAssistant, tools: list[AnyTool], repeats: int) -> float:
    """Median milliseconds to route :data:`SCALE_QUESTION` over ``tools`` (first call dropped)."""
    assistant.route(SCALE_QUESTION, tools)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        assistant.route(SCALE_QUESTION, tools)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def speed_table(repeats: int) -> str:
    """Milliseconds per question at 17 and 1,700 tools, first and repeated calls."""
    small, large = scaled_library(17), scaled_library(1700)
    rows = ["| tools | first call (ms) | repeated call (ms, median) |", "|---:|---:|---:|"]
    measured = {}
    for tools in (small, large):
        assistant = OfflineAssistant()
        start = time.perf_counter()
        assistant.route(SCALE_QUESTION, tools)
        first = (time.perf_counter() - start) * 1000
        measured[len(tools)] = time_route(assistant, tools, repeats)
        rows.append(f"| {len(tools)} | {first:.0f} | {measured[len(tools)]:.1f} |")
    rows.append(f"| ratio 1,700 / 17 | | {measured[1700] / measured[17]:.0f}x |")
    return "\n".join(rows)


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="grid search on the calibration part")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    if args.fit:
        rule, scores = fit(library(), load_jsonl("routing_calibration.jsonl"))
        print(f"fitted on calibration: {rule} -> {scores}")
        print(decision_table(OfflineAssistant(routing=rule)))
    else:
        print(decision_table(OfflineAssistant()))
    if not args.no_speed:
        print()
        print(speed_table(args.repeats))


if __name__ == "__main__":
    main()
