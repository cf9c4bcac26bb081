"""The ``deep_fallback`` node: the gatekeeper (D1) and the deep-search plan (D2, D3, D7, A10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.graph.answer import answer_request
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.llm.answer_rules import reading_quotes
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_reading import adds_no_piece, context_runs, lacks_asked_kind
from toolweave.llm.port import LlmAssistant
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.events import deep_fallback_event, gatekeeper_event
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import (
    ROOT_TASK_NO,
    PromptAndContext,
    TaskNode,
    TaskStatus,
    execution_text,
)
from toolweave.tools.effects import blocking, perform
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.search.context_search import ContextSearchTool
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool, context_pages
from toolweave.tools.search.novelty import Known
from toolweave.tools.search.protocol import PageGraphStore

NO_TOOL = "no deep-fallback tool for prompt type {prompt_type!r}"
NOT_OFFERED = "{name} did not pass the gates for this request"
NOT_DEEP_SEARCH = "{name} is not a DeepSearchCoordinator"
WITHHELD = (
    "the question is of the domain's withheld kind {kind!r}: its answer is the domain's "
    "text, never generated from the context (A7), so the context is not judged"
)
SKIPPED = "skipped"
COVERED = (
    "not asked (A10, D1): {where} holds every content word of the question, so no "
    "search could add a word of it"
)
READ = (
    "not asked (A10, D1): the offline reading of the context answers the question "
    "from {where}, the offline gatekeeper finds it sufficient, and no stored page uses a "
    "question word the context lacks"
)
JUDGED_LEXICALLY = (
    "judged by the lexical gatekeeper (no model call): Limits.deep_fallback_llm_calls is 0 (D7)"
)
NEIGHBOURS_KNOWN = (
    "no neighbour search: {pages} page(s) next to the context's pages, none saying "
    "anything the context does not; the full search runs at once (A10, D6, D8)"
)


def covering_text(
    question: str, documents: Sequence[UniqueTextDocument], guaranteed: Sequence[str]
) -> str | None:
    """Which context text holds every content word of ``question``, if one does (A10, D1).

    ``None`` too when the question asks for a kind of fact (a figure, an e-mail address) that
    no sentence of the context gives near its words (the offline gatekeeper's test): a
    search could still add it.
    """
    if not Known.of(documents, guaranteed).covers(question):
        return None
    if lacks_asked_kind(question, context_runs(documents, guaranteed)):
        return None
    for doc in documents:
        if Known.of([doc]).covers(question):
            return f"the passage {_label(doc)!r}"
    return "the context"


def neighbours_known(
    registry: ToolRegistry, coordinator: DeepSearchCoordinator, state: GraphState
) -> int | None:
    """How many neighbour pages there are when none says anything new, else ``None`` (D6)."""
    name = coordinator.neighbor_search_tool
    tool = None if name is None else registry.get(name)
    if not isinstance(tool, NeighborPageSearchTool):
        return None
    buffer = state["context_buffer"]
    known = Known.of_prior(buffer)
    pages = tool.neighbours(context_pages(buffer))
    for ref, _ in pages:
        text = tool.store.page(ref.document_id, ref.page)
        if text is not None and text.strip() and not known.covers(text):
            return None
    return len(pages)


def plan_deep_search(
    deps: Dependencies,
    state: GraphState,
    coordinator: DeepSearchCoordinator,
    missing: tuple[str, ...],
    rewrites: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, TaskNode], list[LedgerEntry]]:
    """The root's new subtasks (numbered, owned, with ``rewrites``, D8) and the root, reopened."""
    tasks = state["tasks"]
    root = tasks[ROOT_TASK_NO]
    planned = coordinator.plan_subtasks(root.task, missing, rewrites)
    entries: list[LedgerEntry] = []
    pages = neighbours_known(deps.registry, coordinator, state)
    if pages is not None:
        neighbour = coordinator.neighbor_search_tool  # D3, K3: every full search unconditional
        full = [sub for sub in planned if neighbour not in sub.required_tool_names]
        planned = [sub.model_copy(update={"conditional": False}) for sub in full]
        skip = _entry(SKIPPED, NEIGHBOURS_KNOWN.format(pages=pages))
        entries.append(skip.model_copy(update={"tool": coordinator.neighbor_search_tool}))
    room = deps.limits.max_tasks - len(tasks)
    context = execution_text(root.task)
    nodes: dict[str, TaskNode] = {}
    for index, sub in enumerate(planned, start=len(root.children) + 1):
        task_no = f"{ROOT_TASK_NO}.{index}"
        if len(nodes) >= room:
            tools = tuple(sub.required_tool_names)
            why, kind = "count limit", LedgerKind.SUBTASK_REFUSED
            entries.append(entry(task_no, coordinator.name, kind, "refused", why, tools=tools))
            continue
        info = sub.model_copy(
            update={
                "task_no": task_no,
                "owner_coordinator_name": coordinator.name,
                "prompt_context": context,
                "applied_coordinator_names": list(root.task.applied_coordinator_names),
                "sub_tasks": [],
            }
        )
        nodes[task_no] = TaskNode(task=info, parent=ROOT_TASK_NO, depth=1)
    reopened = root.task.model_copy(update={"required_tool_names": [coordinator.name]})
    nodes[ROOT_TASK_NO] = root.model_copy(
        update={
            "task": reopened,
            "children": [*root.children, *[no for no in nodes if no != ROOT_TASK_NO]],
            "status": TaskStatus.COORDINATED,
            "queue": [],
        }
    )
    return nodes, entries


def make_deep_fallback(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``deep_fallback`` node over ``deps``."""

    def deep_fallback(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Judge the context (D1); when it falls short, plan the deep search (D3)."""
        update: dict[str, Any] = {"deep_fallback_done": True}
        prompt_type = state["message"].prompt_type
        tool = deps.domain.deep_fallback_tool(prompt_type)
        if not isinstance(tool, DeepSearchCoordinator) or tool.name not in state["message"].offered:
            if tool is None:
                reason = NO_TOOL.format(prompt_type=prompt_type)
            elif not isinstance(tool, DeepSearchCoordinator):
                reason = NOT_DEEP_SEARCH.format(name=tool.name)
            else:
                reason = NOT_OFFERED.format(name=tool.name)
            update["ledger"] = [_entry("not run", reason)]
            return update
        # A7, A10: a withheld kind's answer is its text, whatever the context holds
        withheld = deps.domain.withheld_answer(
            state["message"].question, state["message"].user_lang
        )
        if withheld is not None:
            update["ledger"] = [_entry("not run", WITHHELD.format(kind=withheld[0]))]
            return update
        question, documents = state["message"].question, state["documents"]
        guaranteed = [g.context for g in state["guaranteed"]]
        # the store is read (SQLite): in a worker thread under ainvoke, never on the loop
        skipped = yield from perform(blocking(lambda: _not_asked(state, deps, tool)))
        if skipped is not None:  # A10: nothing a search could still find
            update["ledger"] = [_gate("sufficient", skipped)]
            runtime.stream_writer(gatekeeper_event(ROOT_TASK_NO, True, ()))
            return update
        assistant = assistant_for(deps, runtime)
        judge = _gatekeeper(deps, assistant)
        verdict = yield from judge.judge_context_steps(question, documents, guaranteed)
        lexical = judge is not assistant
        if not lexical:
            update.update(llm_calls=1, deep_fallback_calls=1)
        missing = verdict.missing[: deps.limits.deep_fallback_pieces]
        rewrites = {piece: verdict.phrasings(piece) for piece in missing}
        judged = "sufficient" if verdict.sufficient else "insufficient"
        details = {piece: " | ".join(found) for piece, found in rewrites.items() if found}
        reason = "; ".join([*missing, *([JUDGED_LEXICALLY] if lexical else [])])
        gate = _gate(judged, reason, details=details)
        runtime.stream_writer(gatekeeper_event(ROOT_TASK_NO, verdict.sufficient, missing))
        if verdict.sufficient or not missing:
            update["ledger"] = [gate]
            return update
        plan = blocking(lambda: _planned(deps, state, tool, missing, rewrites, [gate]))
        update.update((yield from perform(plan)))
        runtime.stream_writer(deep_fallback_event(ROOT_TASK_NO, update.pop("_planned")))
        return update

    return make_node("deep_fallback", deep_fallback)


def _gatekeeper(deps: Dependencies, assistant: LlmAssistant) -> LlmAssistant:
    """Who judges the context (D1): the run's model, or the lexical judge when the cap is 0 (D7).

    ``Limits.deep_fallback_llm_calls=0`` allows deep fallback no model call; the offline
    gatekeeper then judges (free, in-process) and names the question's words the context
    lacks as its pieces, searched by the store's own words and meaning (D8).
    """
    if assistant.free_calls or deps.limits.deep_fallback_llm_calls > 0:
        return assistant
    return OfflineAssistant().for_domain(deps.domain_words)


def _not_asked(
    state: GraphState, deps: Dependencies, coordinator: DeepSearchCoordinator
) -> str | None:
    """Why the gatekeeper is not asked (the ledger reason), or ``None`` to ask it (A10, D1)."""
    question, documents = state["message"].question, state["documents"]
    guaranteed = [g.context for g in state["guaranteed"]]
    where = covering_text(question, documents, guaranteed)
    if where is not None:
        return COVERED.format(where=where)
    quoted = reading_quotes(answer_request(state, deps))
    if (
        quoted is None
        or not OfflineAssistant().judge_context(question, documents, guaranteed).sufficient
    ):
        return None
    lacking = [w for w in Known.of(documents, guaranteed).lacking(question) if not adds_no_piece(w)]
    if searchable_words(deps.registry, coordinator, lacking):
        return None
    return READ.format(where=f"the passage {_label(quoted)!r}")


def searchable_words(
    registry: ToolRegistry, coordinator: DeepSearchCoordinator, words: Sequence[str]
) -> list[str]:
    """The ``words`` a page of the full search's store uses (all, when it cannot tell; D9)."""
    tool = registry.get(coordinator.search_tool)
    if not words:  # nothing to look up: the store's words are not read
        return []
    if not isinstance(tool, ContextSearchTool) or not isinstance(tool.store, PageGraphStore):
        return list(words)
    corpus = tool.corpus_words.words_of(tool.store)
    return [word for word in words if corpus.has(word)]


def _planned(
    deps: Dependencies,
    state: GraphState,
    tool: DeepSearchCoordinator,
    missing: tuple[str, ...],
    rewrites: Mapping[str, Sequence[str]],
    before: list[LedgerEntry],
) -> dict[str, Any]:
    """The update that plans the deep search of ``missing`` (D3); ``_planned``: for the event."""
    nodes, refused = plan_deep_search(deps, state, tool, missing, rewrites)
    planned = {no: node.task.task_prompt for no, node in nodes.items() if no != ROOT_TASK_NO}
    forced = tuple(dict.fromkeys(t for no in planned for t in nodes[no].task.required_tool_names))
    why, kind = f"{len(planned)} subtask(s) by {tool.name}", LedgerKind.DEEP_FALLBACK
    plan = entry(ROOT_TASK_NO, tool.name, kind, "planned", why, details=planned, tools=forced)
    return {
        "tasks": nodes,
        "deep_fallback_owner": tool.name,
        "ledger": [*before, plan, *refused],
        "_planned": planned,
    }


def _gate(verdict: str, reason: str, **fields: Any) -> LedgerEntry:
    return entry(ROOT_TASK_NO, None, LedgerKind.GATEKEEPER, verdict, reason, **fields)


FOUND_NEW = "found new"
NOTHING_NEW = "nothing new"
SNIPPET = 160
"""Characters of a find the ledger keeps."""


def _found(entry: PromptAndContext, tool: str) -> list[UniqueTextDocument]:
    """An entry's documents, or its text as one passage when it has none."""
    if entry.documents or not entry.context.strip():
        return list(entry.documents)
    return [UniqueTextDocument(document_id=tool, text=entry.context.strip())]


def _label(doc: UniqueTextDocument) -> str:
    name = doc.document_name or doc.document_id
    return name if doc.page is None else f"{name} p. {doc.page}"


def _searched(tasks: Mapping[str, TaskNode], numbers: Sequence[str]) -> tuple[str, ...]:
    """The search tools of a piece's subtasks that were not skipped (K3)."""
    ran = (tasks[no] for no in numbers if tasks[no].status is not TaskStatus.SKIPPED)
    return tuple(dict.fromkeys(t for node in ran for t in node.task.required_tool_names))


def found_new_entries(state: GraphState, owner: str, task_no: str) -> list[LedgerEntry]:
    """D8, L1: per missing piece, what its deep searches found that the first retrieval had not."""
    if owner != state.get("deep_fallback_owner") or task_no != ROOT_TASK_NO:
        return []
    tasks, buffer = state["tasks"], state["context_buffer"]
    planned = [
        no for no in tasks[ROOT_TASK_NO].children if tasks[no].task.owner_coordinator_name == owner
    ]
    first = {k: v for k, v in buffer.items() if k.rpartition(":")[0] not in planned}
    known = Known.of_prior(first)
    pieces: dict[str, list[str]] = {}
    for no in planned:
        pieces.setdefault(tasks[no].task.task_prompt, []).append(no)
    entries: list[LedgerEntry] = []
    for piece, numbers in pieces.items():
        keys = [k for k in buffer if k.rpartition(":")[0] in numbers]
        found = [d for k in keys for e in buffer[k] for d in _found(e, k.rpartition(":")[2])]
        new = known.new(found)
        pages = list(dict.fromkeys(_label(d) for d in new))
        reason = f"{piece}: {len(pages)} new page(s) the first retrieval had not"
        reason = f"{reason}: {', '.join(pages)}" if pages else reason
        verdict = FOUND_NEW if new else NOTHING_NEW
        details = {_label(d): d.text[:SNIPPET] for d in new}
        tools, kind = _searched(tasks, numbers), LedgerKind.DEEP_FALLBACK
        entries.append(
            entry(numbers[0], owner, kind, verdict, reason, details=details, tools=tools)
        )
    return entries


def _entry(verdict: str, reason: str) -> LedgerEntry:
    return entry(ROOT_TASK_NO, None, LedgerKind.DEEP_FALLBACK, verdict, reason)
