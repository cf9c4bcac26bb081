"""The ``route`` node: forced activation (F1-F4) or one routing call (T5, A5) and its guards."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.graph.candidates import (
    ACTING_IN_DOUBT,
    GuardOutcome,
    guard,
    offer_candidates,
)
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.graph.normalize import domain_tools
from toolweave.graph.walk import current_task_no
from toolweave.llm.port import Activation, RoutingVerdict
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.events import routed_event
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind, tools_run_below
from toolweave.state.task import ROOT_TASK_NO, TaskNode, TaskStatus, execution_text
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.registry import AnyTool

TOOL_CAP = "more than {cap} tools activated on the task; dropped"

ABSTAINED = "t5_below_threshold"
ABSTAIN = "routed, not run: P(yes) {p:.2f} is below the domain's routing threshold {t:g} (T5)"

RAN_BELOW = "ran on {task_no} this round: its results are in the buffer (S4, S5); not routed again"

REFUSED = "refused"
"""The ledger verdict of a forced tool that did not pass the gates (F4)."""


def forced_activation(
    deps: Dependencies, node: TaskNode, offered: set[str]
) -> tuple[list[AnyTool], list[LedgerEntry]]:
    """F1-F4: exactly the required tools that resolve and pass the gates; no LLM call."""
    tools: list[AnyTool] = []
    entries: list[LedgerEntry] = []
    for name in node.task.required_tool_names:
        tool = deps.registry.get(name)
        if tool is None:
            entries.append(entry(node, name, LedgerKind.FORCED_UNKNOWN, "skipped", "unknown tool"))
        elif tool.name not in offered:
            entries.append(
                entry(node, tool.name, LedgerKind.FORCED, REFUSED, "did not pass the gates (F4)")
            )
        elif tool not in tools:
            entries.append(entry(node, tool.name, LedgerKind.FORCED, "forced", f"as {name!r}"))
            tools.append(tool)
    return tools, entries


def not_run_below(
    deps: Dependencies, state: GraphState, node: TaskNode, offered: set[str]
) -> tuple[set[str], list[LedgerEntry]]:
    """S5: the offered tools, less those (but consumers, B2) that ran on a subtask this round."""
    if not node.children:
        return offered, []
    ran = tools_run_below(state["ledger"], node.task_no)
    again = {
        name
        for name in ran
        if name in offered and not isinstance(deps.registry.get(name), ContextConsumerTool)
    }
    entries = [
        entry(node, n, LedgerKind.TOOL_SKIPPED, "ran below", RAN_BELOW.format(task_no=ran[n]))
        for n in sorted(again)
    ]
    return offered - again, entries


def routing_candidates(deps: Dependencies, offered: set[str]) -> list[AnyTool]:
    """T5: the offered tools with a routing question, the default retrieval tool aside (A5)."""
    retrieval = deps.domain.default_retrieval_tool
    return [
        tool
        for tool in deps.registry
        if tool.name in offered and tool.executable_instruction and tool.name != retrieval
    ]


def gated_candidates(deps: Dependencies) -> list[AnyTool]:
    """T4, A9: the domain's tools with a routing question, the default retrieval aside.

    Those a request's gates refuse (not offered) are the ones A9's guard weighs the routed
    tools that act against; read once, when the node is built (PF1).
    """
    retrieval = deps.domain.default_retrieval_tool
    return [t for t in domain_tools(deps) if t.executable_instruction and t.name != retrieval]


def search_language(deps: Dependencies, offered: set[str]) -> str | None:
    """D9: the documents' language, when the default retrieval runs beside the routed tools (A5)."""
    retrieval = deps.domain.default_retrieval_tool
    return deps.domain.default_language if retrieval is not None and retrieval in offered else None


def routed_activation(
    deps: Dependencies, node: TaskNode, offered: set[str], outcome: GuardOutcome
) -> tuple[list[AnyTool], set[str], list[LedgerEntry]]:
    """T5 + A5: the guarded verdicts' tools, the tools in doubt (A9, Q1) and the retrieval."""
    retrieval = deps.domain.default_retrieval_tool
    activation = outcome.activation
    entries = [
        entry(node, v.tool, LedgerKind.ROUTING, "routed", _said(v), confidence=v.confidence)
        for v in activation.verdicts
        if v.run
    ]
    declined = {v.tool: _said(v) for v in activation.verdicts if not v.run}
    best = next((v.tool for v in activation.verdicts if v.best), None)
    if declined:
        named = f"; the model named {best} the best fit" if best in declined else ""
        why = f"{len(declined)} candidate(s) declined{named}"
        kind, names = LedgerKind.ROUTING, tuple(declined)
        entries.append(entry(node, None, kind, "declined", why, details=declined, tools=names))
    routed, abstained = abstain(deps.domain.routing_threshold, node, activation, outcome.routed)
    entries = outcome.screened + entries + outcome.resolved + abstained  # T5: abstention last
    tools = [tool for tool in deps.registry if tool.name in routed]  # registry order (A6)
    if retrieval is not None and retrieval in offered:
        tools.append(deps.registry[retrieval])
        words = activation.search_words
        said = f"default retrieval, also searching {words!r} (D9)" if words else "default retrieval"
        entries.append(entry(node, retrieval, LedgerKind.ROUTING, "default", said))
    return tools, outcome.in_doubt, entries


def held_back(entries: list[LedgerEntry]) -> tuple[list[str], list[str]]:
    """What the ``routed`` event names besides the tools that run: F4 refusals, then A9 holds."""
    refused = [e.tool for e in entries if e.kind is LedgerKind.FORCED and e.verdict == REFUSED]
    held = [name for e in entries if e.verdict == ACTING_IN_DOUBT for name in e.tools]
    return list(dict.fromkeys(t for t in refused if t)), list(dict.fromkeys(held))


def _said(verdict: RoutingVerdict) -> str:
    """A verdict's reason, with its P(yes) when the model gave one."""
    if verdict.confidence is None:
        return verdict.reason
    return f"{verdict.reason} (P(yes) {verdict.confidence:.2f})"


def abstain(
    threshold: float | None, node: TaskNode, activation: Activation, routed: set[str]
) -> tuple[set[str], list[LedgerEntry]]:
    """T5: a routed tool whose P(yes) is below the domain's ``routing_threshold`` does not run."""
    if threshold is None:
        return routed, []
    low = {
        v.tool: v.confidence
        for v in activation.verdicts
        if v.tool in routed and v.confidence is not None and v.confidence < threshold
    }
    entries = [
        entry(
            node, n, LedgerKind.ROUTING, ABSTAINED, ABSTAIN.format(p=p, t=threshold), confidence=p
        )
        for n, p in sorted(low.items())
    ]
    return routed - set(low), entries


def make_route(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``route`` node over ``deps``."""
    deps.candidate_index  # noqa: B018 - T12/A8: built once, here, not by the first request
    words = deps.domain_words  # the domain's name and store stop words: no evidence (N1)
    routable = gated_candidates(deps)

    def route(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Decide which tools run on the task, in ascending priority (A5, A6)."""
        node = state["tasks"][current_task_no(state)]
        given = frozenset(state["message"].offered)  # T4: the gates' verdicts, kept as given
        offered = set(given)
        requests: dict[str, dict[str, Any] | None] = {}
        calls = 0
        in_doubt: set[str] = set()
        words_for_search = ""
        if node.task.required_tool_names:
            tools, entries = forced_activation(deps, node, offered)
        else:
            offered, ran_below = not_run_below(deps, state, node, offered)  # S5
            candidates, prefiltered = offer_candidates(
                deps, node, routing_candidates(deps, offered), words.terms
            )  # T12
            activation = Activation(verdicts=(), llm_calls=0)
            if candidates:
                assistant = assistant_for(deps, runtime)
                prompt, text = node.task.task_prompt, execution_text(node.task)
                activation = yield from assistant.route_and_extract_steps(
                    prompt,
                    text,
                    candidates,
                    extraction_prompt=EXTRACTION_SYSTEM_PROMPT,
                    search_language=search_language(deps, offered),
                )
            gated = [tool for tool in routable if tool.name not in given]  # T4, A9
            said = state["message"].follow_up if node.task.task_no == ROOT_TASK_NO else ""
            outcome = guard(deps, node, candidates, activation, words, gated, said)  # T5-Q1
            tools, in_doubt, entries = routed_activation(deps, node, offered, outcome)
            entries = ran_below + prefiltered + entries
            requests = dict(outcome.activation.requests)
            calls = outcome.activation.llm_calls
            words_for_search = activation.search_words
        # A9: a tool in doubt runs last, after the retrieval (its answer joins it; Q1: no ask)
        ordered = sorted(tools, key=lambda tool: (tool.name in in_doubt, tool.priority))
        cap = deps.limits.max_tools_per_task
        entries += [
            entry(node, t.name, LedgerKind.TOOL_SKIPPED, "dropped", TOOL_CAP.format(cap=cap))
            for t in ordered[cap:]
        ]
        queue = [tool.name for tool in ordered[:cap]]
        status = TaskStatus.ROUTED if queue else TaskStatus.CLOSED
        as_context = [name for name in queue if name in in_doubt]
        updated = node.model_copy(
            update={
                "queue": queue,
                "status": status,
                "requests": requests,
                "as_context": as_context,
                "search_words": words_for_search,
            }
        )
        refused, held = held_back(entries)  # F4, A9: a person looks for these too
        runtime.stream_writer(routed_event(node.task_no, queue, refused=refused, held=held))
        return {"tasks": {node.task_no: updated}, "ledger": entries, "llm_calls": calls}

    return make_node("route", route)
