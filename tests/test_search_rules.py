"""D3-D6 with the real search tools: ContextSearchTool, NeighborPageSearchTool, the page graph."""

from __future__ import annotations

from typing import Any

import pytest
from stores import Store, StoreFactory
from support import ask, make_tool

from toolweave import ContextVerdict, Domain, EmptyRequest, ToolCallContext, build_graph
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.llm.budget import LlmBudget
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import AGENT_COORDINATOR_MARKER
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
)
from toolweave.tools.search.page_reading import UNREAD_CHARS

QUESTION = "When does the dialysis centre open?"


class Recording(FunctionAssistant):
    """A FunctionAssistant that records the kind of every model call."""

    def __init__(self, **steps: Any) -> None:
        super().__init__(**steps)
        self.calls: list[str] = []

    def normalize(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("normalize")
        return super().normalize(*args, **kwargs)

    def route_and_extract(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("route")
        return super().route_and_extract(*args, **kwargs)

    def judge_context(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("judge")
        return super().judge_context(*args, **kwargs)

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        self.calls.append(f"read:{passage.splitlines()[0]}")
        return super().read_passage(question, passage, user_lang=user_lang)

    def answer(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("answer")
        return super().answer(*args, **kwargs)


def reader(question: str, passage: str) -> str | None:
    """Answers from a page holding an opening time."""
    return next((line for line in passage.splitlines() if "opens at" in line), None)


def dialysis_store(make: StoreFactory, filler_pages: int = 5) -> Store:
    store = make()
    store.add_document(
        "centre",
        [
            "# Dialysis centre\nThe dialysis centre is in Building C. Its hours are:",
            "Weekdays: it opens at 7:00.",
            "Diet advice for dialysis patients.",
        ],
        name="Dialysis centre",
        lang="en",
    )
    for n in range(filler_pages):
        store.add_document(
            f"filler{n}", [f"The dialysis ward note {n} mentions the centre."], name=f"Note {n}"
        )
    return store


def ctx_for(assistant: FunctionAssistant, question: str, *, limit: int | None = None) -> Any:
    task = TaskInfo(task_no="1.2", task_prompt=question)
    return ToolCallContext(
        task=task,
        text=f"Original question{AGENT_COORDINATOR_MARKER}{question}",
        llm=LlmBudget(assistant, limit=limit, user_lang="en"),
    )


# --- D4 -----------------------------------------------------------------------------------


def test_D4_search_tools_have_no_routing_question_and_are_never_routed(make_store):
    store = dialysis_store(make_store)
    search = ContextSearchTool("context_search", None, store)
    neighbor = NeighborPageSearchTool("neighbor_search", None, store)
    assert search.executable_instruction is None
    assert neighbor.executable_instruction is None
    offered: list[str] = []

    def route(text: str, tools: Any) -> list[str]:
        offered.extend(t.name for t in tools if t.executable_instruction)
        return [t.name for t in tools]  # "yes" to every tool it is asked about

    assistant = Recording(route=route, judge=lambda q, d, g: True)
    domain = Domain(name="d", default_retrieval_tool="rag")
    graph = build_graph(
        domain, [RetrievalTool("rag", None, store), search, neighbor], assistant=assistant
    )
    out = ask(graph, QUESTION)
    assert out["activated"] == ["1:rag"]
    assert offered == []
    assert not any(call.startswith("read") for call in assistant.calls)


# --- D5 -----------------------------------------------------------------------------------


def test_D5_without_a_limit_the_candidate_pages_are_read_until_one_answers(make_store):
    assistant = Recording(read=reader)
    search = ContextSearchTool("context_search", None, dialysis_store(make_store))
    result = search.execute(EmptyRequest(), ctx_for(assistant, QUESTION))
    assert result is not None
    assert result.mode.value == "guaranteed_context"
    assert [d.text for d in result.documents] == ["Weekdays: it opens at 7:00."]
    reads = [c for c in assistant.calls if c.startswith("read:")]
    assert reads[-1] == "read:# Dialysis centre (p. 2)"  # stops at the first answer
    assert len(reads) == len(set(reads)) <= search.page_limit


def test_D5_D9_a_search_hitting_more_pages_than_the_limit_reads_none_and_returns_best_passages(
    make_store,
):
    assistant = Recording(read=reader)
    search = ContextSearchTool(
        "context_search", None, dialysis_store(make_store), max_brute_force_page_count=2
    )
    result = search.execute(EmptyRequest(), ctx_for(assistant, QUESTION))
    assert assistant.calls == []  # no LLM call at all
    assert result is not None
    assert result.mode.value == "guaranteed_context"
    best = search.store.search(QUESTION, limit=search.keyword_limit)[: search.best_sentences]
    assert best
    uncounted = [d.model_copy(update={"page_count": None}) for d in result.documents]
    keys = {d.key for d in uncounted}
    assert {d.key for d in best} <= keys  # the best sentences, unread ...
    for doc in uncounted:  # ... widened to their passages: a hit or its neighbour (D9)
        assert any(
            (doc.document_id, doc.page) == (hit.document_id, hit.page)
            and abs((doc.sentence_number or 0) - (hit.sentence_number or 0)) <= 1
            for hit in best
        )
    assert sum(len(d.text) for d in uncounted) <= UNREAD_CHARS
    assert all(d.page_count is not None for d in result.documents)  # R9


def test_D5_under_the_limit_pages_are_still_read(make_store):
    assistant = Recording(read=reader)
    search = ContextSearchTool(
        "context_search",
        None,
        dialysis_store(make_store, filler_pages=0),
        max_brute_force_page_count=10,
    )
    result = search.execute(EmptyRequest(), ctx_for(assistant, QUESTION))
    assert result is not None
    assert result.documents[0].page == 2
    assert assistant.calls[-1] == "read:# Dialysis centre (p. 2)"


def test_D5_no_keyword_hit_scans_the_whole_domain_only_without_a_limit(make_store):
    store = dialysis_store(make_store, filler_pages=2)  # 5 pages
    question = "Is there a chapel?"
    unlimited = Recording(read=lambda q, p: None)
    found = ContextSearchTool("s", None, store).execute(
        EmptyRequest(), ctx_for(unlimited, question)
    )
    assert nothing_judged(found)
    assert len(unlimited.calls) == store.page_count() == 5  # every page read once
    limited = Recording(read=lambda q, p: None)
    capped = ContextSearchTool("s", None, store, max_brute_force_page_count=100)
    assert nothing_judged(capped.execute(EmptyRequest(), ctx_for(limited, question)))
    assert limited.calls == []  # D5: the scan never runs


def nothing_judged(result):
    """No find; where the store ranks by meaning (the bundled model), at most its nearest
    sentences as plain context, never guaranteed (D8, D9)."""
    return result is None or result.mode.value == "context"


def test_D5_subclass_sets_the_limit_like_the_seed(make_store):
    class Capped(ContextSearchTool):
        max_brute_force_page_count = 1

    assert Capped("s", None, dialysis_store(make_store)).max_brute_force_page_count == 1
    assert (
        ContextSearchTool("s", None, dialysis_store(make_store)).max_brute_force_page_count is None
    )


def test_D7_the_budget_stops_the_domain_scan(make_store):
    store = dialysis_store(make_store, filler_pages=5)
    assistant = Recording(read=lambda q, p: None)
    ContextSearchTool("s", None, store).execute(
        EmptyRequest(), ctx_for(assistant, "Is there a chapel?", limit=3)
    )
    assert len(assistant.calls) == 3


def test_D5_exact_llm_calls_of_a_deep_fallback_run_with_and_without_the_limit(make_store):
    def run(limit: int | None) -> tuple[list[str], dict[str, Any]]:
        store = dialysis_store(make_store)
        deep = DeepSearchCoordinator()
        assistant = Recording(
            judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(QUESTION,)),
            read=reader,
            route=lambda text, tools: [],
        )
        domain = Domain(name="d", default_retrieval_tool="rag", deep_fallback=lambda t: deep)
        tools = [
            make_tool("rag", routing=None, request_model=EmptyRequest),
            deep,
            NeighborPageSearchTool("neighbor_search", None, store),
            ContextSearchTool("context_search", None, store, max_brute_force_page_count=limit),
        ]
        # D7's default cap (6 calls) could end the reading first: this test counts D5's
        graph = build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=12)
        out = ask(graph, "q")
        return assistant.calls, out

    calls, out = run(None)
    reads = [c for c in calls if c.startswith("read")]
    assert calls == ["normalize", "judge", *reads, "answer"]
    assert reads[-1] == "read:# Dialysis centre (p. 2)"
    assert out["deep_fallback_calls"] == 1 + len(reads)
    assert "opens at 7:00" in out["answer"]
    capped, out = run(2)
    assert capped == ["normalize", "judge", "answer"]  # no page read (D5)
    assert out["deep_fallback_calls"] == 1
    assert "dialysis" in out["answer"].lower()  # best sentences as guaranteed context


# --- D6 -----------------------------------------------------------------------------------


def paged_store(make: StoreFactory) -> Store:
    store = make()
    pages = [f"## Part {n}\nPage {n} text." for n in range(1, 6)]
    store.add_document("book", pages, name="Book")
    store.add_document("other", ["Unrelated page."], name="Other")
    return store


def prior(*pages: tuple[str, int]) -> dict[str, list[PromptAndContext]]:
    docs = tuple(
        UniqueTextDocument(
            document_id=d, page=p, sentence_number=1, text="x", sentence_score=1 - i / 10
        )
        for i, (d, p) in enumerate(pages)
    )
    return {"1:rag": [PromptAndContext(prompt="q", context="x", documents=docs)]}


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, ["Book (p. 4)", "Book (p. 2)"]),
        (2, ["Book (p. 4)", "Book (p. 2)", "Book (p. 5)", "Book (p. 1)"]),
    ],
)
def test_D6_neighbor_search_reads_only_the_pages_next_to_the_context(make_store, k, expected):
    assistant = Recording(read=lambda q, p: None)
    tool = NeighborPageSearchTool("neighbor_search", None, paged_store(make_store), k=k)
    result = tool.execute_with_prior_context(
        EmptyRequest(), ctx_for(assistant, "q"), prior(("book", 3))
    )
    assert result is None
    assert [c.removeprefix("read:# ") for c in assistant.calls] == expected


def test_D6_a_following_page_is_read_with_the_heading_it_continues(make_store):
    passages: list[str] = []

    def read(question: str, passage: str) -> str | None:
        passages.append(passage)
        return "found"

    tool = NeighborPageSearchTool("n", None, paged_store(make_store))
    result = tool.execute_with_prior_context(
        EmptyRequest(), ctx_for(FunctionAssistant(read=read), "q"), prior(("book", 3))
    )
    assert result is not None
    assert result.mode.value == "guaranteed_context"
    assert result.documents[0].page == 4
    assert passages == ["# Book (p. 4)\n## Part 4\nPage 4 text."]  # its own heading wins


def test_D6_no_context_pages_means_no_call(make_store):
    assistant = Recording()
    tool = NeighborPageSearchTool("n", None, paged_store(make_store))
    assert tool.execute_with_prior_context(EmptyRequest(), ctx_for(assistant, "q"), {}) is None
    assert assistant.calls == []


# --- D3 with the real tools ------------------------------------------------------------------


def deep_graph(store: Store, missing: str, assistant: Recording) -> Any:
    deep = DeepSearchCoordinator()
    domain = Domain(name="d", default_retrieval_tool="rag", deep_fallback=lambda t: deep)
    tools = [
        RetrievalTool("rag", None, store, limit=2),
        deep,
        NeighborPageSearchTool("neighbor_search", None, store),
        ContextSearchTool("context_search", None, store),
    ]
    return build_graph(domain, tools, assistant=assistant)


def test_D3_real_tools_neighbor_answer_skips_the_full_search(make_store):
    assistant = Recording(
        judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(QUESTION,)), read=reader
    )
    # no passage gives a price, so the gatekeeper is asked (A10)
    store = dialysis_store(make_store, 0)
    out = ask(deep_graph(store, QUESTION, assistant), "dialysis centre Building C price")
    assert out["activated"] == ["1:rag", "1.1:neighbor_search"]
    assert "opens at 7:00" in out["answer"]


def test_D3_real_tools_full_search_runs_when_the_neighbors_say_nothing(make_store):
    store = dialysis_store(make_store, 0)
    store.add_document("hours", ["The pharmacy opens at 8:00."], name="Pharmacy")
    question = "When does the pharmacy open?"
    assistant = Recording(
        judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(question,)),
        read=lambda q, p: reader(q, p) if "harmacy" in p else None,
    )
    out = ask(deep_graph(store, question, assistant), "dialysis centre Building C price")
    assert out["activated"] == ["1:rag", "1.2:context_search"]  # the others found nothing (R1)
    assert "The pharmacy opens at 8:00." in out["answer"]
