"""The registrar's own LangGraph app: triage, then toolweave, then post-processing.

Two ways of embedding the toolweave graph, as LangGraph offers them:

- ``as_subgraph_node``: the compiled graph is the node (``add_node("registrar", graph)``),
  sharing the parent's ``messages``, ``answer`` and ``sources`` keys;
- ``called_from_a_node``: a node of the parent's own calls ``graph.invoke`` itself and
  picks what it needs from the output.

``post_process`` can be made to fail once (``Crash``), to prove what a retry does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Checkpointer

from toolweave import LedgerEntry, Source


class RegistrarState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    category: str
    answer: str
    systems: list[str]
    sources: list[Source]
    ledger: list[LedgerEntry]
    reply_text: str


class Crash:
    """Makes ``post_process`` raise the first ``times`` times it runs."""

    def __init__(self, times: int = 0) -> None:
        self.times = times
        self.raised = 0

    def check(self) -> None:
        if self.raised < self.times:
            self.raised += 1
            raise RuntimeError("post-processing crashed (injected)")


def triage(state: RegistrarState) -> dict[str, Any]:
    last = str(state["messages"][-1].content).casefold()
    if "enrol" in last:
        return {"category": "enrolment"}
    if "fee" in last or "tuition" in last or "pay" in last:
        return {"category": "fees"}
    return {"category": "general"}


def make_post_process(crash: Crash) -> Callable[[RegistrarState], dict[str, Any]]:
    def post_process(state: RegistrarState) -> dict[str, Any]:
        crash.check()
        sources = state.get("sources") or []
        cited = "; ".join(f"{s.name} <{s.url}>" if s.url else s.name for s in sources)
        footer = f"\n\nSources: {cited}" if cited else ""
        return {"reply_text": f"[{state.get('category', '?')}] {state.get('answer', '')}{footer}"}

    return post_process


def as_subgraph_node(
    toolweave_graph: Any, checkpointer: Checkpointer, crash: Crash | None = None
) -> Any:
    """The parent graph with the toolweave graph as its ``registrar`` node."""
    builder = StateGraph(RegistrarState)
    builder.add_node("triage", triage)
    builder.add_node("registrar", toolweave_graph)
    builder.add_node("post_process", make_post_process(crash or Crash()))
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "registrar")
    builder.add_edge("registrar", "post_process")
    builder.add_edge("post_process", END)
    return builder.compile(checkpointer=checkpointer)


def called_from_a_node(
    toolweave_graph: Any, checkpointer: Checkpointer, crash: Crash | None = None
) -> Any:
    """The parent graph whose ``registrar`` node calls the toolweave graph itself."""

    def registrar(state: RegistrarState) -> dict[str, Any]:
        asked = {"messages": state["messages"], "systems": state.get("systems") or []}
        out = toolweave_graph.invoke(asked)
        return {"answer": out["answer"], "sources": out["sources"], "ledger": out["ledger"]}

    async def aregistrar(state: RegistrarState) -> dict[str, Any]:
        asked = {"messages": state["messages"], "systems": state.get("systems") or []}
        out = await toolweave_graph.ainvoke(asked)
        return {"answer": out["answer"], "sources": out["sources"], "ledger": out["ledger"]}

    from langchain_core.runnables import RunnableLambda

    builder = StateGraph(RegistrarState)
    builder.add_node("triage", triage)
    builder.add_node("registrar", RunnableLambda(registrar, afunc=aregistrar))
    builder.add_node("post_process", make_post_process(crash or Crash()))
    builder.add_edge(START, "triage")
    builder.add_edge("triage", "registrar")
    builder.add_edge("registrar", "post_process")
    builder.add_edge("post_process", END)
    return builder.compile(checkpointer=checkpointer)
