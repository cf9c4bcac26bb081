"""The ``answer`` node: the terminal answer, or one streamed LLM answer (A7, T8, R3-R5, R9)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.graph.context import Dependencies, RunContext, assistant_for
from toolweave.graph.exchanges import exchanges_of
from toolweave.graph.idempotency import unfinishable_after_effect
from toolweave.graph.nodes import Steps, entry, make_node
from toolweave.graph.tool_call import kept_effect_text
from toolweave.llm import answer_rules as rules
from toolweave.llm import citations, prompts
from toolweave.llm.cited_stream import CHECKED, SHOWN
from toolweave.llm.errors import LlmUnavailableError, RunDeadlineError
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.passthrough import astream_message, split_for_streaming, stream_message
from toolweave.llm.port import (
    UNSTREAMED,
    AnswerPart,
    AnswerRequest,
    ClarificationExchange,
    LlmAssistant,
)
from toolweave.state.documents import (
    MESSAGE_DOMAIN_KEY,
    AnswerSentence,
    Source,
    UniqueTextDocument,
    message_metadata,
    sources_of,
)
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO, TaskNode, TaskStatus, execution_text, tool_of_key
from toolweave.state.tree import nested
from toolweave.tools.effects import call, perform
from toolweave.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)


def answer_system_prompt(base: str, activated: Sequence[str], registry: ToolRegistry) -> str:
    """The domain prompt plus the supplements of the tools that ran, once each (T8)."""
    names = dict.fromkeys(tool_of_key(key) for key in activated)
    tools = [tool for name in names if (tool := registry.get(name)) is not None]
    supplements = [tool.system_prompt_supplement for tool in tools if tool.system_prompt_supplement]
    return "\n\n".join([base, *supplements])


def user_parts(state: GraphState, registry: ToolRegistry) -> list[TaskNode]:
    """The root's unskipped subtasks a domain coordinator made: the question's parts (S6, D3)."""
    tasks = state["tasks"]
    root = tasks.get(ROOT_TASK_NO)
    if root is None:
        return []
    deep = state.get("deep_fallback_owner")
    parts: list[TaskNode] = []
    for task_no in root.children:
        node = tasks.get(task_no)
        owner = None if node is None else node.task.owner_coordinator_name
        if node is None or owner is None or owner == deep or node.status is TaskStatus.SKIPPED:
            continue
        if not isinstance(registry.get(owner), DeepSearchCoordinator):
            parts.append(node)
    return parts


def answer_part(state: GraphState, node: TaskNode) -> AnswerPart:
    """One part of the question: the subtask's prompt and its (and its subtasks') results (S6)."""
    below = [n for no, n in state["tasks"].items() if f"{no}.".startswith(f"{node.task_no}.")]
    numbers = {n.task_no for n in below}
    texts = {execution_text(n.task) for n in below}
    buffer = state.get("context_buffer") or {}
    returned = [
        doc
        for key, entries in buffer.items()
        if key.rpartition(":")[0] in numbers
        for entry in entries
        for doc in entry.documents
    ]
    return AnswerPart(
        prompt=node.task.task_prompt,
        documents=_held(state["documents"], returned),
        guaranteed=[g.context for g in state["guaranteed"] if g.prompt in texts],
    )


def _held(
    context: Sequence[UniqueTextDocument], returned: Sequence[UniqueTextDocument]
) -> list[UniqueTextDocument]:
    """The context documents that are ``returned`` ones (R6 identity; a page for a page)."""
    keys = {doc.key for doc in returned}
    pages = {(doc.document_id, doc.page) for doc in returned if doc.sentence_number is None}
    return [doc for doc in context if doc.key in keys or (doc.document_id, doc.page) in pages]


def clarification_turn(
    messages: Sequence[AnyMessage], rounds: int
) -> tuple[list[AnyMessage], list[ClarificationExchange]]:
    """The messages before this request's question, and its clarification exchanges (Q8)."""
    end, exchanges = exchanges_of(messages, rounds)
    return list(messages[:end]), exchanges


TERMINAL_REASON = "a tool's finished answer; no final LLM call (R3/R4)"
ENDED_ON_QUESTION_REASON = (
    "the run ended on the tool's open question (dropped by the person, or the question "
    "limit reached, Q2); no final LLM call"
)

NOT_COVERED_REASON = (
    "the context cannot speak to what the question asks about ({subject}), and no "
    "guaranteed context answers it (R9); no LLM call"
)

READ_REASON = "the offline reading's answer from the same context replaces it"
"""How the rejected answers below end (R9)."""
ECHO_REASON = f"; the answer copied the prompt's context block: {READ_REASON} (R9)"
LOOP_REASON = f"; the answer repeated itself and its stream was stopped: {READ_REASON} (X3, R9)"
QUOTED_REASON = "; the answer was citation markers only: it quotes the cited passages (R9)"
PLACEHOLDER_REASON = "; a line of the answer was a code placeholder alone (null): dropped (R9)"
REASKED_REASON = (
    "; the answer asked again the clarification question the person had just answered: "
    f"{READ_REASON} (Q8, R9)"
)
EMPTY_REASON = f"; the answer said nothing: {READ_REASON} (R9)"
QUESTION_ONLY_REASON = f"; the answer only asked, or said back the question: {READ_REASON} (R9)"
BARE_YES_REASON = (
    "; the answer was a yes or a no and the question said back: the offline reading's "
    "answer from the same context, which says what the sources say, replaces it (R9)"
)
NO_FIGURE_REASON = (
    "; the question asks when or how much and the answer gave no figure, which a passage "
    f"gives: {READ_REASON} (R9)"
)

RETRIED_REASON = (
    "; no sentence was supported by the passages it cited: asked once more, naming them (R9)"
)

READ_INSTEAD_REASON = (
    "; no sentence was supported by the passages it cited, and the offline reading quotes "
    "a passage for the question: its answer, not a second call (R9, A10)"
)
READ_AFTER_EFFECT_REASON = (
    "; the answering model failed ({error}) after a tool acted, in a run no checkpointer "
    "keeps: the offline reading's answer from the same context, since a retry of the request "
    "would act again (S5, Q6)"
)

DROPPED_REASON = "; dropped, not supported by the passages it cited (R9): {dropped}"

UNSUPPORTED_REASON = (
    "; no sentence was supported by the passages it cited (R9): {failing}; "
    "the answer says the sources do not cover the question"
)


def _no_answer(text: str, request: AnswerRequest) -> str | None:
    """Why a generated ``text`` is no answer (the ledger reason's tail), or ``None``."""
    if rules.echoes_prompt(text, request):
        return ECHO_REASON
    if rules.repeats_itself(text):
        return LOOP_REASON
    if not text.strip():
        return EMPTY_REASON
    if rules.repeats_clarification(text, request) is not None:
        return REASKED_REASON
    if rules.says_only_the_question(text, request.question):
        return QUESTION_ONLY_REASON
    if rules.misses_the_figure(text, request):
        return NO_FIGURE_REASON
    if rules.says_yes_and_no_more(text, request):
        return BARE_YES_REASON
    return None


def _unsourced_answer(text: str, tree: Any, *, verdict: str, reason: str) -> dict[str, Any]:
    """The update of an answer no assistant wrote and no document backs: no sources."""
    return _answer_update(text, tree, AIMessage(content=text), _entry(verdict, reason), ())


def _answer_update(
    text: str,
    tree: Any,
    message: AIMessage,
    entry: LedgerEntry,
    documents: Sequence[UniqueTextDocument],
    sources: Sequence[Source] = (),
    sentences: Sequence[AnswerSentence] = (),
) -> dict[str, Any]:
    """The state update of an answer; its message carries its ``sources`` as data (R9)."""
    meta = message_metadata(sources, sentences, documents)
    shown = message.model_copy(update={"response_metadata": {**message.response_metadata, **meta}})
    return {
        "answer": text,
        "sources": list(sources),
        "answer_sentences": list(sentences),
        "task": tree,
        "messages": [shown],
        "ledger": [entry],
    }


def _entry(verdict: str, reason: str, tool: str | None = None, **fields: Any) -> LedgerEntry:
    """The answer's ledger entry (L1)."""
    return entry(ROOT_TASK_NO, tool, LedgerKind.ANSWER, verdict, reason, **fields)


@dataclass(frozen=True)
class _Reply:
    """One generated answer after the rules of what an answer may say, and its check."""

    message: AIMessage
    checked: list[citations.Checked]
    reason: str
    streamed: bool
    """Whether listeners saw it; else the node streams what it keeps (constrained, R9, P2)."""

    @property
    def failing(self) -> tuple[str, ...]:
        """The unsupported sentences that state something."""
        return tuple(c.claim.text for c in self.checked if not c.supported)

    @property
    def kept(self) -> list[citations.Checked]:
        """The supported sentences."""
        return [c for c in self.checked if c.supported]

    @property
    def says_something(self) -> bool:
        """Whether a supported sentence states something (more than a connective)."""
        return any(citations.says_something(c.claim.text) for c in self.kept)


def _reply(
    generated: AIMessage, request: AnswerRequest, assistant: LlmAssistant, reason: str
) -> _Reply:
    """``generated`` after the answer rules (R9, X3, Q8), each sentence checked (R9)."""
    streamed = not generated.response_metadata.get(UNSTREAMED)
    reader: LlmAssistant = assistant
    meta = generated.response_metadata  # what a constrained stream showed (P2)
    if (kept := rules.without_placeholders(generated.text)) != generated.text:  # "null"
        generated = AIMessage(content=kept, id=generated.id, response_metadata=meta)
        reason += PLACEHOLDER_REASON
    if rules.cites_only(generated.text):  # R9: "[3]" is no answer; what it cites is
        quoted = rules.quoted_citations(generated.text, request)
        generated = AIMessage(content=quoted, id=generated.id, response_metadata=meta)
        reason += QUOTED_REASON
    elif why := _no_answer(generated.text, request):
        reader = OfflineAssistant()  # nor is the prompt written back, nor a loop (X3)
        generated = AIMessage(content=reader.answer(request).text, id=generated.id)
        reason, streamed = reason + why, True
    claims = citations.claims_of(generated.text, len(request.documents))
    numbered = list(enumerate(request.documents, start=1))
    first = {doc.key: number for number, doc in reversed(numbered)}  # R6 keys are unique
    used = reader.answer_sources(request, generated.text)
    implicit = tuple(dict.fromkeys(first[d.key] for d in used if d.key in first))
    lenient = streamed and not any(c.cited for c in claims)  # an assistant that never cites
    documents, guaranteed = request.documents, request.guaranteed
    foreign = rules.uncovered_words(request)  # the question's subject no passage names
    known = meta.get(CHECKED) or ()  # a streamed answer's sentences were checked as they came
    checked = citations.verify(
        claims, documents, guaranteed, implicit, lenient=lenient, uncovered=foreign, known=known
    )
    return _Reply(generated, rules.without_strays(checked, request), reason, streamed)


def _ledger_details(reply: _Reply, request: AnswerRequest) -> dict[str, str]:
    """The answer's citation figures for the ledger (R9): sentences, supported, P and R."""
    claims = [replace(c.claim, cited=c.sources) for c in reply.checked]
    precision, recall = citations.precision_recall(claims, request.documents)
    return {
        "sentences": str(len(reply.checked)),
        "supported": str(len(reply.kept)),
        "recited": str(sum(c.recited for c in reply.checked)),
        "citation_precision": "-" if precision is None else f"{precision:.2f}",
        "citation_recall": "-" if recall is None else f"{recall:.2f}",
    }


def _sentences(
    reply: _Reply, request: AnswerRequest, sources: Sequence[Source]
) -> list[AnswerSentence]:
    """Each checked sentence with its positions in ``sources`` (R9)."""
    position = {source.document_id: n for n, source in enumerate(sources, start=1)}
    out: list[AnswerSentence] = []
    for checked in reply.checked:
        cited = [request.documents[i - 1] for i in checked.sources]
        ids = tuple(dict.fromkeys(d.document_id for d in cited))
        kept = [i for i in ids if i in position] if checked.supported else []
        out.append(
            AnswerSentence(
                text=checked.claim.text,
                sources=tuple(position[i] for i in kept),
                documents=ids,
                supported=checked.supported,
                quotes=citations.supporting_quotes(checked.claim.text, cited, kept),
            )
        )
    return out


def _shown(reply: _Reply, text: str, chunks: Sequence[str]) -> Steps[AIMessage]:
    """The answer's message: streamed now, sentence by sentence, what nobody saw yet (P2)."""
    if reply.streamed:
        return AIMessage(content=text, id=reply.message.id)
    shown = str(reply.message.response_metadata.get(SHOWN) or "")
    if shown and text == shown:
        return AIMessage(content=text, id=reply.message.id)
    if shown and text.startswith(shown):
        chunks = split_for_streaming(text[len(shown) :])
    rest = yield from perform(call(stream_message, astream_message, list(chunks)))
    return AIMessage(content=text, id=rest.id)


def _no_information(request: AnswerRequest, closest: Sequence[Source]) -> str:
    """The "no information" answer, naming the pages the dropped sentences cited (R9)."""
    lang, texts = request.user_lang, request.texts
    text = prompts.no_information_answer(lang, texts)
    pages = [f"{s.name} ({s.url})" if s.url else s.name for s in closest]
    return f"{text}\n{prompts.closest_pages(lang, pages, texts)}" if pages else text


def _first_answer(
    ask: Callable[[], LlmAssistant], request: AnswerRequest, *, read_on_failure: bool
) -> Steps[tuple[AIMessage, LlmAssistant, str]]:
    """The model's answer, its reader and a ledger reason's tail (empty when the model answered).

    ``read_on_failure``: a tool acted in a run nothing keeps (S5): the offline reading answers.
    """
    try:
        assistant = ask()
        return (yield from assistant.answer_steps(request)), assistant, ""
    except (LlmUnavailableError, RunDeadlineError) as exc:  # the reading needs no model call
        if not read_on_failure:
            raise  # X2: a thread keeps the run; sent again, it is finished, no tool acting again
        logger.error("the answering model failed after a tool acted (S5, Q6)", exc_info=True)
        reader = OfflineAssistant()
        why = READ_AFTER_EFFECT_REASON.format(error=type(exc).__name__)
        return AIMessage(content=reader.answer(request).text), reader, why


def _generated_answer(
    ask: Callable[[], LlmAssistant],
    request: AnswerRequest,
    always: Sequence[UniqueTextDocument],
    tree: Any,
    *,
    read_on_failure: bool = False,
) -> Steps[dict[str, Any]]:
    """Generate, check each sentence, ask once more if none holds, keep the supported (R9)."""
    reason = (
        f"from {len(request.documents)} documents, {len(request.guaranteed)} guaranteed contexts"
    )
    generated, assistant, failed = yield from _first_answer(
        ask, request, read_on_failure=read_on_failure
    )
    reply, calls = _reply(generated, request, assistant, reason + failed), 1
    if not reply.says_something and not reply.streamed and _tried(reply) and not failed:
        if rules.reading_quotes(request) is not None:  # A10: a supported answer with no call
            reader = OfflineAssistant()
            read = AIMessage(content=reader.answer(request).text, id=generated.id)
            reply = _reply(read, request, reader, reply.reason + READ_INSTEAD_REASON)
        else:
            again = yield from assistant.answer_steps(replace(request, failing=reply.failing))
            reply, calls = _reply(again, request, assistant, reply.reason + RETRIED_REASON), 2
    details = _ledger_details(reply, request)
    if not reply.says_something:  # R9: nothing holds; "no information" rests on no source
        closest = sources_of([request.documents[i - 1] for c in reply.checked for i in c.sources])
        details["closest"] = "; ".join(s.name for s in closest)
        text = _no_information(request, closest)
        why = reply.reason + UNSUPPORTED_REASON.format(failing=" | ".join(reply.failing))
        verdict, sources, sentences = "unsupported", [], []
        chunks = [text]
    else:
        kept = [c.claim for c in reply.kept]
        text = citations.joined(kept)
        cited = [request.documents[i - 1] for c in reply.kept for i in c.sources]
        sources = sources_of([*always, *cited])
        sentences = _sentences(reply, request, sources)
        dropped = [c.claim.text for c in reply.checked if not c.supported]
        why = reply.reason + (DROPPED_REASON.format(dropped=" | ".join(dropped)) if dropped else "")
        verdict, chunks = "generated", split_for_streaming(text)
    message = yield from _shown(reply, text, chunks)
    said = _entry(verdict, why, details=details)
    update = _answer_update(text, tree, message, said, request.documents, sources, sentences)
    return {**update, "llm_calls": calls}


def _tried(reply: _Reply) -> bool:
    """Whether an unsupported sentence stated a fact: cited a passage or held a token (R9)."""
    return any(
        c.claim.cited or citations.checkable(c.claim.text) for c in reply.checked if not c.supported
    )


def standing_effects(state: GraphState, deps: Dependencies) -> list[str]:
    """S5, Q6: earlier effects of the amended request that this run did not call: they stand."""
    message = state["message"]
    ran = {tool_of_key(key) for key in state["activated"]}
    tools = ((call, deps.registry.get(call.tool)) for call in message.amends)
    return [
        kept_effect_text(tool, call, message.user_lang, deps.domain.texts)
        for call, tool in tools
        if tool is not None and call.tool not in ran
    ]


def with_finished_part(state: GraphState, deps: Dependencies) -> GraphState | None:
    """S3, S6, R5: the state to answer from when a part's finished answer ended the walk.

    A finished answer (R3, not streamed) of one part of a split question, after another
    part gave results (documents or guaranteed context), ends the walk (S3) but not the
    other parts: its text becomes its part's guaranteed context, so the answer addresses
    every part (S6) and what the other parts guaranteed reaches it (R5). ``None``: the
    finished answer is the answer.
    """
    key = state.get("terminal") or ""
    own = (state.get("context_buffer") or {}).get(key) or []
    if not own or state.get("answer_id") or not state.get("answer"):
        return None  # nothing finished, or a streamed answer (R4): already shown
    if key not in (state.get("activated") or ()):  # the run ended on a question, not a tool
        return None
    parts = user_parts(state, deps.registry)
    task_no = key.rpartition(":")[0]
    mine = [p for p in parts if f"{task_no}.".startswith(f"{p.task_no}.")]
    others = [answer_part(state, p) for p in parts if p not in mine]
    if not mine or not any(part.documents or part.guaranteed for part in others):
        return None
    finished = own[-1].model_copy(update={"context": state.get("answer") or own[-1].context})
    guaranteed = [*state["guaranteed"], finished]
    return cast(GraphState, {**state, "guaranteed": guaranteed, "terminal": None})


def answer_request(state: GraphState, deps: Dependencies) -> AnswerRequest:
    """What the answer is made from: context, parts, clarifications, history (A7, T8, S6, Q8)."""
    rounds = state.get("clarification_rounds") or 0
    earlier, exchanges = clarification_turn(state["messages"], rounds)
    window = deps.limits.history_messages
    return AnswerRequest(
        question=state["message"].question,
        user_lang=state["message"].user_lang,
        system_prompt=answer_system_prompt(
            deps.domain.system_prompt, state["activated"], deps.registry
        ),
        documents=state["documents"],
        guaranteed=[  # R5: one per result, in walk order, never deduplicated by text
            *(saved.context for saved in state["guaranteed"]),
            *standing_effects(state, deps),
        ],
        history=earlier[-window:] if window else [],
        parts=[answer_part(state, node) for node in user_parts(state, deps.registry)],
        clarifications=exchanges,
        texts=deps.domain.texts,
        domain_words=deps.domain_words,
    )


def make_answer(deps: Dependencies) -> Runnable[Any, Any]:
    """Build the ``answer`` node over ``deps``."""

    def answer(state: GraphState, runtime: Runtime[RunContext]) -> Steps[dict[str, Any]]:
        """Finish the run: a terminal result ends it (R3, R4), else the model answers (A7)."""
        tasks = state["tasks"]
        tree = nested(tasks, ROOT_TASK_NO) if ROOT_TASK_NO in tasks else None
        finished_part = with_finished_part(state, deps)
        if finished_part is not None:  # S3, S6, R5: the other parts are answered too
            state = finished_part
        elif state.get("terminal"):
            text = state.get("answer") or ""
            message = AIMessage(content=text, id=state.get("answer_id"))
            by_tool = state["terminal"] in (state.get("activated") or ())
            why = TERMINAL_REASON if by_tool else ENDED_ON_QUESTION_REASON
            said = _entry("terminal", why, tool=(state["terminal"] or "").rpartition(":")[2])
            own = (state.get("context_buffer") or {}).get(state["terminal"] or "") or []
            sources = sources_of(doc for saved in own for doc in saved.documents)
            return _answer_update(text, tree, message, said, state["documents"], sources)
        withheld = deps.domain.withheld_answer(  # A7: never a generated answer to this kind
            state["message"].question, state["message"].user_lang
        )
        if withheld is not None:
            kind, text = withheld
            return _unsourced_answer(text, tree, verdict="withheld", reason=kind)
        request = answer_request(state, deps)
        subject = rules.uncovered_subject(request)
        if subject is not None:
            text = prompts.no_information_answer(request.user_lang, request.texts)
            reason = NOT_COVERED_REASON.format(subject=subject)
            return _unsourced_answer(text, tree, verdict="not_covered", reason=reason)
        ask = partial(assistant_for, deps, runtime)
        always = [doc for saved in state["guaranteed"] for doc in saved.documents]
        read = unfinishable_after_effect(state)
        return (yield from _generated_answer(ask, request, always, tree, read_on_failure=read))

    def answer_of_the_domain(
        state: GraphState, runtime: Runtime[RunContext]
    ) -> Steps[dict[str, Any]]:
        """:func:`answer`, its message naming the domain that answered (S5, nested runs)."""
        update = yield from answer(state, runtime)
        return with_domain(update, deps.domain.name)

    return make_node("answer", answer_of_the_domain)


def with_domain(update: dict[str, Any], domain: str) -> dict[str, Any]:
    """``update`` whose answer message names ``domain`` in its metadata (R9's keys beside it)."""

    def stamp(message: Any) -> Any:
        if not isinstance(message, AIMessage):
            return message
        meta = {**message.response_metadata, MESSAGE_DOMAIN_KEY: domain}
        return message.model_copy(update={"response_metadata": meta})

    stamped = [stamp(message) for message in update.get("messages") or ()]
    return {**update, "messages": stamped} if stamped else update
