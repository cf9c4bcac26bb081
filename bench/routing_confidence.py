"""Routing with and without the model's confidence (T5, issue 38 item 2), same model calls.

The model's tokens do not depend on whether log-probabilities are asked (temperature 0),
so each question is routed ONCE, with them, and scored three ways:

- **without**: the verdicts' P(yes) removed, replayed through the same graph (today's
  yes/no routing: the best fit, then rank, breaks ties);
- **with**: as run: several yeses resolved by P(yes) (``resolve_yeses``);
- **with, threshold t**: the routed tools under t dropped (``graph.route.abstain``), t
  calibrated on the domain's dev sample (``evaluation.best_threshold``).

Two sets: the example domains' golden files (held-out sample; korhaz's dev sample for the
threshold) through the real graph, the answer, gatekeeper and decomposition stubbed (no
model call: only routing is scored), and the routing bench of ``bench.routing_native``
(4 candidates with near-duplicates). Requests go one at a time::

    eval "$(../shared/scripts/local-llm env)"
    python -m bench.routing_confidence --sample 8 --dev-sample 4 --bench 8
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage

from toolweave.domains import golden_file, load_domain
from toolweave.evaluation import (
    EvalReport,
    best_threshold,
    evaluate,
    load_golden,
    threshold_rows,
)
from toolweave.graph.candidates import best_fit_yes, keyword_evidence, resolve_yeses
from toolweave.graph.context import Limits
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.port import (
    Activation,
    ContextVerdict,
    extract_decompositions_offline,
)
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.task import TaskInfo, TaskNode
from toolweave.tools.prefilter import CandidateIndex


class RoutingOnly(ChatModelAssistant):
    """The model for routing (and follow-up reading, extraction); nothing else calls it.

    Each activation is kept by task prompt; ``replay`` answers from them, with or
    without their P(yes), and calls no model.
    """

    seen: dict[str, Activation]
    replay: bool = False
    strip: bool = False

    def route_and_extract_steps(self, task_prompt: str, *args: Any, **kwargs: Any) -> Any:
        """The model's activation, kept; replayed (P(yes) removed if ``strip``)."""
        if not self.replay:
            found = yield from super().route_and_extract_steps(task_prompt, *args, **kwargs)
            self.seen[task_prompt] = found
        found = self.seen.get(task_prompt, Activation(verdicts=(), llm_calls=0))
        if self.strip:
            found = replace(
                found, verdicts=tuple(replace(v, confidence=None) for v in found.verdicts)
            )
        return found

    def answer_steps(self, request: Any) -> Any:
        """No answer is scored here: a fixed text, no call."""
        return AIMessage(content="-")
        yield  # a generator

    def judge_context_steps(self, *args: Any, **kwargs: Any) -> Any:
        """The context suffices: no gatekeeper call."""
        return ContextVerdict(sufficient=True)
        yield  # a generator

    def extract_decompositions_steps(self, task_prompt: str, schemas: Any) -> Any:
        """The offline decomposition: no call."""
        return extract_decompositions_offline(task_prompt, schemas)
        yield  # a generator


def assistant() -> RoutingOnly:
    """The configured model (``local-llm env``), routing only."""
    base = default_assistant(timeout=900)
    assert isinstance(base, ChatModelAssistant), "set OPENAI_API_KEY (local-llm env)"
    ours = RoutingOnly(base.model, timeout=900, max_retries=1)
    ours.seen = {}
    return ours


def cases(domain: str, split: str, sample: int, seed: int) -> list[Any]:
    """A seeded sample of one half of the domain's golden file."""
    path = golden_file(domain)
    assert path is not None
    half = [c for c in load_golden(path) if c.split == split]
    return random.Random(seed).sample(half, min(sample, len(half)))


def scored(model: RoutingOnly, domain: str, chosen: list[Any]) -> dict[str, EvalReport]:
    """One model run, then the replays: ``without`` and ``with`` (as run)."""
    bundle, tools = load_domain(domain)
    bundle = replace(bundle, deep_fallback=None, routing_threshold=None)
    limits = Limits(run_deadline_s=3600)
    model.replay = model.strip = False
    run = evaluate(bundle, tools, chosen, assistant=model, limits=limits, progress=shown)
    model.replay = model.strip = True
    without = evaluate(bundle, tools, chosen, assistant=model, limits=limits)
    model.replay, model.strip = True, False
    return {"with": run, "without": without}


def shown(count: int, result: Any) -> None:
    """A case as it is done (a slow model's run shows its progress)."""
    expected, routed = sorted(result.case.expected_tools), sorted(result.routed)
    print(count, result.case.id, expected, routed, result.confidence, result.error, flush=True)


def row(name: str, report: EvalReport, threshold: float | None = None) -> str:
    """One table row: exact tool sets and routes-nothing under ``threshold``."""
    found = next(r for r in threshold_rows(report) if r.threshold == threshold)
    n = report.count
    return f"| {name} | {n} | {found.exact}/{n} | {found.routes_nothing}/{n} |"


def bench(
    model: RoutingOnly, limit: int
) -> list[tuple[set[str], set[str], set[str], dict[str, float]]]:
    """The routing bench's first ``limit`` requests: (expected, without, with, P(yes))."""
    from bench.routing_native import requests

    out = []
    for question, candidates, expected in requests(limit):
        activation = model.route_and_extract(
            question, question, candidates, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        )
        node = TaskNode(task=TaskInfo(task_no="1", task_prompt=question))
        scores = keyword_evidence(CandidateIndex(candidates), question, candidates)
        activation, _ = best_fit_yes(scores, node, candidates, activation)
        plain = [replace(v, confidence=None) for v in activation.verdicts]
        without, _ = resolve_yeses(node, candidates, plain)
        with_, _ = resolve_yeses(node, candidates, activation.verdicts)
        sure = {
            v.tool: round(v.confidence, 3) for v in activation.verdicts if v.confidence is not None
        }
        line = {"q": question, "expected": sorted(expected), "without": sorted(without)}
        line |= {"with": sorted(with_), "p_yes": sure}
        print(json.dumps(line, ensure_ascii=False), flush=True)
        out.append((expected, without, with_, sure))
    return out


def main() -> None:
    """Calibrate on korhaz's dev sample, score the held-out samples and the routing bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=4, help="cases a half (seeded)")
    parser.add_argument("--dev-sample", type=int, default=4, help="korhaz dev cases (seeded)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bench", type=int, default=4, help="routing-bench requests")
    parser.add_argument("--domains", default="korhaz,pomoc")
    args = parser.parse_args()
    model = assistant()
    lines = ["| set | cases | tools exact | routes nothing |", "|---|---:|---:|---:|"]
    dev = scored(model, "korhaz", cases("korhaz", "dev", args.dev_sample, args.seed))
    threshold = best_threshold(threshold_rows(dev["with"])).threshold
    print(f"threshold calibrated on korhaz dev ({dev['with'].count} cases): {threshold}")
    for domain in args.domains.split(","):
        held = scored(model, domain, cases(domain, "heldout", args.sample, args.seed))
        lines += [
            row(f"{domain} held-out, without", held["without"]),
            row(f"{domain} held-out, with", held["with"]),
            row(f"{domain} held-out, with, threshold {threshold}", held["with"], threshold),
            row(f"{domain} held-out, with, threshold 0.5 (not calibrated)", held["with"], 0.5),
        ]
    if args.bench:
        found = bench(model, args.bench)
        n = len(found)
        for label, at in (("without", 1), ("with", 2)):
            right = sum(item[0] == item[at] for item in found)
            nothing = sum(not item[at] for item in found)
            lines.append(f"| routing bench, {label} | {n} | {right}/{n} | {nothing}/{n} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
