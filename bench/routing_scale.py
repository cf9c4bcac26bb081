"""Routing over thousands of tools: the T12 pre-filter's recall, prompt size and time.

A generated library: tool families built from concepts (an action, an object and a
scope), each concept with a vocabulary of synonyms. A tool's name and routing
question use the concept's first word, its description the second; the questions
are paraphrases from templates that never appear in a tool text, and every
question uses at least one synonym that no tool text has (often more), so no
question is in its tool's own wording. Prints, for 10 / 100 / 1,000 / 5,000 tools:

- recall@k: the share of questions whose right tool is among the first k the
  pre-filter ranks (k = 20 is what the routing call is offered by default);
- the routing call's characters (system + human message, and the JSON schema
  bound for structured output), with a fake chat model recording the call;
- ms per request through the whole graph: a zero-latency fake chat model (the
  orchestration, pre-filter and prompt building) and the offline model.

Usage (from the repository root)::

    python -m bench.routing_scale            # about two minutes on 2 cores
    python -m bench.routing_scale --quick    # smoke run
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench.harness import markdown_table, verdict
from toolweave import ChatbotTool, ToolCallContext, ToolResult, build_graph
from toolweave.graph.context import Limits
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.offline import OfflineAssistant
from toolweave.testing import RecordedCall, ScriptedChatModel
from toolweave.tools.embeddings import extra_installed
from toolweave.tools.prefilter import CandidateIndex
from toolweave.tools.registry import AnyTool

SIZES = (10, 100, 1000, 5000)
KS = (5, 10, 20)
REWORDED = (1, 2)
"""Concepts of a question (action, object, scope) put in words no tool text has."""
TARGET_RECALL = 0.95
TARGET_TIME_RATIO = 2.0
DOMAIN = "scale"

# each concept: (name word, description word, paraphrase-only synonyms...)
ACTIONS = [
    ("create", "add", "make", "set up", "open a new"),
    ("delete", "remove", "erase", "get rid of", "wipe"),
    ("list", "show", "see all", "browse", "enumerate"),
    ("update", "modify", "change", "edit", "revise"),
    ("export", "download", "save a copy of", "extract", "dump"),
    ("share", "send", "forward", "pass on", "distribute"),
    ("archive", "shelve", "put away", "store away", "mothball"),
    ("restore", "recover", "bring back", "undelete", "retrieve"),
    ("approve", "accept", "sign off", "okay", "greenlight"),
    ("cancel", "void", "call off", "annul", "revoke"),
    ("schedule", "plan", "book", "arrange", "line up"),
    ("search", "find", "look up", "locate", "hunt for"),
    ("print", "render", "produce a paper", "hard copy", "output"),
    ("translate", "convert language", "localise", "interpret", "render in french"),
    ("merge", "combine", "join", "unify", "consolidate"),
    ("duplicate", "copy", "clone", "replicate", "double"),
    ("lock", "freeze", "protect", "secure", "block editing"),
    ("rename", "retitle", "relabel", "call differently", "give a new name"),
    ("validate", "verify", "check", "confirm correctness", "audit"),
    ("summarize", "condense", "digest", "boil down", "recap"),
]
OBJECTS = [
    ("invoice", "bill", "statement of charges", "payment request"),
    ("contract", "agreement", "deal paperwork", "signed terms"),
    ("meeting", "appointment", "get-together", "call slot"),
    ("ticket", "issue", "support case", "help request"),
    ("employee", "staff member", "worker", "team member"),
    ("customer", "client", "buyer", "account holder"),
    ("product", "item", "merchandise", "article for sale"),
    ("order", "purchase", "sale", "checkout"),
    ("shipment", "delivery", "parcel", "package"),
    ("report", "analysis", "writeup", "findings"),
    ("photo", "picture", "image", "snapshot"),
    ("playlist", "song list", "music queue", "mixtape"),
    ("recipe", "cooking instructions", "dish method", "meal plan"),
    ("flight", "plane trip", "air travel", "boarding"),
    ("hotel", "accommodation", "lodging", "room stay"),
    ("vehicle", "car", "automobile", "ride"),
    ("budget", "spending plan", "allowance", "cost forecast"),
    ("password", "credential", "login secret", "passphrase"),
    ("calendar", "agenda", "planner", "diary"),
    ("email", "mail message", "inbox item", "e-letter"),
    ("survey", "questionnaire", "poll", "feedback form"),
    ("course", "class", "lesson series", "training"),
    ("patient", "case record", "medical file", "chart"),
    ("prescription", "medication order", "script", "drug plan"),
    ("warehouse", "depot", "storage site", "stockroom"),
    ("supplier", "vendor", "provider", "source company"),
    ("campaign", "promotion", "marketing push", "advert run"),
    ("backup", "snapshot archive", "safety copy", "restore point"),
    ("server", "machine", "host", "box"),
    ("domain", "web address", "site name", "url"),
    ("repository", "codebase", "source tree", "project code"),
    ("podcast", "audio show", "episode feed", "radio program"),
    ("newsletter", "bulletin", "digest mailing", "update letter"),
    ("loan", "credit line", "borrowing", "advance"),
    ("insurance", "policy", "coverage", "protection plan"),
    ("pet", "animal", "dog or cat", "furry friend"),
    ("garden", "yard", "plot", "flower bed"),
    ("thermostat", "heating control", "temperature setting", "climate dial"),
    ("subscription", "membership", "recurring plan", "sign-up"),
    ("timesheet", "hours log", "work record", "time entry"),
    ("expense", "cost claim", "reimbursement", "outlay"),
    ("vacation", "holiday", "time off", "leave"),
    ("review", "rating", "testimonial", "critique"),
    ("coupon", "voucher", "discount code", "promo"),
    ("map", "route plan", "directions", "itinerary"),
    ("document", "file", "paper", "text"),
    ("spreadsheet", "worksheet", "table of figures", "grid"),
    ("video", "clip", "recording", "footage"),
    ("task", "todo", "chore", "action item"),
    ("note", "memo", "jotting", "reminder text"),
]
SCOPES = [
    ("personal", "private", "my own", "just for me"),
    ("team", "group", "shared with colleagues", "department-wide"),
    ("archived", "old", "past", "historical"),
    ("draft", "unfinished", "work in progress", "not yet final"),
    ("urgent", "priority", "time-critical", "pressing"),
]
TEMPLATES = [
    "Could you {action} the {scope} {object} for me?",
    "I need to {action} a {scope} {object}.",
    "Please {action} my {scope} {object} right away",
    "Is it possible to {action} the {object} that is {scope}?",
    "Help me {action} some {scope} {object}",
    "how do i {action} a {object}, the {scope} one",
]


@dataclass(frozen=True)
class Spec:
    """One generated tool: its concepts by index."""

    action: int
    obj: int
    scope: int

    @property
    def name(self) -> str:
        """The tool's name: the concepts' first words."""
        words = (ACTIONS[self.action][0], OBJECTS[self.obj][0], SCOPES[self.scope][0])
        return "_".join(w.replace(" ", "_").replace("-", "_") for w in words)


def all_specs() -> list[Spec]:
    """Every action x object x scope combination (5,000 tools)."""
    return [
        Spec(a, o, s)
        for o in range(len(OBJECTS))
        for a in range(len(ACTIONS))
        for s in range(len(SCOPES))
    ]


def make_tool(spec: Spec) -> AnyTool:
    """A tool whose texts use each concept's first two words only."""
    action, obj, scope = ACTIONS[spec.action], OBJECTS[spec.obj], SCOPES[spec.scope]
    name = spec.name

    def execute(self: Any, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return None

    attrs = {
        "name": name,
        "executable_instruction": (
            f"{name}: true when the user wants to {action[0]} a {scope[0]} {obj[0]}."
        ),
        "description": f"{action[1].capitalize()} {scope[1]} {obj[1]} entries.",
        "execute": execute,
    }
    return type(f"Tool_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


def paraphrase(spec: Spec, rng: random.Random, reworded: int = 1) -> str:
    """A question for ``spec``: ``reworded`` of its 3 concepts in words no tool text has.

    The other concepts use the name's or the description's word (either, at random);
    the sentence frame is a template that no tool text uses.
    """
    concepts = (ACTIONS[spec.action], OBJECTS[spec.obj], SCOPES[spec.scope])
    changed = set(rng.sample(range(3), reworded))
    picks = [
        rng.randrange(2, len(concept)) if i in changed else rng.randrange(2)
        for i, concept in enumerate(concepts)
    ]
    action, obj, scope = (concept[pick] for concept, pick in zip(concepts, picks, strict=True))
    return rng.choice(TEMPLATES).format(action=action, object=obj, scope=scope)


class VerdictModel(ScriptedChatModel):
    """A zero-latency chat model: "no" to every routing candidate, a short text otherwise."""

    def _take(
        self, messages: list[BaseMessage], tags: list[str], kwargs: dict[str, Any]
    ) -> tuple[Any, list[dict[str, Any]], int]:
        tools = list(kwargs.get("tools") or [])
        self._calls.append(RecordedCall(list(messages), tools, tags))
        finished = {"finish_reason": "stop" if not tools else "tool_calls"}
        if not tools:
            return AIMessage(content="No tool applies.", response_metadata=finished), tools, 0
        function = tools[0]["function"]
        properties = function["parameters"].get("properties", {})
        if "question" in properties:
            human = next(m for m in messages if isinstance(m, HumanMessage)).text
            args: dict[str, Any] = {
                "question": human,
                "user_lang": "en",
                "important_words": [],
                "prompt_type": "other",
            }
        else:
            args = {name: {"reason": "-", "run": False} for name in properties}
        call = {"name": function["name"], "args": args, "id": "c"}
        return AIMessage(content="", tool_calls=[call], response_metadata=finished), tools, 0


def rankings() -> list[tuple[str, Literal["auto"] | None]]:
    """The pre-filter's rankings to measure: keywords, and with the embeddings extra fused."""
    modes: list[tuple[str, Literal["auto"] | None]] = [("keywords", None)]
    if extra_installed():
        modes.append(("keywords + embeddings", "auto"))
    return modes


def recall_rows(sizes: Sequence[int], questions: int, seed: int) -> list[list[Any]]:
    """recall@k of the right tool in the pre-filter's ranking, per library size and ranking."""
    rng = random.Random(seed)
    specs = all_specs()
    rows: list[list[Any]] = []
    for size in sizes:
        chosen = rng.sample(specs, size)
        tools = [make_tool(spec) for spec in chosen]
        names = [t.name for t in tools]
        asked = {
            reworded: [
                (spec, paraphrase(spec, rng, reworded)) for spec in rng.choices(chosen, k=questions)
            ]
            for reworded in REWORDED
        }
        for label, embeddings in rankings():
            start = time.process_time()
            index = CandidateIndex(tools, embeddings)
            index.rank("warm up", names, limit=1)  # the tool vectors, when embedding
            build_ms = (time.process_time() - start) * 1000.0
            for reworded in REWORDED:
                hits = dict.fromkeys(KS, 0)
                rank_ms: list[float] = []
                for spec, text in asked[reworded]:
                    start = time.process_time()
                    ranked = index.rank(text, names, limit=max(KS))
                    rank_ms.append((time.process_time() - start) * 1000.0)
                    place = next((r.rank for r in ranked if r.tool == spec.name), max(KS) + 1)
                    for k in KS:
                        hits[k] += place <= k
                recalls = [hits[k] / questions for k in KS]
                target = verdict(recalls[KS.index(20)] >= TARGET_RECALL) if reworded == 1 else "-"
                rows.append(
                    [
                        f"{size:,}",
                        label,
                        f"{reworded} of 3",
                        questions,
                        *[f"{r:.3f}" for r in recalls],
                        target,
                        f"{build_ms:.0f}",
                        f"{statistics.median(rank_ms):.2f}",
                    ]
                )
    return rows


def request_rows(
    sizes: Sequence[int], requests: int, seed: int, *, reference: int | None
) -> list[list[Any]]:
    """Routing-call characters and ms per request through the graph, per library size."""
    rng = random.Random(seed)
    specs = all_specs()
    rows: list[list[Any]] = []
    anchors: dict[str, float] = {}
    cap_default = Limits().max_routing_candidates
    runs = [(size, cap_default, f"{size:,}") for size in sizes]
    if reference is not None:
        runs.append((reference, reference + 1, f"{reference:,} (no pre-filter)"))
    for size, cap, label in runs:
        chosen = rng.sample(specs, size)
        tools = [make_tool(spec) for spec in chosen]
        texts = [paraphrase(rng.choice(chosen), rng) for _ in range(requests)]
        model = VerdictModel()
        chat = build_graph(
            DOMAIN,
            tools,
            assistant=ChatModelAssistant(model, max_retries=0),
            max_routing_candidates=cap,
        )
        offline = build_graph(
            DOMAIN, tools, assistant=OfflineAssistant(), max_routing_candidates=cap
        )
        timings: dict[str, list[float]] = {"chat": [], "offline": []}
        for text in [texts[0], *texts]:  # the first one warms up
            for kind, graph in (("chat", chat), ("offline", offline)):
                start = time.process_time()
                graph.invoke({"messages": [HumanMessage(text)]})
                timings[kind].append((time.process_time() - start) * 1000.0)
        routing = [
            c
            for c in model.calls
            if c.tools and "question" not in c.tools[0]["function"]["parameters"]["properties"]
        ]
        prompt = statistics.median(len(c.system) + len(c.human) for c in routing)
        schema = statistics.median(len(json.dumps(c.tools)) for c in routing)
        medians = {kind: statistics.median(values[1:]) for kind, values in timings.items()}
        for key, value in medians.items():
            anchors.setdefault(key, value)
        rows.append(
            [
                label,
                min(size, cap),
                f"{prompt:,.0f}",
                f"{schema:,.0f}",
                f"{medians['chat']:.1f}",
                f"{medians['chat'] / anchors['chat']:.2f}x",
                f"{medians['offline']:.1f}",
                f"{medians['offline'] / anchors['offline']:.2f}x",
            ]
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400, help="questions per size (recall)")
    parser.add_argument("--requests", type=int, default=20, help="timed requests per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smoke run")
    args = parser.parse_args(argv)
    questions, requests = (40, 3) if args.quick else (args.questions, args.requests)
    print("#### T12 pre-filter: recall of the right tool (generated library, paraphrases)\n")
    print(
        markdown_table(
            [
                "tools",
                "ranking",
                "concepts reworded",
                "questions",
                *[f"recall@{k}" for k in KS],
                f"recall@20 >= {TARGET_RECALL}",
                "index build CPU ms",
                "rank CPU ms (median)",
            ],
            recall_rows(SIZES, questions, args.seed),
        )
    )
    print(
        "\nrecall@k = share of questions whose tool is among the first k ranked (BM25 over name, "
        "routing question, instruction, description; with the `embeddings` extra also fused "
        "with the bundled static model by weighted reciprocal rank); the routing call is "
        "offered the first 20 (`Limits.max_routing_candidates`). Index build CPU ms includes "
        "the tool vectors (read from the disk cache after the first run; the first table row that "
        "embeds also loads the model).\n"
    )
    print("#### Routing call size and time per request\n")
    print(
        markdown_table(
            [
                "tools",
                "offered",
                "routing prompt chars",
                "routing schema chars",
                "fake chat model CPU ms",
                "x 10 tools",
                "offline model CPU ms",
                "x 10 tools",
            ],
            request_rows(SIZES, requests, args.seed, reference=None if args.quick else 1000),
        )
    )
    print(
        "\nCPU ms = median `time.process_time()` of one request through the whole graph "
        "(normalize, route, "
        "answer; memory, no checkpointer); the fake chat model has zero latency, so its column "
        f"is toolweave's own work. Target: 5,000 tools within {TARGET_TIME_RATIO}x of 10 tools."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
