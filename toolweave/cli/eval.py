"""``toolweave eval``: a golden file with ``toolweave ask``'s model (docs/guides/evaluation.md)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolweave.cli.progress import ProgressBar

if TYPE_CHECKING:
    from toolweave.evaluation import CaseResult, EvalReport
    from toolweave.llm.port import LlmAssistant

# Only the standard library at import time: `toolweave --help` does not load LangGraph.

EXIT_BELOW_THRESHOLD = 1
EXIT_NO_CONFIDENCE = 3  # --calibrate-routing without log-probabilities: nothing written
NO_CONFIDENCE = (
    "routing calibration needs the model's log-probabilities: {why}; nothing was written. "
    "Use an OpenAI-compatible server that returns logprobs (OpenAI, llama.cpp's server)."
)


def add_parser(commands: Any, *, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``eval`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "eval", parents=parents, help="measure routing on a golden file with the configured model"
    )
    add = parser.add_argument
    # fmt: off
    add("golden", nargs="?", help="golden JSONL file (default: the domain's bundled one)")
    add("--json-out", metavar="PATH", help="write the full report as JSON")
    add("--min-accuracy", type=float, metavar="X",
        help="exit 1 when exact-set accuracy is below X (0-1, e.g. 0.85)")
    add("--sample", type=int, metavar="N", help="run a random sample of N cases")
    add("--seed", type=int, default=0, help="seed of --sample (default 0)")
    add("--split", choices=("all", "dev", "heldout"), default="all",
        help='run one half of the golden file (its lines\' "split"; none means dev); '
        "the table shows every half run, side by side (default: all)")
    add("--failures", action="store_true",
        help="list the cases that missed (routing, facts, clarification, sources) after the "
        "table; over both halves, the held-out misses are counted, not listed")
    add("--timeout", type=float, metavar="S",
        help="seconds one model request may take (default 60; raise it for a slow local model)")
    add("--run-timeout", type=float, metavar="S",
        help="seconds one question may take in all, every model call and retry included "
        "(default ten request timeouts); past it the case is an error")
    add("--calibrate-routing", action="store_true",
        help="sweep routing thresholds over the dev half with the model's log-probabilities, "
        "print the table, store the best in the routing file (exit 3 without logprobs)")
    add("--routing-file", metavar="PATH",
        help="where --calibrate-routing stores the threshold (default: $TOOLWEAVE_ROUTING_FILE, "
        "else ./toolweave-routing.json, which load_domain reads)")
    add("--no-routing-confidence", action="store_true",
        help="route on the model's yes/no alone, without log-probabilities (to compare)")
    add("--no-deep-fallback", action="store_true",
        help="skip the domain's deep search (fewer model calls on a slow model; routing is "
        "scored the same, answers may lack what only the deep search finds)")
    # fmt: on


def _write_json(path: Path, report: EvalReport) -> None:
    path.write_text(json.dumps(report.as_json(), ensure_ascii=False, indent=2), encoding="utf-8")


def _check_numbers(args: argparse.Namespace) -> None:
    """The numeric options are in range (X1), before anything runs."""
    from toolweave.state.errors import InvalidRequestError

    if args.min_accuracy is not None and not 0 <= args.min_accuracy <= 1:
        raise InvalidRequestError("--min-accuracy must be between 0 and 1")
    if args.sample is not None and args.sample < 1:
        raise InvalidRequestError("--sample must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise InvalidRequestError("--timeout must be positive")
    if args.run_timeout is not None and args.run_timeout <= 0:
        raise InvalidRequestError("--run-timeout must be positive")


def _cases(args: argparse.Namespace) -> tuple[Path, list[Any]]:
    """The golden file and the cases to run: the chosen half, then the sample."""
    from toolweave.domains import golden_file
    from toolweave.evaluation import load_golden
    from toolweave.state.errors import InvalidRequestError

    golden = Path(args.golden) if args.golden else golden_file(args.domain)
    if golden is None:
        raise InvalidRequestError(f"domain {args.domain!r} ships no golden file: name one")
    cases = load_golden(golden)
    if args.calibrate_routing:  # never on held-out cases (G1)
        if args.split == "heldout":
            raise InvalidRequestError("--calibrate-routing runs on the dev half only")
        args.split = "dev"
    if args.split != "all":
        cases = [case for case in cases if case.split == args.split]
        if not cases:
            raise InvalidRequestError(f"golden file {golden} has no {args.split} cases")
    if args.sample is not None and args.sample < len(cases):
        cases = random.Random(args.seed).sample(cases, args.sample)
    return golden, cases


ANSWER_SHOWN = 120
"""Characters of a failing case's answer ``--failures`` shows."""


def _failure_reasons(result: CaseResult) -> list[str]:
    """What a case missed, in words: routing, facts, clarification, sources (N1)."""
    from toolweave.evaluation import holds_fact

    reasons: list[str] = []
    if not result.exact:
        expected = ", ".join(sorted(result.case.expected_tools)) or "none"
        routed = ", ".join(sorted(result.routed)) or "none"
        why = f" ({result.error})" if result.error else ""
        reasons.append(f"expected {expected}, routed {routed}{why}")
    if not result.clarification_ok and result.error is None:
        reasons.append("asked back" if result.pause else "did not ask back")
    if result.facts_ok is False:
        if result.case.expects_no_information:
            reasons.append("expected no information")
        else:
            missing = [f for f in result.case.expected_facts if not holds_fact(result.answer, f)]
            reasons.append(
                f"facts not found: {', '.join(map(repr, missing or result.case.expected_facts))}"
            )
    if result.sources_ok is False:
        reasons.append("a listed source backs nothing the answer says")
    return reasons + _next_message_reasons(result)


def _next_message_reasons(result: CaseResult) -> list[str]:
    """How a next-message case was read when not as it says (Q2); none otherwise."""
    if result.next_ok is not False or result.error is not None:
        return []
    read = result.next_kind or "nothing (the history left no question open)"
    return [f"next message expected {result.case.expected_next}, read as {read}"]


HELDOUT_NOT_LISTED = (
    "- {count} held-out case(s) missed, not listed: no change is made for a held-out "
    "question (G1); `--split heldout --failures` lists them"
)
"""What ``--failures`` says of the held-out misses of a run over both halves."""


def _print_failures(report: EvalReport, out: TextIO, split: str = "all") -> None:
    """Every case that missed anything the table counts, and what it missed.

    Over both halves, the held-out misses are counted, not listed: the development
    half's failures are the ones to work from (G1); ``--split heldout`` lists them.
    """
    print("", file=out)
    hidden = 0
    for result in report.results:
        reasons = _failure_reasons(result)
        if not reasons:
            continue
        if split == "all" and result.case.split == "heldout":
            hidden += 1
            continue
        answer = " ".join(result.answer.split())
        shown = answer if len(answer) <= ANSWER_SHOWN else answer[: ANSWER_SHOWN - 1] + "…"
        said = f"; answer: {shown!r}" if result.facts_ok is False else ""
        print(f"- {result.case.id}: {result.case.question!r}: {'; '.join(reasons)}{said}", file=out)
    if hidden:
        print(HELDOUT_NOT_LISTED.format(count=hidden), file=out)


def _assistant(args: argparse.Namespace, assistant: LlmAssistant) -> LlmAssistant | None:
    """``assistant`` as the options want it; ``None`` (said why) when it cannot calibrate."""
    structured = getattr(assistant, "structured", None)
    if args.no_routing_confidence and structured is not None:
        structured.top_logprobs = None  # yes/no routing, as before log-probabilities
    if args.calibrate_routing and not assistant.scores_routing():
        print(NO_CONFIDENCE.format(why=f"{assistant.label} gives none"), file=sys.stderr)
        return None
    return assistant


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave eval``: run the golden file, print the tables, write JSON, gate on accuracy."""
    from toolweave.cli.session import default_run_timeout
    from toolweave.domains import load_domain
    from toolweave.evaluation import EvalReport, evaluate, percent, report_table
    from toolweave.graph.context import Limits
    from toolweave.llm.env import default_assistant

    _check_numbers(args)
    golden, cases = _cases(args)
    run_timeout = args.run_timeout or default_run_timeout(args.timeout)
    assistant = _assistant(args, default_assistant(timeout=args.timeout))
    if assistant is None:
        return EXIT_NO_CONFIDENCE
    domain, tools = load_domain(args.domain, data_dir=getattr(args, "data_dir", None))
    domain = replace(
        domain,
        deep_fallback=None if args.no_deep_fallback else domain.deep_fallback,
        # calibrating: one run without a threshold; the thresholds are replayed over it
        routing_threshold=None if args.calibrate_routing else domain.routing_threshold,
    )
    bar = ProgressBar(sys.stderr, label="evaluating")
    done: list[CaseResult] = []

    def progress(count: int, result: CaseResult) -> None:
        bar(count, len(cases), "ok" if result.exact else "miss")
        done.append(result)
        if args.json_out:  # written after every case: a slow model's run is never lost
            partial = EvalReport(assistant=assistant.label, results=list(done))
            _write_json(Path(args.json_out), partial)

    limits = Limits(run_deadline_s=run_timeout)
    report = evaluate(domain, tools, cases, assistant=assistant, limits=limits, progress=progress)
    print(f"golden file: {golden} ({report.count} cases)", file=out)
    for line in report_table(report):
        print(line, file=out)
    if args.failures:
        _print_failures(report, out, args.split)
    if args.json_out:
        _write_json(Path(args.json_out), report)
    if args.calibrate_routing:
        return _calibrate(args, domain.name, report, out)
    if args.min_accuracy is not None and report.accuracy < args.min_accuracy:
        print(
            f"exact-set accuracy {percent(report.accuracy)} is below {percent(args.min_accuracy)}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return 0


def _calibrate(args: argparse.Namespace, domain: str, report: EvalReport, out: TextIO) -> int:
    """Replay the thresholds over the dev run, print them, store the best (T5, issue 38)."""
    from toolweave.domains.calibration import store_threshold
    from toolweave.evaluation import best_threshold, threshold_rows, threshold_table

    if not any(result.confidence for result in report.results):
        why = "no routing verdict of the run came with a P(yes)"
        print(NO_CONFIDENCE.format(why=why), file=sys.stderr)
        return EXIT_NO_CONFIDENCE
    rows = threshold_rows(report)
    print("", file=out)
    for line in threshold_table(rows, report.count):
        print(line, file=out)
    best = best_threshold(rows)
    about = {"model": report.assistant, "cases": report.count, "split": "dev"}
    where = Path(args.routing_file) if args.routing_file else None
    path = store_threshold(domain, best.threshold, about=about, path=where)
    print(f"routing threshold for {domain}: {best.threshold} (stored in {path})", file=out)
    return 0
