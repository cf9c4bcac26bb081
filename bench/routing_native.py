"""Toolweave's one batched routing call against native function calling, same model (T5).

Twenty held-out multi-function requests: each in-domain question of
``bench/data/routing_heldout.jsonl`` (the first 20 by a hash of the question)
with 4 candidates of the 58-tool library: the expected tools, the other tools of
their family (``calendar_*``, ``bank_*``, ...), then the pre-filter's best-ranked
ones (near-duplicates, as a function-calling benchmark's multi-function items
have), offered in rank order. Two paths route
each request with the same chat model:

- **toolweave**: the candidates in rank order (T12), one structured routing call
  (``ChatModelAssistant.route_and_extract``, as the ``route`` node makes it), the
  model's yeses with reasons and its ``best_fit``, several yeses resolved by
  :func:`toolweave.graph.candidates.resolve_yeses`; also shown before resolution;
- **native**: ``langchain.agents.create_agent`` with the candidates as tools
  (``return_direct``, so one model call), ``tool_choice`` forced to ``"required"``
  by a middleware where the server supports it; a reply with no tool call but a
  JSON ``{"name": ...}`` in its text is read as that call.

A request is right when the set of tools routed (called) is exactly the expected
set. Run against an OpenAI-compatible server (``../shared/scripts/local-llm env``
prints the variables for the local one); requests go one at a time::

    eval "$(../shared/scripts/local-llm env)"
    python -m bench.routing_native            # both paths, 20 requests
    python -m bench.routing_native --limit 3  # a smoke run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.offline_routing import library, load_jsonl
from toolweave.graph.candidates import best_fit_yes, keyword_evidence, resolve_yeses
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.task import TaskInfo, TaskNode
from toolweave.tools.prefilter import CandidateIndex
from toolweave.tools.registry import AnyTool

CANDIDATES = 4
NATIVE_MAX_TOKENS = 256
REQUESTS = 20
_JSON_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z0-9_.-]+)"')


def requests(limit: int = REQUESTS) -> list[tuple[str, list[AnyTool], set[str]]]:
    """(question, candidates best ranked first, expected tools) of the held-out requests."""
    tools = library()
    index = CandidateIndex(tools)
    by_name = {tool.name: tool for tool in tools}
    rows = [r for r in load_jsonl("routing_heldout.jsonl") if r["expected"]]
    rows.sort(key=lambda r: hashlib.sha256(r["question"].encode()).hexdigest())
    chosen: list[tuple[str, list[AnyTool], set[str]]] = []
    for row in rows[:limit]:
        expected = set(row["expected"])
        ranking = index.rank(row["question"], [t.name for t in tools])
        ranked = [r.tool for r in ranking]
        family = {name.split("_")[0] for name in expected}
        pool = [
            *row["expected"],
            *(t.name for t in tools if t.name.split("_")[0] in family),
            *(r.tool for r in ranking if r.score > 0),
            *ranked,  # at least 3 candidates
        ]
        names = list(dict.fromkeys(pool))[: max(3, min(CANDIDATES, len(set(pool[: -len(ranked)]))))]
        order = {name: ranked.index(name) for name in names}
        candidates = sorted((by_name[n] for n in names), key=lambda t: order[t.name])
        chosen.append((row["question"], candidates, expected))
    return chosen


def toolweave_route(assistant: Any) -> Callable[[str, list[AnyTool]], tuple[set[str], set[str]]]:
    """The ``route`` node's path: one call, then the T5 resolution; (resolved, raw yeses)."""

    def route(question: str, candidates: list[AnyTool]) -> tuple[set[str], set[str]]:
        activation = assistant.route_and_extract(
            question, question, candidates, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        )
        node = TaskNode(task=TaskInfo(task_no="1", task_prompt=question))
        raw = set(activation.routed())
        scores = keyword_evidence(CandidateIndex(candidates), question, candidates)
        activation, _ = best_fit_yes(scores, node, candidates, activation)
        resolved, _ = resolve_yeses(node, candidates, activation.verdicts)
        return resolved, raw

    return route


def native_route(model: Any, forced: bool) -> Callable[[str, list[AnyTool]], tuple[set[str], str]]:
    """``create_agent`` over the candidates as LangChain tools; (called tools, how read)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRequest, ModelResponse, wrap_model_call
    from langchain_core.tools import StructuredTool

    @wrap_model_call
    def force(
        request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(request.override(tool_choice="required"))

    def as_tool(tool: AnyTool) -> StructuredTool:
        return StructuredTool.from_function(
            func=lambda: "done",
            name=tool.name,
            description=f"{tool.description} {tool.executable_instruction or ''}".strip(),
            return_direct=True,
        )

    def route(question: str, candidates: list[AnyTool]) -> tuple[set[str], str]:
        agent = create_agent(
            model,
            tools=[as_tool(t) for t in candidates],
            middleware=[force] if forced else [],
        )
        # sync: one event loop per call would strand the client's async connections
        out = agent.invoke({"messages": [{"role": "user", "content": question}]})
        first = next(m for m in out["messages"] if m.type == "ai")
        called = {call["name"] for call in first.tool_calls}
        if called:
            return called, "tool call"
        named = set(_JSON_NAME.findall(first.text)) & {t.name for t in candidates}
        return named, "text parsed" if named else "none"

    return route


@dataclass
class Tally:
    """Counts of one path over the requests."""

    right: int = 0
    several: int = 0
    nothing: int = 0
    seconds: float = 0.0

    def add(self, routed: set[str], expected: set[str], seconds: float) -> None:
        """Count one request."""
        self.right += routed == expected
        self.several += len(routed) > 1
        self.nothing += not routed
        self.seconds += seconds


def main() -> None:
    """Route every request on both paths; print the table and each request's sets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=REQUESTS)
    parser.add_argument("--no-native", action="store_true")
    parser.add_argument("--skip", type=int, default=0, help="start at this request")
    args = parser.parse_args()
    from langchain_openai import ChatOpenAI
    from openai import OpenAIError
    from pydantic import SecretStr

    from toolweave.llm.chat_model import ChatModelAssistant

    model = ChatOpenAI(
        model=os.environ.get("TOOLWEAVE_MODEL", "qwen"),
        api_key=SecretStr(os.environ.get("OPENAI_API_KEY", "local")),
        base_url=os.environ.get("OPENAI_BASE_URL"),
        temperature=0,
        timeout=900,
        max_retries=0,
        use_responses_api=False,
    )
    ours = toolweave_route(ChatModelAssistant(model, timeout=900, max_retries=1))
    # one tool call without arguments needs a few dozen tokens; unbounded, a small
    # model forced to call a tool can write until the context ends
    theirs = native_route(model.model_copy(update={"max_tokens": NATIVE_MAX_TOKENS}), forced=True)
    tallies = {name: Tally() for name in ("toolweave", "toolweave, before resolution", "native")}
    how: dict[str, int] = {}
    items = requests(args.limit)[args.skip :]
    for question, candidates, expected in items:
        start = time.perf_counter()
        resolved, raw = ours(question, candidates)  # failures are "no" verdicts (X2)
        took = time.perf_counter() - start
        tallies["toolweave"].add(resolved, expected, took)
        tallies["toolweave, before resolution"].add(raw, expected, took)
        line = {"q": question, "expected": sorted(expected), "toolweave": sorted(resolved)}
        line["raw"] = sorted(raw)
        print(json.dumps(line, ensure_ascii=False), flush=True)
        if not args.no_native:
            start = time.perf_counter()
            try:
                called, read = theirs(question, candidates)
            except (OpenAIError, TimeoutError, RuntimeError) as exc:  # a failed call is wrong
                called, read = set(), f"error {type(exc).__name__}"
            tallies["native"].add(called, expected, time.perf_counter() - start)
            how[read] = how.get(read, 0) + 1
            native = {"q": question, "native": sorted(called), "read": read}
            print(json.dumps(native, ensure_ascii=False), flush=True)
    n = len(items)
    print()
    print("| path | exact set | routed more than one | routed nothing | seconds per request |")
    print("|---|---:|---:|---:|---:|")
    for name, t in tallies.items():
        if name == "native" and args.no_native:
            continue
        print(
            f"| {name} | {t.right}/{n} | {t.several}/{n} | {t.nothing}/{n} | {t.seconds / n:.1f} |"
        )
    if how:
        print(f"\nnative replies: {', '.join(f'{k} {v}' for k, v in sorted(how.items()))}")


if __name__ == "__main__":
    main()
