"""D1-D3, D7: the gatekeeper and the deep-search plan, as graph behaviour (search tools faked)."""

from __future__ import annotations

from typing import Any

from support import ask, make_tool

from toolweave import (
    ContextVerdict,
    Domain,
    EmptyRequest,
    Normalized,
    RunContext,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.testing import FunctionAssistant

PAGES = {
    "neighbor_search": "Parking costs 500 Ft per hour.",
    "context_search": "The cafeteria opens at 7:00.",
}


def searching(name: str, calls: list[str], *, reads: int = 1) -> Any:
    """A stand-in search tool: reads its page ``reads`` times through the budgeted model."""

    def result(tool: str, ctx: ToolCallContext) -> ToolResult | None:
        calls.append(f"{ctx.task_no}:{name}")
        assert ctx.llm is not None
        answer = None
        for _ in range(reads):
            answer = ctx.llm.read_passage(ctx.task.task_prompt, PAGES[name]) or answer
        return None if answer is None else ToolResult.as_guaranteed_context(tool, answer)

    return make_tool(name, routing=None, result=result, request_model=EmptyRequest)


def reader(question: str, passage: str) -> str | None:
    word = question.split()[-1].strip("?").lower()
    return passage if word in passage.lower() else None


def judge(missing: tuple[str, ...]) -> Any:
    def verdict(question: str, documents: Any, guaranteed: Any) -> ContextVerdict:
        return ContextVerdict(sufficient=not missing, missing=missing)

    return verdict


class FreeAssistant(FunctionAssistant):
    """A double whose calls cost nothing, like the offline model's (``free_calls``)."""

    free_calls = True


def graph_with(
    missing: tuple[str, ...],
    calls: list[str],
    *,
    reads: int = 1,
    assistant_type: type[FunctionAssistant] = FunctionAssistant,
    **limits: Any,
):
    deep = DeepSearchCoordinator()
    domain = Domain(
        name="test",
        default_retrieval_tool="rag",
        deep_fallback=lambda prompt_type: deep if prompt_type != "smalltalk" else None,
    )
    tools = [
        make_tool("rag", routing=None, request_model=EmptyRequest),
        searching("neighbor_search", calls, reads=reads),
        searching("context_search", calls, reads=reads),
        deep,
    ]
    assistant = assistant_type(
        judge=judge(missing), read=reader, answer=lambda r: " | ".join(r.guaranteed)
    )
    limits.setdefault("deep_fallback_llm_calls", 6)  # a model whose page reads pay (D7)
    return build_graph(domain, tools, assistant=assistant, **limits)


def test_D1_sufficient_context_means_no_deep_search():
    calls: list[str] = []
    out = ask(graph_with((), calls), "q")
    assert calls == []
    assert out["activated"] == ["1:rag"]
    gate = [e for e in out["ledger"] if e.kind == "gatekeeper"]
    assert [e.verdict for e in gate] == ["sufficient"]
    assert out["deep_fallback_calls"] == 1


def test_D2_no_deep_fallback_tool_for_the_prompt_type_means_no_gatekeeper_call():
    calls: list[str] = []
    smalltalk = FunctionAssistant(
        normalize=lambda m, h: Normalized(question=m, user_lang="en", prompt_type="smalltalk"),
        judge=judge(("What about parking?",)),
    )
    graph = graph_with(("What about parking?",), calls)
    out = graph.invoke({"messages": [("human", "hi")]}, context=RunContext(assistant=smalltalk))
    assert out["deep_fallback_calls"] == 0
    assert calls == []
    skipped = next(e for e in out["ledger"] if e.kind == "deep_fallback")
    assert skipped.verdict == "not run"
    assert "smalltalk" in skipped.reason


def test_D3_neighbor_first_full_search_skipped_when_neighbor_answered():
    calls: list[str] = []
    out = ask(graph_with(("What about parking?",), calls), "q")
    assert out["activated"] == ["1:rag", "1.1:neighbor_search"]
    assert calls == ["1.1:neighbor_search"]
    decision = next(e for e in out["ledger"] if e.kind == "conditional")
    assert (decision.task_no, decision.verdict) == ("1.2", "skip")
    assert out["answer"] == "Parking costs 500 Ft per hour."  # guaranteed context (R5, M6)


def test_D3_full_search_runs_when_neighbor_found_nothing():
    calls: list[str] = []
    out = ask(graph_with(("When does the cafeteria open?",), calls), "q")
    assert calls == ["1.1:neighbor_search", "1.2:context_search"]
    assert out["answer"] == "The cafeteria opens at 7:00."
    planned = next(e for e in out["ledger"] if e.kind == "deep_fallback")
    assert planned.details == {
        "1.1": "When does the cafeteria open?",
        "1.2": "When does the cafeteria open?",
    }


def test_D7_by_default_a_deep_round_spends_the_gatekeeper_call_alone() -> None:
    """The default cap: the gatekeeper; its pieces are searched, the passages given unread."""
    from toolweave import Limits

    calls: list[str] = []
    missing = ("When does the cafeteria open?", "What about parking?", "Is there wifi?")
    default = Limits().deep_fallback_llm_calls
    out = ask(graph_with(missing, calls, reads=3, deep_fallback_llm_calls=default), "q")
    assert default == 1
    assert out["deep_fallback_calls"] == 1  # the gatekeeper; no page read
    assert calls  # the pieces were still searched


def test_D7_an_assistant_whose_calls_cost_nothing_reads_past_the_cap() -> None:
    """``LlmAssistant.free_calls`` (the offline model): page reads are counted, not capped."""
    calls: list[str] = []
    missing = ("When does the cafeteria open?", "What about parking?", "Is there wifi?")
    graph = graph_with(
        missing, calls, reads=3, assistant_type=FreeAssistant, deep_fallback_llm_calls=1
    )
    out = ask(graph, "q")
    assert out["deep_fallback_calls"] > 1  # the gatekeeper and the page reads, all counted


def test_D7_one_deep_round_and_the_llm_call_cap_is_never_exceeded():
    calls: list[str] = []
    missing = ("When does the cafeteria open?", "What about parking?", "Is there wifi?")
    out = ask(graph_with(missing, calls, reads=3, deep_fallback_llm_calls=5), "q")
    assert out["deep_fallback_calls"] == 5  # 1 gatekeeper + 4 page readings, then refused
    assert sum(1 for e in out["ledger"] if e.kind == "gatekeeper") == 1
    assert out["llm_calls"] == 1 + 5 + 1  # normalize, deep fallback, answer (nothing to route)
