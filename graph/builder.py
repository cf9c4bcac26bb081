"""The builder: one ``StateGraph`` over the typed state, one node per phase."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from toolweave.graph.answer import make_answer
from toolweave.graph.compiled import InterruptedRuns, ToolweaveGraph
from toolweave.graph.context import Dependencies, Limits, RunContext
from toolweave.graph.coordinate import make_coordinate, make_decide_conditional
from toolweave.graph.deep_fallback import make_deep_fallback
from toolweave.graph.execute import make_execute
from toolweave.graph.langgraph_private import RunnableCallable, lean_branch_reads
from toolweave.graph.normalize import make_normalize
from toolweave.graph.pause import make_ask_user, make_take_reply
from toolweave.graph.route import make_route
from toolweave.graph.walk import NEXT_PHASES, next_phase, route_entry
from toolweave.llm.port import LlmAssistant
from toolweave.state.errors import ConfigurationError
from toolweave.state.graph_state import GraphState, InputState, OutputState
from toolweave.state.secrets import secrets_of
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool, ToolRegistry

logger = logging.getLogger(__name__)

UNKNOWN_DOMAIN_TOOL = (
    "domain {domain!r}: {field} names {name!r}, which is no registered tool; registered: {known}"
)


NO_TOOL_OF_DOMAIN = (
    "domain {domain!r}: none of the {count} tool(s) given may run in it, they are of "
    "domain {theirs} (T2): did you mean {close!r}? Build the graph for the domain the "
    "tools name, or give them domain = None to run in every domain"
)
NO_DOMAIN_NAME = (
    "the graph's domain has no name ({name!r}): a tool with a domain runs only in the domain "
    'it names (T2), so none of them would ever run; build it as build_graph("support", tools) '
    'or Domain(name="support"), the name your tools\' `domain` says'
)
SOME_TOOLS_MISSPELLED = (
    "domain %r: tool(s) %s are of domain %r, a near-spelling of it, and will never run in it "
    "(T2); if that is a misspelling, correct the tools' `domain`"
)
DOMAIN_SPELLING_CUTOFF = 0.8
"""difflib ratio from which a tool's domain name is a misspelling of the graph's (T2)."""


def check_domain_tools(domain: Domain, registry: ToolRegistry) -> None:
    """The domain's default retrieval tool is a registered tool; the domain's name is no typo.

    Raises:
        ConfigurationError: The default retrieval tool is not registered, or every tool is of a
            domain whose name is a near-spelling of this one's (T2: none would ever run).
    """
    if not domain.name.strip():
        raise ConfigurationError(NO_DOMAIN_NAME.format(name=domain.name))
    _check_domain_spelling(domain, registry)
    name = domain.default_retrieval_tool
    if name is not None and registry.get(name) is None:
        known = ", ".join(tool.name for tool in registry) or "none"
        raise ConfigurationError(
            UNKNOWN_DOMAIN_TOOL.format(
                domain=domain.name, field="default_retrieval_tool", name=name, known=known
            )
        )


def _check_domain_spelling(domain: Domain, registry: ToolRegistry) -> None:
    """Tools of a domain whose name is a near-spelling of this one's (T2).

    Refused when no tool would run in the graph at all, logged when only some would not.
    """
    theirs = sorted({tool.domain for tool in registry if tool.domain is not None} - {domain.name})
    close = difflib.get_close_matches(domain.name, theirs, cutoff=DOMAIN_SPELLING_CUTOFF)
    if not close:
        return
    if all(tool.domain is not None and tool.domain != domain.name for tool in registry):
        raise ConfigurationError(
            NO_TOOL_OF_DOMAIN.format(
                domain=domain.name,
                count=len(registry),
                theirs=", ".join(map(repr, theirs)),
                close=close[0],
            )
        )
    for name in close:
        tools = ", ".join(repr(tool.name) for tool in registry if tool.domain == name)
        logger.warning(SOME_TOOLS_MISSPELLED, domain.name, tools, name)


def create_state_graph(
    domain: Domain | str,
    tools: Iterable[AnyTool] | ToolRegistry,
    *,
    assistant: LlmAssistant | None = None,
    limits: Limits | None = None,
) -> StateGraph[GraphState, RunContext, InputState, OutputState]:
    """The uncompiled graph, for callers who add nodes or compile it themselves.

    ``assistant`` defaults to :func:`toolweave.llm.env.default_assistant`:
    ChatOpenAI when ``OPENAI_API_KEY`` is set, else the offline model.
    """
    if assistant is None:
        from toolweave.llm.env import default_assistant

        assistant = default_assistant()
    deps = Dependencies(
        domain=Domain(name=domain) if isinstance(domain, str) else domain,
        registry=tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools),
        assistant=assistant,
        limits=limits or Limits(),
    )
    check_domain_tools(deps.domain, deps.registry)
    graph = StateGraph(
        GraphState, context_schema=RunContext, input_schema=InputState, output_schema=OutputState
    )
    nodes = {
        "normalize": make_normalize(deps),
        "take_reply": make_take_reply(deps),
        "coordinate": make_coordinate(deps),
        "decide_conditional": make_decide_conditional(deps),
        "route": make_route(deps),
        "execute": make_execute(deps),
        "ask_user": make_ask_user(deps),
        "deep_fallback": make_deep_fallback(deps),
    }
    # S2: routes on the post-reducer state, untraced as LangGraph's own edges (no run per step)
    route = RunnableCallable(next_phase, name="next_phase", trace=False)
    for name, node in nodes.items():
        graph.add_node(name, node)
        graph.add_conditional_edges(name, route, list(NEXT_PHASES[name]))
    graph.add_node("answer", make_answer(deps))
    # the entry route too: a plain function would be traced, a callback run per request
    entry = RunnableCallable(route_entry, name="route_entry", trace=False)
    graph.add_conditional_edges(START, entry, ["normalize", "take_reply"])
    graph.add_edge("answer", END)
    return graph


def build_graph(
    domain: Domain | str,
    tools: Iterable[AnyTool] | ToolRegistry,
    *,
    assistant: LlmAssistant | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    limits: Limits | None = None,
    name: str = "toolweave",
    interrupted_runs: InterruptedRuns = "finish",
    routing_threshold: float | None = None,
    **limit_overrides: int,
) -> ToolweaveGraph:
    """Build and compile the orchestration graph for one domain.

    Args:
        domain: The domain (or its name) whose tools may run (T2).
        tools: The tools, or a ready :class:`ToolRegistry`; later names win (T1).
        assistant: The LLM port; defaults to ChatOpenAI from the environment, or
            the offline model when no key is configured.
        checkpointer: Where runs are checkpointed; ``None`` leaves it to the caller
            (LangGraph Studio and ``langgraph dev`` bring their own).
        store: The LangGraph store the runs may use (``runtime.store``); ``None`` leaves
            it to the caller (a LangGraph server brings its own). Where a run has one, a
            tool that acts is journaled there, so a turn whose checkpoints were deleted
            (the server's ``rollback`` double texting) does not act twice (S5, Q6).
        limits: Bounds of every loop (X3).
        **limit_overrides: Single fields of ``limits`` to change, e.g. ``max_depth=2``.
        name: The graph's name in traces and Studio.
        interrupted_runs: What a new message does to a run on its thread that
            stopped mid-way (Q5): ``"finish"`` it first (default), or
            ``"abandon"`` it with a ``run_abandoned`` ledger entry.
        routing_threshold: The least P(yes) a routed tool needs to run (0-1), where
            the model gives log-probabilities (T5); replaces the domain's own
            ``Domain.routing_threshold``. ``None``: the domain's.

    Returns:
        The compiled graph, with a recursion limit derived from ``limits``; it
        checks every input before anything is stored (X5).
    """
    resolved = Limits(**{**vars(limits or Limits()), **limit_overrides})
    if routing_threshold is not None:
        if not 0 <= routing_threshold <= 1:
            raise ConfigurationError(f"routing_threshold must be 0-1, not {routing_threshold}")
        named = Domain(name=domain) if isinstance(domain, str) else domain
        domain = replace(named, routing_threshold=routing_threshold)
    if assistant is None:
        from toolweave.llm.env import default_assistant

        assistant = default_assistant()
    registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
    graph = create_state_graph(domain, registry, assistant=assistant, limits=resolved)
    langgraph_compiled = graph.compile(checkpointer=checkpointer, store=store, name=name)
    # PF1: the route reads the post-reducer state copying only the channels a step wrote
    lean_branch_reads(langgraph_compiled)
    compiled = ToolweaveGraph.of(
        langgraph_compiled,
        limits=resolved,
        interrupted_runs=interrupted_runs,
        build_secrets=secrets_of(assistant),  # its API key, in every run's scope (X4, X6)
        acts=any(getattr(tool, "side_effects", False) for tool in registry),  # S5, Q6 nested
        domain=domain if isinstance(domain, str) else domain.name,
        texts=None if isinstance(domain, str) else domain.texts,
    )
    return compiled.with_config(recursion_limit=resolved.recursion_limit)
