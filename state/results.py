"""What a tool returns (R1-R5) and clarification requests (Q1)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from toolweave.state.documents import UniqueTextDocument, complete_identities
from toolweave.state.errors import InvalidToolResultError
from toolweave.state.names import is_tool_name


class ResultMode(StrEnum):
    """The result modes of SPEC §3 plus the clarification request of Q1."""

    CONTEXT = "context"
    """R2: documents join the RAG context."""
    ANSWER = "answer"
    """R3: a finished answer; no final LLM call."""
    ANSWERED = "answered"
    """R4: the tool already streamed the answer itself."""
    GUARANTEED_CONTEXT = "guaranteed_context"
    """R5: context that always reaches the final answer."""
    CLARIFICATION = "clarification"
    """Q1: the tool needs the user to answer a question first."""


TERMINAL_MODES = frozenset({ResultMode.ANSWER, ResultMode.ANSWERED})

BAD_ARGUMENT = "ToolResult.{method}({signature}): {problem}"
SIGNATURES = {
    "as_context": "tool_name, documents",
    "as_answer": "tool_name, text, sources=()",
    "as_answered": "tool_name, sources=()",
    "as_guaranteed_context": "tool_name, content",
    "clarification": "tool_name, question, choices=()",
}
NOT_A_RESULT = (
    "tool {tool!r} returned {kind}, not a ToolResult or None: return "
    "ToolResult.as_answer(self.name, text) for a finished answer, "
    "ToolResult.as_context(self.name, documents) for context, or None when the question is "
    "not the tool's (R1-R5)"
)


def _bad(method: str, problem: str) -> InvalidToolResultError:
    return InvalidToolResultError(
        BAD_ARGUMENT.format(method=method, signature=SIGNATURES[method], problem=problem)
    )


def _check_name(method: str, tool_name: object) -> None:
    if not is_tool_name(tool_name):
        raise _bad(method, f"tool_name {tool_name!r} is not a tool name (pass self.name first)")


def _build(method: str, tool_name: str, mode: ResultMode, **fields: Any) -> ToolResult:
    """``method``'s result: its documents' identities completed (R11), or the tool's bug, named."""
    _check_name(method, tool_name)
    try:
        result = ToolResult(tool_name=tool_name, mode=mode, **fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        raise _bad(method, problems) from exc
    documents = result.documents
    if len(documents) > 1:
        completed = complete_identities(result.tool_name, documents)
        if completed is not documents:
            return result.model_copy(update={"documents": tuple(completed)})
    return result


def require_result(tool_name: str, value: object) -> ToolResult | None:
    """``value`` if it is a ``ToolResult`` or ``None``; else :class:`InvalidToolResultError`."""
    if value is None or isinstance(value, ToolResult):
        return value
    raise InvalidToolResultError(NOT_A_RESULT.format(tool=tool_name, kind=type(value).__name__))


class ToolResult(BaseModel):
    """The outcome of one tool execution (``None`` instead of a result means R1).

    Build it with the class methods: they give every document its identity (R11).
    """

    model_config = ConfigDict(frozen=True)

    tool_name: str
    mode: ResultMode
    documents: tuple[UniqueTextDocument, ...] = ()
    """Context documents (R2, R5), or a finished answer's own sources (R3, R4, R9)."""
    text: str | None = None
    """Answer text (ANSWER), guaranteed text (GUARANTEED_CONTEXT) or question (CLARIFICATION)."""
    choices: tuple[str, ...] = ()
    """Choices offered to the user with a clarification question."""

    @classmethod
    def as_context(cls, tool_name: str, documents: Sequence[UniqueTextDocument]) -> ToolResult:
        """R2: documents that join the RAG context, each with its own identity (R6, R11)."""
        _check_name("as_context", tool_name)
        if isinstance(documents, str | bytes) or not isinstance(documents, Sequence):
            raise _bad("as_context", "documents must be a list of UniqueTextDocument")
        return _build("as_context", tool_name, ResultMode.CONTEXT, documents=tuple(documents))

    @classmethod
    def as_answer(
        cls, tool_name: str, text: str, sources: Sequence[UniqueTextDocument] = ()
    ) -> ToolResult:
        """R3: a finished answer; the final LLM call is skipped.

        Args:
            tool_name: The tool's name (``self.name``).
            text: The answer.
            sources: The documents the answer comes from, listed as its sources (R9).
        """
        return _build(
            "as_answer", tool_name, ResultMode.ANSWER, text=text, documents=tuple(sources)
        )

    @classmethod
    def as_answered(cls, tool_name: str, sources: Sequence[UniqueTextDocument] = ()) -> ToolResult:
        """R4: the tool has streamed the answer itself; nothing more is generated.

        Args:
            tool_name: The tool's name (``self.name``).
            sources: The documents the streamed answer comes from (R9); none by default.
        """
        return _build("as_answered", tool_name, ResultMode.ANSWERED, documents=tuple(sources))

    @classmethod
    def as_guaranteed_context(
        cls, tool_name: str, content: str | Sequence[UniqueTextDocument]
    ) -> ToolResult:
        """R5: context that always reaches the final answer (text or documents)."""
        method = "as_guaranteed_context"
        _check_name(method, tool_name)
        mode = ResultMode.GUARANTEED_CONTEXT
        if isinstance(content, str):
            return _build(method, tool_name, mode, text=content)
        if not isinstance(content, Sequence):
            raise _bad(method, "content must be a text or a list of UniqueTextDocument")
        return _build(method, tool_name, mode, documents=tuple(content))

    @classmethod
    def clarification(
        cls, tool_name: str, question: str, choices: Sequence[str] = ()
    ) -> ToolResult:
        """Q1: ask the user a question before the tool can act (from a ``ClarifiableTool``)."""
        method = "clarification"
        _check_name(method, tool_name)
        if not isinstance(question, str) or not question.strip():
            raise _bad(method, f"question must be a non-empty text, not {question!r}")
        if isinstance(choices, str | bytes) or not isinstance(choices, Sequence):
            raise _bad(method, f"choices must be a list of texts, not {choices!r}")
        if not all(isinstance(choice, str) and choice.strip() for choice in choices):
            raise _bad(method, f"every choice must be a non-empty text: {list(choices)!r}")
        return _build(
            method, tool_name, ResultMode.CLARIFICATION, text=question, choices=tuple(choices)
        )

    @property
    def is_terminal(self) -> bool:
        """True for R3 and R4, which end the run (R8, S3)."""
        return self.mode in TERMINAL_MODES

    def context_text(self) -> str:
        """The text this result contributes to a context buffer entry."""
        if self.text is not None and self.mode is not ResultMode.CLARIFICATION:
            return self.text
        return "\n".join(doc.text for doc in self.documents)
