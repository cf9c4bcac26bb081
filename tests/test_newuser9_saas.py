"""N1 (ninth round): a LangChain developer's SaaS support domain, from the docs alone.

The domain is ``tests/newuser9_domain`` (Notely, a note-taking app, in English): six pages
with a front matter ingested from a folder into a store with the developer's own LangChain
``Embeddings``, a plan-limits context tool with a request model (R2, T6) and a password
reset that acts once per call key, gated on the person's data (T4, Q6). It was used the
ways a LangChain app uses it: an LCEL chain, ``create_agent`` with the graph as a tool,
``stream`` in three modes, ``ainvoke``, an ``InMemorySaver`` thread, callbacks and the CLI.
The tests named after a rule with a finding fail without the round's mends; the others pin
what the round drove. What the round met is in ``docs/guides/new-user-notes.md`` ("A ninth
domain").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.checkpoint.memory import InMemorySaver
from newuser9_domain import notely
from newuser9_domain.notely import PAGES, HashingEmbeddings, load
from pydantic import BaseModel

from toolweave import (
    ChatbotTool,
    ConfigurationError,
    Domain,
    InvalidContextError,
    InvalidToolResultError,
    RunContext,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    UnknownDomainError,
    build_graph,
    ingest,
)
from toolweave.adapters.langchain import as_agent_tool
from toolweave.domains import load_domain
from toolweave.testing import ScriptedChatModel

VERIFIED = {"account_id": "N-1001", "email_verified": True}
RESET_QUESTION = "Please reset my password."


@pytest.fixture(autouse=True)
def no_resets() -> Iterator[None]:
    """Each test starts with an empty identity service."""
    notely.RESETS.clear()
    yield
    notely.RESETS.clear()


def _agent_calling_twice(question: str) -> ScriptedChatModel:
    """An agent's model that calls the support tool twice with one question, then ends."""
    calls = [
        AIMessage(
            content="",
            tool_calls=[{"name": "ask_support", "args": {"question": question}, "id": f"c{n}"}],
        )
        for n in (1, 2)
    ]
    return ScriptedChatModel(script=[*calls, AIMessage(content="Done.")])


def _support_agent() -> Any:
    domain, tools = load()
    graph = build_graph(domain, tools, checkpointer=InMemorySaver())
    support = as_agent_tool(graph, name="ask_support", description="Notely support", thread="agent")
    return create_agent(_agent_calling_twice(RESET_QUESTION), [support])


def test_T4_X4_the_agent_tool_passes_the_agents_run_context_to_a_gated_tool() -> None:
    """``create_agent(...).invoke(..., context=RunContext(user_data=...))`` opens the gate.

    Before, the inner run got no context: the reset was never offered inside an agent and the
    agent read the account page's "ask the assistant to reset it" instead (T4). The agent's
    retry of the same call acts once (S5, Q6).
    """
    agent = _support_agent()
    out = agent.invoke(
        {"messages": [("human", "reset my password")]},
        {"configurable": {"thread_id": "agent-1"}},
        context=RunContext(user_data=VERIFIED),
    )
    tool_texts = [m.content for m in out["messages"] if m.type == "tool"]
    assert tool_texts[0].startswith("I sent a password reset link")
    assert len(notely.RESETS) == 1


@dataclass
class AppContext:
    """A LangChain app's own agent context: the signed-in user and more."""

    user_data: dict[str, Any] = field(default_factory=dict)
    locale: str = "en"


def test_T4_an_agents_own_context_with_user_data_opens_the_gate_under_ainvoke() -> None:
    """A context of the agent's own schema passes its ``user_data`` (async path too)."""
    agent = _support_agent()
    out = asyncio.run(
        agent.ainvoke(
            {"messages": [("human", "reset my password")]},
            {"configurable": {"thread_id": "agent-2"}},
            context=AppContext(user_data=VERIFIED),
        )
    )
    assert any("reset link" in str(m.content) for m in out["messages"] if m.type == "tool")
    assert len(notely.RESETS) == 1


def test_T4_without_the_persons_data_the_agent_tool_does_not_reset() -> None:
    """No context, or an unverified account: the gate holds the reset back (T4)."""
    agent = _support_agent()
    agent.invoke({"messages": [("human", "reset")]}, {"configurable": {"thread_id": "a3"}})
    unverified = RunContext(user_data={"account_id": "N-2", "email_verified": False})
    agent = _support_agent()
    agent.invoke(
        {"messages": [("human", "reset")]},
        {"configurable": {"thread_id": "a4"}},
        context=unverified,
    )
    assert notely.RESETS == {}


def test_S5_Q6_the_reset_acts_once_when_the_same_message_is_sent_twice() -> None:
    """The same message twice on one thread answers again without a second reset."""
    domain, tools = load()
    graph = build_graph(domain, tools, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "twice"}}
    member = RunContext(user_data=VERIFIED)
    first = graph.invoke(RESET_QUESTION, config, context=member)
    again = graph.invoke(RESET_QUESTION, config, context=member)
    assert first["answer"] == again["answer"]
    assert len(notely.RESETS) == 1


def test_N1_own_langchain_embeddings_embed_every_ingested_sentence() -> None:
    """A tiny ``Embeddings`` class of one's own is what the store embeds with (retrieval)."""

    class Counting(HashingEmbeddings):
        model_id = "counting-hash"
        embedded: int = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            Counting.embedded += len(texts)
            return super().embed_documents(texts)

    store = SqliteDocumentStore(":memory:", embeddings=Counting())
    ingest([str(PAGES)], store, domain="notely-docs")
    sentences = sum(
        len([s for s in page.read_text().split("\n") if s.endswith(".")])
        for page in Path(PAGES).glob("*.md")
    )
    assert Counting.embedded >= sentences


def test_X1_the_domain_answers_in_a_chain_a_stream_ainvoke_and_a_thread() -> None:
    """The README's chain, the three stream modes, ``ainvoke``, a follow-up and callbacks."""
    domain, tools = load()
    graph = build_graph(domain, tools)
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = prompt | graph | RunnableLambda(lambda state: state["answer"])
    assert "Markdown, PDF or HTML" in chain.invoke({"question": "How do I export my notes?"})

    modes: dict[str, list[Any]] = {"messages": [], "custom": [], "updates": []}
    for mode, chunk in graph.stream(
        "How much does the Plus plan cost?", stream_mode=["messages", "custom", "updates"]
    ):
        modes[mode].append(chunk)
    phrases = [c.get("phrase") for c in modes["custom"] if c.get("type") == "tool_progress"]
    assert "Looking up the plan" in phrases
    assert "4 dollars" in "".join(str(m[0].content) for m in modes["messages"])
    assert any("answer" in update for update in modes["updates"])

    offline = asyncio.run(graph.ainvoke("Can I use the app offline?"))
    assert "desktop app works offline" in offline["answer"]

    threaded = build_graph(domain, tools, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "follow"}}
    threaded.invoke("How many people can I share a notebook with on Free?", config)
    assert "50 people" in threaded.invoke("And on the Team plan?", config)["answer"]

    class Names(BaseCallbackHandler):
        def __init__(self) -> None:
            self.names: list[str] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            self.names.append(str(kwargs.get("name")))

    names = Names()
    graph.invoke("How often do notes sync?", {"callbacks": [names]})
    assert {"route", "execute", "answer"} <= set(names.names)


def test_N2_an_unknown_domain_says_how_to_add_it(tmp_path: Path) -> None:
    """``--domain notes-app`` before its package is installed names the two ways to add it."""
    with pytest.raises(UnknownDomainError) as raised:
        load_domain("notes-app", data_dir=tmp_path)
    message = str(raised.value)
    assert "toolweave ingest PATH --domain notes-app" in message
    assert "toolweave.plugins" in message


def test_T2_a_graph_without_a_domain_name_is_refused_saying_what_to_name() -> None:
    """``build_graph("", tools)`` ran and answered "no information" to everything (T2)."""
    _, tools = load()
    with pytest.raises(ConfigurationError, match="has no name"):
        build_graph("", tools)
    with pytest.raises(ConfigurationError, match="has no name"):
        build_graph(Domain(name="  "), tools)


class _Misspelled(ChatbotTool[BaseModel]):
    name = "export_help"
    domain = "notley"  # a slip of the keyboard for "notely"
    executable_instruction = "export_help: true when the user asks how to export notes."

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "Export from the notebook menu.")


def test_T2_a_tool_of_a_near_spelled_domain_among_others_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One tool with a misspelt ``domain`` among right ones never ran, without a word (T2)."""
    domain, tools = load()
    with caplog.at_level(logging.WARNING, logger="toolweave.graph.builder"):
        build_graph(domain, [*tools, _Misspelled()])
    warned = [r.getMessage() for r in caplog.records if "near-spelling" in r.getMessage()]
    assert warned
    assert "'export_help'" in warned[0]
    assert "'notley'" in warned[0]


def test_T2_tools_of_a_domain_far_from_the_graphs_are_not_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A registry shared by unrelated domains builds without a warning."""
    domain, tools = load()

    class Other(_Misspelled):
        name = "other_domain_tool"
        domain = "billing"

    with caplog.at_level(logging.WARNING, logger="toolweave.graph.builder"):
        build_graph(domain, [*tools, Other()])
    assert not [r for r in caplog.records if "near-spelling" in r.getMessage()]


class _ReturnsText(ChatbotTool[BaseModel]):
    name = "export_text"
    domain = "notely"
    executable_instruction = "export_text: true when the user asks how to export notes."
    routing_examples = ("How do I export my notes?",)

    def execute(self, request: BaseModel, ctx: ToolCallContext) -> ToolResult | None:
        return "Export from the notebook menu."  # type: ignore[return-value]


def test_R3_a_tool_returning_text_is_told_which_result_to_return() -> None:
    """A tool returning a ``str`` read "returned str, not a ToolResult or None" and no more."""
    domain, tools = load()
    graph = build_graph(domain, [*tools, _ReturnsText()])
    with pytest.raises(InvalidToolResultError, match=r"ToolResult\.as_answer\(self\.name, text\)"):
        graph.invoke("How do I export my notes?")


def test_T1_a_tool_class_given_for_a_tool_is_refused_saying_to_instantiate_it() -> None:
    """``build_graph(domain, [..., PlanLimits])`` built, and the plan tool never ran (T1)."""
    domain, tools = load()
    with pytest.raises(ConfigurationError, match=r"register an instance, PlanLimits\(\)"):
        build_graph(domain, [*tools[:-2], notely.PlanLimits])  # type: ignore[list-item]


def test_T1_tools_that_are_not_a_list_are_refused_saying_what_to_pass() -> None:
    """One tool, or the domain and the tools swapped, read "'X' object is not iterable"."""
    domain, tools = load()
    what = r"build_graph\(domain, \[tool, \.\.\.\]\)"
    with pytest.raises(ConfigurationError, match=what):
        build_graph(domain, notely.PlanLimits())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=what):
        build_graph(tools, domain)  # type: ignore[arg-type]


class _Collecting(BaseTracer):
    """A LangSmith-free tracer: keeps the finished root runs."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.roots.append(run)


def _phase_runs(run: Run) -> list[Run]:
    return [child for child in run.child_runs if "toolweave" in (child.tags or [])]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_L1_a_tracer_of_ones_own_reads_the_phase_runs_like_the_ledger(mode: str) -> None:
    """A ``BaseTracer`` in ``callbacks`` saw "route", "execute", "execute": no task, no tools.

    The docs promise runs named "<phase> <task>" with the step's ledger as metadata; only
    LangSmith's run tree was renamed, so a tracer of one's own (Phoenix, a file logger) read
    LangGraph's node names.
    """
    domain, tools = load()
    graph = build_graph(domain, tools)
    tracer = _Collecting()
    config: Any = {"callbacks": [tracer]}
    question = "How much does the Plus plan cost?"
    if mode == "invoke":
        graph.invoke(question, config)
    else:
        asyncio.run(graph.ainvoke(question, config))
    phases = _phase_runs(tracer.roots[0])
    assert [run.name for run in phases][:3] == ["normalize 1", "route 1", "execute 1"]
    route = next(run for run in phases if run.name == "route 1")
    assert route.metadata["phase"] == "route"
    assert "plan_limits" in route.metadata["tools"]


@dataclass
class _ModelContext:
    """An agent context whose user data is an object, not a mapping."""

    user_data: BaseModel


def test_X5_an_agents_user_data_that_is_no_mapping_is_refused_saying_what_it_must_be() -> None:
    """User data of the wrong type is refused with the run context's message, not dropped."""

    class Account(BaseModel):
        account_id: str = "N-1001"

    agent = _support_agent()
    with pytest.raises(InvalidContextError, match="must be a mapping"):
        agent.invoke(
            {"messages": [("human", "reset my password")]},
            {"configurable": {"thread_id": "agent-5"}},
            context=_ModelContext(user_data=Account()),
        )
    assert notely.RESETS == {}
