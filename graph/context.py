"""What the graph's nodes depend on: the assistant, the tools, the domain and the limits (T11)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from langgraph.runtime import Runtime

from toolweave.graph.calls_in_flight import CallsInFlight
from toolweave.llm import deadline
from toolweave.llm.domain_words import DomainWords
from toolweave.llm.port import LlmAssistant
from toolweave.state.errors import InvalidContextError
from toolweave.tools.domain import Domain
from toolweave.tools.language import OwnLanguage, own_language
from toolweave.tools.prefilter import CandidateIndex
from toolweave.tools.registry import ToolRegistry

STEPS_PER_TASK = 3
"""Graph steps a task costs besides its tools: coordinate, decide, route."""


@dataclass(frozen=True)
class Limits:
    """Bounds on every loop of a run (X3)."""

    max_depth: int = 4
    """Subtask levels below the root (S1)."""
    max_tasks: int = 64
    """Tasks in one tree, the root included (S1, X3)."""
    max_tools_per_task: int = 16
    """Tools activated on one task; the rest are logged and dropped."""
    max_routing_candidates: int = 20
    """Candidates the routing call sees at most; more are ranked and cut by the pre-filter,
    plus the domain's pinned tools (T12)."""
    max_message_chars: int = 8_000
    """Longest accepted user message (X1)."""
    history_messages: int = 6
    """Earlier messages that normalization sees (A1)."""
    max_clarification_rounds: int = 3
    """Clarification questions in a row before the run ends with a message (Q2)."""
    deep_fallback_llm_calls: int = 1
    """LLM calls deep fallback may spend per root task: gatekeeper and page reading (D7).

    By default the gatekeeper alone: the pieces it names are searched with its rewrites and
    the pages' own passages are returned unread. With the small local model a page read
    cost seconds and found no more than the passages on the development halves (see the
    benchmarks); raise it (e.g. to 6) for a model whose reading pays. An assistant whose
    calls cost nothing (``LlmAssistant.free_calls``, the offline model) is not capped.
    ``0``: no model call at all; the lexical gatekeeper of the offline model judges the
    context instead and its pieces are searched without page reads."""
    deep_fallback_pieces: int = 3
    """Missing pieces the deep search looks for, at most (each costs up to two subtasks)."""
    run_deadline_s: float | None = None
    """Seconds one run (one ``invoke``/``stream`` of the graph) may take, counted from its
    start (the run's scope holds the deadline, X6); past it the run stops with ``RunDeadlineError``
    before its next model call, and no retry waits past it (X5). ``None``: no deadline."""
    thread_wait_s: float = 120.0
    """Seconds a run waits for the same thread's earlier run to end, in this process or
    in another over the same PostgreSQL checkpointer (runs on one thread take turns, S5);
    past it the run is refused with ``ThreadBusyError`` before anything is stored.
    Bounds a wait on a run that hangs or a stream left open."""
    acting_call_lease_s: float = 30.0
    """Seconds since its last heartbeat that a call of a tool that acts, recorded in the
    run's store by another process and not ended, is taken to be still running there
    (S5, Q6): a re-run waits for it (``thread_wait_s``) rather than act again. The process
    making the call beats every third of it; a call whose heartbeat is older (its process
    gone: a crash) is made again under its key (at least once, one key)."""
    ai_input_attempts: int = 2
    """Extractions of an AI tool's input per step when it does not validate (W2)."""

    def __post_init__(self) -> None:
        counts = ("max_depth", "max_tasks", "max_tools_per_task", "max_message_chars")
        for name in (*counts, "max_routing_candidates"):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")
        if self.deep_fallback_llm_calls < 0:
            raise ValueError("Limits.deep_fallback_llm_calls must be 0 or more")
        if not self.thread_wait_s > 0:
            raise ValueError("Limits.thread_wait_s must be positive")
        if not self.acting_call_lease_s > 0:
            raise ValueError("Limits.acting_call_lease_s must be positive")
        if self.run_deadline_s is not None and not self.run_deadline_s > 0:
            raise ValueError("Limits.run_deadline_s must be positive (or None)")

    @property
    def recursion_limit(self) -> int:
        """The graph step budget derived from the tree limits (X3)."""
        per_task = STEPS_PER_TASK + self.max_tools_per_task
        return 8 + self.max_tasks * per_task + 2 * self.max_clarification_rounds


@dataclass(frozen=True)
class Dependencies:
    """Everything the nodes of one compiled graph share (never per-request data, T11)."""

    domain: Domain
    registry: ToolRegistry
    assistant: LlmAssistant
    limits: Limits = field(default_factory=Limits)
    calls_in_flight: CallsInFlight = field(default_factory=CallsInFlight, compare=False)
    """The calls of tools that act, finished when a run is cancelled mid-call (S5, Q6)."""

    @cached_property
    def candidate_index(self) -> CandidateIndex:
        """The pre-filter's index over the routable tools, built once per graph (T12)."""
        routable = [tool for tool in self.registry if tool.executable_instruction]
        return CandidateIndex(routable, self.domain.routing_embeddings)

    @cached_property
    def domain_words(self) -> DomainWords:
        """The domain's name and its default retrieval store's stop words (N1, T12)."""
        stopwords = store_stopwords(self.domain, self.registry)
        language = own_language(self.domain.default_language, stopwords)
        return DomainWords((self.domain.name,), stopwords=stopwords, language=language)

    @cached_property
    def own_language(self) -> OwnLanguage | None:
        """The domain's language when no kit knows it, with its stop words as evidence (T10)."""
        return self.domain_words.language

    @cached_property
    def domain_assistant(self) -> LlmAssistant:
        """The builder's assistant for this domain (:meth:`LlmAssistant.for_domain`), made once."""
        return self.assistant.for_domain(self.domain_words)


@dataclass
class RunContext:
    """Per-run options passed as ``graph.invoke(..., context=RunContext(...))``.

    Every field is optional; ``None`` keeps what the graph was built with.
    """

    assistant: LlmAssistant | None = None
    """Use another model for this run (e.g. a cheaper one, or a test double)."""
    user_data: Mapping[str, Any] | None = None
    """User data for the gates and tools that is never checkpointed (X4); wins over the
    input's ``user_data``, which is stored with the thread like all input."""
    secret_keys: frozenset[str] = frozenset()
    """``user_data`` keys whose values are secrets, besides those named like one
    (``*_token``, ``*_password``, ``api_key``…, see :mod:`toolweave.state.secrets`):
    redacted from the run's error messages, toolweave's log lines and progress events (X4)."""
    client_tools: Sequence[str] | None = None
    """Ids of the AI tools the client implements (W3); wins over the input's ``client_tools``."""


NOT_A_MAPPING = (
    "the run context's 'user_data' ({owner}) must be a mapping of the person's data "
    "(e.g. {{'user_id': '...'}}) or None, not {kind}"
)


def as_run_context(context: Any) -> RunContext | None:
    """A run context as toolweave reads it (T4, X4): a :class:`RunContext` as it is.

    Any other context (a parent graph's or an agent's own ``context_schema``, or a dict)
    gives its ``user_data`` (an attribute or a key) and nothing else: its other fields are
    its owner's, whatever their names.

    Raises:
        InvalidContextError: its ``user_data`` is not a mapping.
    """
    if context is None or isinstance(context, RunContext):
        return context
    if isinstance(context, Mapping):
        user_data = context.get("user_data")
    else:
        user_data = getattr(context, "user_data", None)
    if user_data is None:
        return None
    if not isinstance(user_data, Mapping):
        kind, owner = type(user_data).__name__, type(context).__name__
        raise InvalidContextError(NOT_A_MAPPING.format(owner=owner, kind=kind))
    return RunContext(user_data=user_data)


def run_context(runtime: Runtime[Any] | None) -> RunContext | None:
    """The run's context as a :class:`RunContext` (:func:`as_run_context`), or ``None``."""
    return None if runtime is None else as_run_context(runtime.context)


def user_data_for(
    state: Mapping[str, Any], runtime: Runtime[RunContext] | None
) -> Mapping[str, Any] | None:
    """The run's user data: the runtime context's when given, else the input's (T4, X4)."""
    context = run_context(runtime)
    if context is not None and context.user_data is not None:
        return context.user_data
    return state.get("user_data")


def assistant_for(deps: Dependencies, runtime: Runtime[RunContext] | None) -> LlmAssistant:
    """The run's assistant: the runtime context's when given, else the builder's.

    Raises:
        RunDeadlineError: the run's deadline has passed.
    """
    deadline.check("the next step")
    context = run_context(runtime)
    if context is not None and context.assistant is not None:
        return context.assistant.for_domain(deps.domain_words)
    return deps.domain_assistant


def store_stopwords(domain: Domain, tools: Iterable[Any]) -> tuple[str, ...]:
    """The stop words of the store of the domain's default retrieval tool (N1), or none."""
    retrieval = domain.default_retrieval_tool
    tool = next((t for t in tools if retrieval is not None and t.name == retrieval), None)
    return tuple(getattr(getattr(tool, "store", None), "stopwords", None) or ())


def own_language_of(domain: Domain, tools: Iterable[Any]) -> OwnLanguage | None:
    """The domain's language when no kit knows it, its store's stop words its evidence (T10)."""
    return own_language(domain.default_language, store_stopwords(domain, tools))
