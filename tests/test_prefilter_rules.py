"""T12: the candidate pre-filter before the one routing call (T5, M2, F1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from support import ScriptedCoordinator

from toolweave import ChatbotTool, TaskInfo, ToolCallContext, ToolResult, build_graph
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools.domain import Domain
from toolweave.tools.prefilter import (
    COSINE_WEIGHT,
    RRF_K,
    CandidateIndex,
    ordinal,
    prefilter,
    tool_text,
)
from toolweave.tools.registry import AnyTool

TOPICS = [
    ("parking", "car park garage fees"),
    ("pharmacy", "medicine dispensary opening"),
    ("cafeteria", "food lunch menu"),
    ("wifi", "internet wireless password"),
    ("visiting", "visitors relatives hours"),
    ("admission", "hospital admission documents"),
    ("discharge", "discharge summary leaving"),
    ("laboratory", "blood test sample"),
    ("radiology", "x-ray scan imaging"),
    ("dialysis", "kidney dialysis sessions"),
]


def make(name: str, text: str) -> AnyTool:
    def execute(self: Any, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return None

    attrs = {
        "name": name,
        "executable_instruction": f"{name}: true when the user asks about {text}.",
        "description": f"Answers questions about {text}.",
        "execute": execute,
    }
    return type(f"T_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


def library(extra: int = 30) -> list[AnyTool]:
    tools = [make(name, text) for name, text in TOPICS]
    tools += [make(f"filler_{i}", f"unrelated widget number {i}") for i in range(extra)]
    return tools


def graph_over(tools: Sequence[AnyTool], seen: list[list[str]], **domain: Any) -> Any:
    def route(text: str, offered: Sequence[AnyTool]) -> list[str]:
        seen.append([t.name for t in offered])
        return []

    domain.setdefault("routing_embeddings", None)  # these pin the keyword (BM25) scores
    return build_graph(
        Domain(name="d", **domain),
        tools,
        assistant=FunctionAssistant(route=route),
        max_routing_candidates=5,
    )


def ask(graph: Any, text: str) -> dict[str, Any]:
    return graph.invoke({"messages": [HumanMessage(text)]})  # type: ignore[no-any-return]


def test_T12_ranking_puts_the_matching_tool_first():
    tools = library()
    index = CandidateIndex(tools)
    ranked = index.rank("How much are the parking fees?", [t.name for t in tools])
    assert ranked[0].tool == "parking"
    assert ranked[0].rank == 1
    assert ranked[0].score > ranked[1].score


def test_T12_stemming_matches_inflected_words():
    tools = library()
    ranked = CandidateIndex(tools).rank("passwords for the wireless?", [t.name for t in tools])
    assert ranked[0].tool == "wifi"


def test_T12_routing_call_sees_at_most_the_cap_with_the_best_ranked_in():
    seen: list[list[str]] = []
    ask(graph_over(library(), seen), "Where can I find the car park?")
    assert len(seen) == 1  # T5: still one routing call
    assert len(seen[0]) == 5
    assert "parking" in seen[0]


def test_T12_under_the_cap_nothing_is_filtered_and_nothing_logged():
    seen: list[list[str]] = []
    tools = library(extra=0)[:4]
    out = ask(graph_over(tools, seen), "parking?")
    assert seen == [[t.name for t in tools]]
    assert not [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]


def test_T12_pinned_tools_are_offered_whatever_their_rank():
    seen: list[list[str]] = []
    graph = graph_over(library(), seen, always_offered=frozenset({"filler_29", "not_a_tool"}))
    out = ask(graph, "Where can I find the car park?")
    assert "filler_29" in seen[0]
    assert "parking" in seen[0]
    assert len(seen[0]) == 6
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]
    assert entry.details["filler_29"].startswith("pinned: ranked")


def test_T12_ledger_records_rank_and_score_of_kept_and_dropped():
    seen: list[list[str]] = []
    out = ask(graph_over(library(), seen), "blood test sample results and x-ray imaging")
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]
    assert entry.verdict == "kept 5 of 40"
    assert entry.details["laboratory"].startswith("kept: ranked 1st of 40, score ")
    kept = [name for name, text in entry.details.items() if text.startswith("kept")]
    assert sorted(kept) == sorted(seen[0])


def test_T12_dropped_tool_that_shares_words_is_named_with_its_rank():
    tools = [make(f"visit_{i}", f"visitors hours ward {i}") for i in range(8)]
    seen: list[list[str]] = []
    out = ask(graph_over(tools, seen), "visitors hours on ward 7")
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]
    dropped = {n: t for n, t in entry.details.items() if t.startswith("dropped")}
    assert len(dropped) == 3
    assert all(" of 8, score " in text for text in dropped.values())
    assert "visit_7" in seen[0]


def test_T12_M2_ranking_uses_the_task_prompt_not_the_prompt_context():
    seen: list[list[str]] = []

    def decompose(task: TaskInfo) -> TaskInfo | None:
        if task.task_no != "1":
            return None
        task.sub_tasks = [
            TaskInfo(
                task_no="1.1",
                task_prompt="internet wireless password",
                prompt_context="car park garage fees parking parking",
            )
        ]
        return task

    tools = [*library(), ScriptedCoordinator("coord", decompose)]
    out = ask(graph_over(tools, seen), "anything at all")
    (entry,) = [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER and e.task_no == "1.1"]
    assert entry.details["wifi"].startswith("kept: ranked 1st")
    assert entry.details["parking"].endswith("score 0.000")  # the context's words count for 0


def test_T12_F1_forced_tools_are_never_filtered():
    seen: list[list[str]] = []

    def decompose(task: TaskInfo) -> TaskInfo | None:
        task.required_tool_names = [f"filler_{i}" for i in range(8)]
        return task

    tools = [*library(), ScriptedCoordinator("coord", decompose)]
    out = ask(graph_over(tools, seen), "parking")
    assert seen == []  # F1: no routing call at all
    forced = [e.tool for e in out["ledger"] if e.kind == LedgerKind.FORCED]
    assert forced == [f"filler_{i}" for i in range(8)]
    assert not [e for e in out["ledger"] if e.kind == LedgerKind.PREFILTER]


def test_T12_index_is_built_once_per_graph_not_per_request(monkeypatch):
    built: list[int] = []
    original = CandidateIndex.__init__

    def counting(self: CandidateIndex, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(CandidateIndex, "__init__", counting)
    seen: list[list[str]] = []
    graph = graph_over(library(), seen)
    for question in ("parking?", "wifi?", "lunch menu?"):
        ask(graph, question)
    assert len(built) == 1


class KeywordBlindEmbeddings(Embeddings):
    """Vectors by a concept table, so that a synonym with no shared word still matches."""

    CONCEPTS: ClassVar[dict[str, int]] = {
        "car": 0,
        "park": 0,
        "automobile": 0,
        "vehicle": 0,
        "lunch": 1,
        "food": 1,
    }

    def _vector(self, text: str) -> list[float]:
        vector = [0.0, 0.0, 0.01]
        for word in text.lower().replace("?", " ").replace(".", " ").split():
            if word in self.CONCEPTS:
                vector[self.CONCEPTS[word]] += 1.0
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def test_T12_embeddings_are_fused_by_reciprocal_rank():
    tools = library()
    names = [t.name for t in tools]
    question = "automobile?"
    keywords_only = CandidateIndex(tools).rank(question, names)
    fused = CandidateIndex(tools, KeywordBlindEmbeddings()).rank(question, names)
    assert keywords_only[0].score == 0.0  # no word in common
    assert fused[0].tool == "parking"
    assert 0 < fused[0].score <= (1 + COSINE_WEIGHT) / (RRF_K + 1)  # first in both at best


def test_T12_prefilter_keeps_registry_order_among_the_offered():
    tools = library()
    result = prefilter(CandidateIndex(tools), "lunch menu and parking fees", tools, cap=3)
    order = [t.name for t in tools]
    offered = [t.name for t in result.offered]
    assert offered == sorted(offered, key=order.index)
    assert {"parking", "cafeteria"} <= set(offered)


def test_T12_tool_text_has_name_routing_question_instruction_description():
    tool = make("car_park", "fees")
    text = tool_text(tool)
    assert "car park" in text
    assert "true when the user asks about fees" in text
    assert "Answers questions about fees" in text


def test_T12_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 57, 1702)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "57th", "1,702nd",
    ]  # fmt: skip


def test_PF1_a_prompts_keyword_scores_are_added_up_once_for_its_ranking_and_evidence(
    monkeypatch: Any,
) -> None:
    index = CandidateIndex(library(5))
    fresh = CandidateIndex(library(5))
    counted: list[str] = []
    real = index._keyword_scores

    def count(prompt: str, ignore: Any) -> Any:
        counted.append(prompt)
        return real(prompt, ignore)

    monkeypatch.setattr(index, "_keyword_scores", count)
    names = [tool.name for tool in library(5)]
    prompt = "Where is the car park and what are the fees?"
    ranking = index.rank(prompt, names, keywords_only=True)
    evidence = index.scores(prompt, names)
    assert counted == [prompt]
    assert ranking == fresh.rank(prompt, names, keywords_only=True)
    assert evidence == fresh.scores(prompt, names)
    assert evidence["parking"] > 0
    ignored = frozenset({"car"})
    assert index.scores(prompt, names, ignore=ignored) == fresh.scores(
        prompt, names, ignore=ignored
    )
    other = "When can relatives visit?"
    assert index.scores(other, names) == fresh.scores(other, names)
    assert counted == [prompt, prompt, other]
