"""A domain: the orchestrator configuration the seeds call ``AbstractOrchestratorTool``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.embeddings import Embeddings

from toolweave.tools.progress import ProgressMessages
from toolweave.tools.registry import AnyTool
from toolweave.tools.texts import Texts, check_texts

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the user's question precisely from the context. "
    "If the context does not hold the answer, say so."
)

DeepFallbackFactory = Callable[[str | None], AnyTool | None]


@dataclass(frozen=True)
class WithheldKind:
    """A kind of question the domain never answers from generation alone (A7).

    When ``applies`` holds and no tool answered (R3, R4), ``texts`` (by language) is the answer.
    """

    name: str
    """The kind, for the ledger (``"medication"``)."""
    applies: Callable[[str], bool]
    """Whether the (standalone) question is of this kind."""
    texts: Mapping[str, str]
    """What to answer instead, by ISO 639-1 language code."""


@dataclass(frozen=True)
class Domain:
    """What a domain adds to its tools: prompts, the default retrieval tool, exclusions."""

    name: str
    """The domain's id, matched against ``ChatbotTool.domain`` (T2)."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    """Base system prompt of the final answer; activated tools' supplements follow (T8)."""
    default_retrieval_tool: str | None = None
    """The RAG retrieval tool that runs beside routed tools, never beside forced ones (A5, F2)."""
    excluded_tools: frozenset[str] = field(default_factory=frozenset)
    """Tools never offered in this domain (A2)."""
    default_language: str = "en"
    """Language assumed when normalization cannot tell (T10)."""
    description: str = ""
    """One line for people (``toolweave tools``, Studio)."""
    ask_for_missing_inputs: bool = False
    """Tools of this domain ask the user for an unfilled required input (T13, Q1)."""
    deep_fallback: DeepFallbackFactory | None = None
    """Returns the deep-search coordinator for a prompt type, or ``None`` (D2)."""
    always_offered: frozenset[str] = field(default_factory=frozenset)
    """Tools the pre-filter always offers, whatever their rank (T12); gates still apply."""
    routing_embeddings: Embeddings | Literal["auto"] | None = "auto"
    """Embeddings the pre-filter fuses with its keywords (T12); ``"auto"``: the bundled model."""
    progress_messages: ProgressMessages = field(default_factory=dict)
    """Phrases for people of the tools' progress events (P4); a tool's own win."""

    routing_threshold: float | None = None
    """The least P(yes) a routed tool needs to run, from log-probabilities (T5); ``None``:
    yes/no only. ``toolweave eval --calibrate-routing`` picks one."""

    withheld: Sequence[WithheldKind] = ()
    """Kinds of question never answered by the model alone (A7): the declared text instead."""

    texts: Texts = field(default_factory=dict)
    """The library's own sentences for people in more languages, or worded the domain's way
    (P4, T10): key of :data:`toolweave.LIBRARY_TEXTS` → language → text. A language
    neither has falls back to English; an unknown key or placeholder raises
    :class:`~toolweave.ConfigurationError` here."""

    def __post_init__(self) -> None:
        """Check :attr:`texts` now, not when a run first says one of them."""
        check_texts(self.texts, owner=f"Domain {self.name!r}")

    def withheld_answer(self, question: str, lang: str) -> tuple[str, str] | None:
        """``(kind, text)`` of the first :attr:`withheld` kind ``question`` is of, or ``None``."""
        for kind in self.withheld:
            if kind.applies(question):
                return kind.name, kind.texts.get(lang) or kind.texts.get("en", "")
        return None

    def deep_fallback_tool(self, prompt_type: str | None) -> AnyTool | None:
        """D2: the deep-search coordinator for ``prompt_type``, or ``None`` for no deep search."""
        return None if self.deep_fallback is None else self.deep_fallback(prompt_type)
