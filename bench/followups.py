"""Follow-up rewriting (A1), measured on a labelled set: offline rules and a chat model.

``bench/data/followups.jsonl`` holds 36 two-turn conversations of several domains
(hospital, sports centre, library, weather, transport), English and Hungarian: the
earlier question, the follow-up, the words the standalone question must hold (what
the follow-up keeps and what it changes) and the words it must not hold any more
(what the follow-up replaced). The offline rules were written against the 24
``calibration`` rows; the 12 ``heldout`` rows were written afterwards and never
tuned on. A rewrite passes when every ``must`` word and no
``must_not`` word is in it (:func:`toolweave.llm.lexical.matches`: case, accents and
inflection allowed). The offline rules are the anchor; ``--model`` adds the chat
model the environment configures (``OPENAI_BASE_URL``, ``TOOLWEAVE_MODEL``), one
normalization call per conversation, read twice: the model's own rewrite, and the
question the graph keeps (the offline rules' rewrite where they resolve the
follow-up, no model asked; else the model's, after ``check_normalized``: a rewrite
that drops the message's own words gives way to the offline rules).

Usage (from the repository root)::

    python -m bench.followups            # the offline rules
    python -m bench.followups --model    # and the configured chat model beside them
    python -m bench.followups --model --part heldout   # the 12 held-out rows only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from toolweave.graph.normalize import check_normalized
from toolweave.llm.lexical import detect_language, matches, words
from toolweave.llm.offline import OfflineAssistant, normalize_offline, resolved_by_rules
from toolweave.llm.port import LlmAssistant

DATA = Path(__file__).parent / "data" / "followups.jsonl"
ANSWERED = "(answered)"
"""The earlier turns' answers, as the history shows them: the rewrite reads the questions."""


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The labelled conversations."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def holds(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` in some form."""
    return any(matches(word, w) or w.startswith(word.casefold()) for w in words(text))


def passes(case: dict[str, Any], rewrite: str) -> bool:
    """Every ``must`` word in the rewrite, no ``must_not`` word."""
    return all(holds(rewrite, w) for w in case["must"]) and not any(
        holds(rewrite, w) for w in case["must_not"]
    )


def history(case: dict[str, Any]) -> list[BaseMessage]:
    """The earlier turns: each question with a stand-in answer."""
    turns: list[BaseMessage] = []
    for question in case["history"]:
        turns += [HumanMessage(question), AIMessage(ANSWERED)]
    return turns


def rewrites(assistant: LlmAssistant, cases: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Per case: the assistant's rewrite, and the rewrite the graph keeps after its checks."""
    out: list[tuple[str, str]] = []
    for case in cases:
        lang = detect_language(" ".join([*case["history"], case["message"]]))
        turns = history(case)
        norm = assistant.normalize(case["message"], turns, default_lang=lang)
        if resolved_by_rules(case["message"], turns):  # the graph asks no model (A10)
            kept = normalize_offline(case["message"], turns, default_lang=lang)
        else:
            kept, _ = check_normalized(case["message"], turns, norm)
        out.append((norm.question, kept.question))
    return out


def score(cases: Sequence[dict[str, Any]], rewritten: Sequence[str]) -> tuple[int, list[str]]:
    """Passed cases and the failed rewrites."""
    failed = [
        f"{case['history'][-1]} + {case['message']} -> {rewrite}"
        for case, rewrite in zip(cases, rewritten, strict=True)
        if not passes(case, rewrite)
    ]
    return len(cases) - len(failed), failed


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table (and the failed rewrites)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="store_true", help="also the configured chat model")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model call")
    parser.add_argument(
        "--part", choices=("calibration", "heldout"), help="only this part (a slow model)"
    )
    args = parser.parse_args(argv)
    cases = load()
    assistants: list[tuple[str, LlmAssistant]] = [("offline rules", OfflineAssistant())]
    if args.model:
        from toolweave.llm.env import default_assistant

        model = default_assistant(timeout=args.timeout)
        assistants.append((model.label, model))
    print(
        "| rewrite by | part | conversations | model's rewrite right | kept by the graph right "
        "| s per rewrite |"
    )
    print("|---|---|---:|---:|---:|---:|")
    failures: list[str] = []
    for label, assistant in assistants:
        for part in (args.part,) if args.part else ("calibration", "heldout"):
            chosen = [case for case in cases if case["part"] == part]
            start = time.perf_counter()
            pairs = rewrites(assistant, chosen)
            seconds = (time.perf_counter() - start) / max(1, len(chosen))
            raw, failed = score(chosen, [p[0] for p in pairs])
            kept, _ = score(chosen, [p[1] for p in pairs])
            n = len(chosen)
            print(
                f"| {label} | {part} | {n} | {raw} ({raw / n:.0%}) | {kept} ({kept / n:.0%}) "
                f"| {seconds:.2f} |"
            )
            failures += [f"- {label}: {line}" for line in failed]
    print("\n".join(failures))


if __name__ == "__main__":
    main()
