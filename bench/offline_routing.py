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
- **Off-topic.** Rows marked ``off_topic`` (greetings, small talk, pasted error
  messages, definitional questions, other organisations) expect no tool; the
  table's abstention column is the share of all no-tool rows that route nothing.
  The anchor is the pre-filter's ranking (T12) in the same run: its top-1 tool
  on the in-domain rows, against the router's exact set on the same rows.
- **Finished answers (A8, A9).** ``routing_korhaz.jsonl`` holds hospital questions,
  each with the terminal tool it must get (``emergency_numbers``,
  ``drug_interaction``, ``callback_request``) or none: described emergencies with
  no emergency keyword, information questions that share a word with a terminal
  tool, off-topic ones; split by the same hash. Each runs through the whole
  hospital graph; the table gives wrong finished answers (the patient got a
  finished answer the row does not expect: a tool's, or a withheld kind's text in
  its place, A7), missed ones, and the described emergencies that got the
  emergency numbers.
- **Speed.** A generated library of 1,700 tools (the 58 families with made-up
  product words, so the vocabulary grows with the library) routes a 220-character
  question; the table gives milliseconds per question at 17 and 1,700 tools and
  their ratio (the anchor is the 17-tool library in the same run).

Usage (from the repository root)::

    python -m bench.offline_routing           # both tables
    python -m bench.offline_routing --fit     # grid search on the calibration part
    python -m bench.offline_routing --no-speed  # the decision tables only
    python -m bench.offline_routing --semantic  # embeddings for what routes nothing
    python -m bench.offline_routing --model   # the hospital table with the configured model

``--model`` runs only the hospital table, end to end, with the chat model the
environment configures (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``TOOLWEAVE_MODEL``:
``local-llm env``); each row's finished answers go to stderr as it runs.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolweave.graph.candidates import keyword_evidence, terminal_verdict
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_routing import (
    RoutingEvidence,
    RoutingRule,
    decide,
    not_a_request,
    score_tools,
    task_words,
)
from toolweave.llm.port import LlmAssistant
from toolweave.tools.base import ChatbotTool
from toolweave.tools.prefilter import CandidateIndex, query_words
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
    """Share of the in-domain rows (some tool expected) that route nothing."""
    over_route: float
    abstain: float = 0.0
    """Share of the no-tool rows (off-topic) that route nothing."""
    exact_in_domain: float = 0.0
    top1: float = 0.0
    """The pre-filter ranking's top-1 tool is an expected one (in-domain rows)."""


def ranked(index: CandidateIndex, question: str, tools: list[AnyTool]) -> list[AnyTool]:
    """``tools`` best ranked first for ``question``, as the ``route`` node offers them (T12)."""
    place = {r.tool: r.rank for r in index.rank(question, [t.name for t in tools])}
    return sorted(tools, key=lambda tool: place[tool.name])


def score_rows(
    routed_sets: list[set[str]], rows: list[dict[str, Any]], top: list[str | None]
) -> Scores:
    """The table's rates from each row's routed set and the ranking's top-1 tool."""
    exact = no_route = over = abstain = exact_in = top1 = in_domain = 0
    for routed, row, first in zip(routed_sets, rows, top, strict=True):
        expected = set(row["expected"])
        exact += routed == expected
        over += len(routed) > len(expected)
        if expected:
            in_domain += 1
            no_route += not routed
            exact_in += routed == expected
            top1 += first in expected
        else:
            abstain += not routed
    n, off = len(rows), len(rows) - in_domain
    return Scores(
        n,
        exact / n,
        no_route / max(in_domain, 1),
        over / n,
        abstain / max(off, 1),
        exact_in / max(in_domain, 1),
        top1 / max(in_domain, 1),
    )


def evaluate(
    assistant: OfflineAssistant, tools: list[AnyTool], rows: list[dict[str, Any]]
) -> Scores:
    """Route every question (candidates in rank order); compare with the expected set."""
    index = CandidateIndex(tools)
    routed_sets: list[set[str]] = []
    top: list[str | None] = []
    for row in rows:
        offered = ranked(index, row["question"], tools)
        scores = index.scores(row["question"], [offered[0].name])
        top.append(offered[0].name if scores[offered[0].name] > 0 else None)
        routed_sets.append({v.tool for v in assistant.route(row["question"], offered) if v.run})
    return score_rows(routed_sets, rows, top)


MARGIN_GRID: dict[str, tuple[Any, ...]] = {
    "margin": (1.2, 1.5, 2.0, 3.0, 1e9),  # 1e9: only when no other tool has evidence
    "margin_score": (0.5, 1.0, 2.0, 3.0, 4.0, 6.0),
}
"""Fitted after :data:`GRID`, with its best point fixed (a joint grid is too large)."""

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
    index = CandidateIndex(tools)
    scored = [
        (score_tools(r["question"], ranked(index, r["question"], tools)), set(r["expected"]))
        for r in rows
    ]
    names = [tool.name for tool in tools]
    ranking = [(not_a_request(r["question"]), _top_two(r["question"], index, names)) for r in rows]
    best: tuple[tuple[float, ...], RoutingRule, Scores] | None = None
    for grid, start in ((GRID, RoutingRule(margin_score=float("inf"))), (MARGIN_GRID, None)):
        keys = list(grid)
        base = start or (best[1] if best else RoutingRule())
        for values in itertools.product(*(grid[k] for k in keys)):
            rule = replace(base, **dict(zip(keys, values, strict=True)))
            exact = no_route = over = abstain = 0
            for (scores, expected), (abstain_row, top) in zip(scored, ranking, strict=True):
                routed = set() if abstain_row else decide(scores, rule)
                if not routed and not abstain_row and top:
                    name, best_score, second = top
                    if best_score >= rule.margin_score and best_score >= rule.margin * second:
                        routed = {name}  # as ranking_winner decides
                exact += routed == expected
                no_route += bool(expected) and not routed
                over += len(routed) > len(expected)
                abstain += not expected and not routed
            n = len(scored)
            result = Scores(n, exact / n, no_route / n, over / n, abstain / n)
            key = (result.exact, -result.over_route, rule.min_score, rule.min_coverage)
            if best is None or key > best[0]:
                best = (key, rule, result)
    assert best is not None
    return best[1], best[2]


def _top_two(
    question: str, index: CandidateIndex, names: list[str]
) -> tuple[str, float, float] | None:
    """The BM25 best tool, its score and the second score (what ``ranking_winner`` weighs)."""
    words = " ".join(task_words(question))
    found = index.scores(words, names) if words else {}
    order = sorted(found.items(), key=lambda item: -item[1])
    if not order:
        return None
    return order[0][0], order[0][1], order[1][1] if len(order) > 1 else 0.0


def decision_table(assistant: OfflineAssistant) -> str:
    """The markdown table of both parts."""
    tools = library()
    lines = [
        "| part | questions | exact set | exact set, in-domain | ranking top-1, in-domain "
        "| routes nothing, in-domain | over-route | off-topic routes nothing |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, name in (("calibration", "routing_calibration"), ("held-out", "routing_heldout")):
        s = evaluate(assistant, tools, load_jsonl(f"{name}.jsonl"))
        lines.append(
            f"| {label} | {s.questions} | {s.exact:.1%} | {s.exact_in_domain:.1%} | "
            f"{s.top1:.1%} | {s.no_route:.1%} | {s.over_route:.1%} | {s.abstain:.1%} |"
        )
    return "\n".join(lines)


def held_out(question: str) -> bool:
    """The hash split of the hospital set: a third of the questions are held out."""
    return int(hashlib.sha256(question.encode()).hexdigest(), 16) % 3 == 0


def hospital() -> tuple[Any, list[AnyTool]]:
    """The ``korhaz`` domain and its routable candidates (the default retrieval aside)."""
    from toolweave_korhaz.plugin import load

    domain, tools = load()
    retrieval = domain.default_retrieval_tool
    return domain, [t for t in tools if t.executable_instruction and t.name != retrieval]


def finished_answers(
    question: str, routed: set[str], domain: Any, tools: list[AnyTool]
) -> set[str]:
    """The terminal tools that run after the A8 guard (as ``guard_terminal`` decides)."""
    index = _hospital_index(tuple(tools))
    ignore = {term for terms in query_words(domain.name) for term in terms}
    scores = keyword_evidence(index, question, tools, ignore)
    found = terminal_verdict(scores, RoutingEvidence(question, tools), tools, routed)
    runs = routed - found[1] if found else routed
    return {t.name for t in tools if t.name in runs and t.returns_answer}


@functools.lru_cache(maxsize=4)
def _hospital_index(tools: tuple[AnyTool, ...]) -> CandidateIndex:
    return CandidateIndex(tools)


NOT_RUN = " (withheld: not run)"
"""After a tool's name: a withheld text that says the tool did not run (a callback
nobody recorded): a miss for a row that expects the tool, a wrong answer for any
other."""
WITHHELD_AS = {"emergency": "emergency_numbers", "callback": f"callback_request{NOT_RUN}"}
"""What the patient got from each of the hospital's withheld kinds (A7) that stands
in for a tool: the emergency kind's text is the emergency numbers, the tool's own
answer; the callback kind's says no request was recorded. The third, "medication
advice", is a refusal to advise on medicines ("ask your doctor or pharmacist"), no
tool's answer: not counted."""


@dataclass(frozen=True)
class Finished:
    """Finished-answer rates of one part of the hospital set."""

    questions: int
    wrong: float
    """A terminal tool ran that the row does not expect."""
    missed: float
    """The row's terminal tool did not run."""
    emergencies: str
    """Described emergencies (no keyword) that got the emergency numbers, ``k/n``."""


def score_finished(rows: list[dict[str, Any]], ran: list[set[str]]) -> Finished:
    """The rates from each row's finished-answer tools."""
    wrong = missed = got = described = 0
    for row, terminal in zip(rows, ran, strict=True):
        expected = row["terminal"]
        wrong += bool(terminal - {expected, f"{expected}{NOT_RUN}"})
        missed += expected is not None and expected not in terminal
        if row["kind"] == "described emergency":
            described += 1
            got += "emergency_numbers" in terminal
    n = max(len(rows), 1)
    return Finished(len(rows), wrong / n, missed / n, f"{got}/{described}")


def finished_table(
    finish: Callable[[str], set[str]], rows: list[dict[str, Any]] | None = None
) -> str:
    """The markdown table of the hospital set's two parts.

    ``finish`` names each row's finished-answer tools.
    """
    rows = rows if rows is not None else load_jsonl("routing_korhaz.jsonl")
    lines = [
        "| part | questions | wrong finished answers | missed finished answers "
        "| described emergencies given the numbers |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, part in (("calibration", False), ("held-out", True)):
        chosen = [r for r in rows if held_out(r["question"]) == part]
        f = score_finished(chosen, [finish(r["question"]) for r in chosen])
        lines.append(
            f"| {label} | {f.questions} | {f.wrong:.1%} | {f.missed:.1%} | {f.emergencies} |"
        )
    return "\n".join(lines)


def routed_finish(route: Callable[[str, list[AnyTool]], set[str]]) -> Callable[[str], set[str]]:
    """Routing level: the terminal tools ``route`` routes that pass the A8 guard."""
    domain, tools = hospital()
    index = _hospital_index(tuple(tools))

    def finish(question: str) -> set[str]:
        return finished_answers(
            question, route(question, ranked(index, question, tools)), domain, tools
        )

    return finish


def run_finish(assistant: LlmAssistant, *, verbose: bool = False) -> Callable[[str], set[str]]:
    """End to end: the finished answers that ended a run of the hospital graph.

    What the patient got: a tool's finished answer, or a withheld kind's text in its
    place (A7; :data:`WITHHELD_AS`). The patient has a phone on file, so
    ``callback_request`` is offered.
    """
    from langchain_core.messages import HumanMessage

    from toolweave import build_graph
    from toolweave.state.ledger import LedgerKind
    from toolweave_korhaz.plugin import load

    domain, tools = load()
    graph = build_graph(domain, tools, assistant=assistant)
    context = {"user_data": {"phone": "+36 30 123 4567"}}

    def finish(question: str) -> set[str]:
        out = graph.invoke({"messages": [HumanMessage(question)]}, context=context)
        ended = {  # the run's answer; a finished answer that joined the context (A9) is not
            e.tool or ""
            for e in out["ledger"]
            if e.kind == LedgerKind.ANSWER and e.verdict == "terminal"
        }
        said = sorted(ended)
        for e in out["ledger"]:
            if e.kind == LedgerKind.ANSWER and e.verdict == "withheld":
                said.append(f"withheld: {e.reason}")
                if (got := WITHHELD_AS.get(e.reason or "")) is not None:
                    ended.add(got)
        if verbose:
            print(f"{question!r}: {said or '-'}", file=sys.stderr, flush=True)
        return ended

    return finish


def offline_route(assistant: OfflineAssistant) -> Callable[[str, list[AnyTool]], set[str]]:
    """The offline router as a ``route`` for :func:`finished_table`."""
    return lambda question, tools: {v.tool for v in assistant.route(question, tools) if v.run}


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


def semantic_table(name: str = "routing_calibration") -> str:
    """Would the embedding model's cosine ranking route what the lexical rule leaves out?

    For the rows of ``name`` the offline router routes nothing: how often the tool with
    the highest cosine (``tools.embeddings``, the ``embeddings`` extra) is an expected
    one, by the margin of its cosine over the second one, beside the off-topic rows
    the same margin would route (wrongly); and what loading the model costs.
    """
    import numpy as np

    from toolweave.tools.embeddings import StaticEmbeddings
    from toolweave.tools.prefilter import tool_text

    tools, assistant = library(), OfflineAssistant()
    index = CandidateIndex(tools)
    start = time.perf_counter()
    model = StaticEmbeddings(cache_dir=None)
    matrix = model.matrix([tool_text(t) for t in tools])
    load_ms = (time.perf_counter() - start) * 1000
    found: list[tuple[float, bool | None]] = []  # (margin, right; None for off-topic)
    for row in load_jsonl(f"{name}.jsonl"):
        offered = ranked(index, row["question"], tools)
        if any(v.run for v in assistant.route(row["question"], offered)):
            continue
        cosine = matrix @ model.matrix([row["question"]])[0]
        first, second = np.argsort(-cosine)[:2]
        right = tools[int(first)].name in row["expected"] if row["expected"] else None
        found.append((float(cosine[first] - cosine[second]), right))
    lines = [
        f"{name}: {len(found)} rows route nothing; model load and 58 tool vectors {load_ms:.0f} ms",
        "| cosine margin at least | in-domain right | in-domain wrong | off-topic routed |",
        "|---:|---:|---:|---:|",
    ]
    for margin in (0.0, 0.02, 0.05, 0.1):
        kept = [right for m, right in found if m >= margin]
        lines.append(
            f"| {margin:.2f} | {kept.count(True)} | {kept.count(False)} | {kept.count(None)} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="grid search on the calibration part")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument(
        "--semantic", action="store_true", help="cosine evidence for the rows routing nothing"
    )
    parser.add_argument(
        "--model", action="store_true", help="the hospital table with the configured chat model"
    )
    parser.add_argument("--timeout", type=float, default=400.0, help="seconds per model call")
    args = parser.parse_args()
    if args.semantic:
        print(semantic_table())
        return
    if args.model:
        from toolweave.llm.env import default_assistant

        print(finished_table(run_finish(default_assistant(timeout=args.timeout), verbose=True)))
        return
    if args.fit:
        rule, scores = fit(library(), load_jsonl("routing_calibration.jsonl"))
        print(f"fitted on calibration: {rule} -> {scores}")
        assistant = OfflineAssistant(routing=rule)
    else:
        assistant = OfflineAssistant()
    print(decision_table(assistant))
    print()
    print(finished_table(run_finish(assistant)))
    if not args.no_speed:
        print()
        print(speed_table(args.repeats))


if __name__ == "__main__":
    main()
