"""What a chat model is sent: the dialogue, the context passages, the tool list (A1, T5)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, get_buffer_string

from toolweave.llm.port import AnswerPart, ClarificationExchange, RoutingVerdict
from toolweave.llm.prompts import GUARANTEED_PASSAGES
from toolweave.llm.replies import BEST_FIT, tools_block
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.registry import AnyTool

_NOT_OFFERED = "no routing question: runs only when forced"
_NO_REPLY = "no valid routing reply"
_SAID_NO = "the model's answer: null (no)"
_CUT = "the reply was cut at the token limit before this verdict (no)"


def format_history(history: Sequence[BaseMessage], window: int) -> str:
    """The last ``window`` user/assistant turns as ``User: …`` / ``Assistant: …`` lines."""
    return get_buffer_string(dialogue(history, window), human_prefix="User", ai_prefix="Assistant")


def dialogue(history: Sequence[BaseMessage], window: int) -> list[BaseMessage]:
    """Plain-text copies of the last ``window`` human/AI messages (tool calls dropped)."""
    turns = [m for m in history if isinstance(m, HumanMessage | AIMessage) and m.text.strip()]
    kept = turns[-window:] if window > 0 else []
    return [
        HumanMessage(content=m.text) if isinstance(m, HumanMessage) else AIMessage(content=m.text)
        for m in kept
    ]


def passage_source(doc: UniqueTextDocument) -> str:
    """How a context passage names its document: ``name, p. 3``; ``name`` for one page (R6)."""
    source = doc.document_name or doc.document_id
    return source if doc.page is None or doc.page_count == 1 else f"{source}, p. {doc.page}"


def passage_label(number: int, doc: UniqueTextDocument) -> str:
    """What a context passage's line begins with: ``[n] name, p. 3: ``."""
    return f"[{number}] {passage_source(doc)}: "


def format_context(documents: Sequence[UniqueTextDocument], *, start: int = 1) -> str:
    """Numbered context passages, ``[n] text``, under a ``name, p. 3:`` line per run of a source.

    The source is named once for consecutive passages of one page, not on every line: the
    same labels, a tenth of an answer call's characters fewer (A10, PF1). ``start``: the
    first passage's number (after the guaranteed texts: :func:`cited_context`).
    """
    lines: list[str] = []
    last: str | None = None
    for n, doc in enumerate(documents, start=start):
        source = passage_source(doc)
        if source != last:
            lines.append(f"{source}:")
            last = source
        lines.append(f"[{n}] {doc.text}")
    return "\n".join(lines)


def cited_context(guaranteed: Sequence[str], documents: Sequence[UniqueTextDocument]) -> str:
    """The context of a citing answer: the guaranteed texts first, numbered like passages.

    A fact only a tool's own result gives (the person's leave balance beside the policy's
    yearly days) is then a passage the model can cite, and a sentence resting on it is
    checked and streamed like any other (R5, R9): against the guaranteed texts, its source.
    """
    lines = [f"[{n}] {text}" for n, text in enumerate(guaranteed, start=1)]
    head = [GUARANTEED_PASSAGES, *lines] if lines else []
    return "\n".join([*head, format_context(documents, start=len(lines) + 1)]).strip()


def part_lines(
    parts: Sequence[AnswerPart], documents: Sequence[UniqueTextDocument], *, start: int = 1
) -> list[str]:
    """Each part of a split question with where its facts are (S6), numbered as the context."""
    number = {doc.key: n for n, doc in enumerate(documents, start=start)}
    lines: list[str] = []
    for part in parts:
        where = [f"[{number[d.key]}]" for d in part.documents if d.key in number]
        said = [t.strip() for t in part.guaranteed if t.strip()]
        notes = [f"passages {', '.join(where)}"] if where else []
        notes += [f"guaranteed context: {' '.join(said)}"] if said else []
        lines.append(f"{part.prompt.strip()} ({'; '.join(notes) or 'no passage of its own'})")
    return lines


def format_exchanges(exchanges: Sequence[ClarificationExchange]) -> str:
    """The clarification questions asked and the replies, one pair per line (Q8)."""
    return "\n".join(f"- Asked: {e.question.strip()} Reply: {e.reply.strip()}" for e in exchanges)


@functools.lru_cache(maxsize=256)
def cached_tools_block(
    tools: tuple[AnyTool, ...], *, with_instruction: bool | frozenset[str]
) -> str:
    """:func:`tools_block`, built once per candidate set (as its routing schema is)."""
    return tools_block(tools, with_instruction=with_instruction)


def verdicts(
    tools: Sequence[AnyTool], offered: Sequence[AnyTool], reply: Any
) -> list[tuple[Any, RoutingVerdict]]:
    """Each tool's (reply entry or ``None``, verdict), in the order of ``tools`` (T5); one pass."""
    position = {id(tool): i for i, tool in enumerate(offered)}
    pairs: list[tuple[Any, RoutingVerdict]] = []
    for tool in tools:
        at = position.get(id(tool))
        if at is None:
            pairs.append((None, RoutingVerdict(tool=tool.name, run=False, reason=_NOT_OFFERED)))
        elif reply is None:
            pairs.append((None, RoutingVerdict(tool=tool.name, run=False, reason=_NO_REPLY)))
        else:
            entry = getattr(reply, f"tool_{at}")
            best = getattr(reply, BEST_FIT, None) == tool.name
            if entry is None:  # null: no, and no reason written (T5); or cut before it
                said = _CUT if getattr(reply, "cut", False) else _SAID_NO
                verdict = RoutingVerdict(tool.name, False, said, best)
            else:
                verdict = RoutingVerdict(tool.name, bool(entry.run), str(entry.reason), best)
            pairs.append((entry, verdict))
    return pairs
