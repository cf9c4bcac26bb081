"""Evaluation against a golden file through the real graph (``toolweave eval``).

Scored: docs/guides/evaluation.md; the routed set is the root's first routing, retrieval aside.
"""

from __future__ import annotations

import json
import logging
import re
import statistics
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from toolweave.graph.builder import build_graph
from toolweave.graph.context import Limits
from toolweave.llm.citations import checkable, source_text, supports
from toolweave.llm.lexical import content_words, dates_in, month
from toolweave.llm.port import LlmAssistant
from toolweave.pauses import eval_label
from toolweave.run_ledger import as_ledger
from toolweave.state.documents import Source, UniqueTextDocument, as_sentences, as_sources
from toolweave.state.errors import InvalidRequestError, ToolweaveError
from toolweave.state.ledger import LedgerKind
from toolweave.state.pauses import pause_of, payload_of
from toolweave.state.serde import checkpoint_serde
from toolweave.state.task import ROOT_TASK_NO
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool
from toolweave.tools.search.text import fold

logger = logging.getLogger(__name__)

NONE = "none"
KNOWN_KEYS = frozenset({
    "id", "question", "expected_tools", "systems", "user_data", "history", "expected_words",
    "expected_facts", "category", "lang", "split", "expected_clarification", "expected_next",
})  # fmt: skip
NEXT_KINDS = {"replied": "reply", "amended": "amended", "closed": "new_question",
              "cancelled": "cancel"}  # fmt: skip
"""The open question's ledger verdict (Q2) -> what the next message was read as."""
SPLITS = ("dev", "heldout")
"""A case's half (G1): ``dev`` may guide changes, ``heldout`` (reported) never; default ``dev``."""


NO_INFORMATION = (
    "no information", "not find any information", "does not contain", "does not say",
    "does not mention", "not covered", "nem talaltam", "nincs informacio", "nem tartalmaz",
    "nie znaleziono informacji", "nie znalazlem", "nie znalazlam", "brak informacji",
)  # fmt: skip
"""Folded phrases of an answer saying the sources do not cover the question."""


def _squeezed(text: str) -> str:
    """``text`` folded for case and accents, with no white space at all."""
    return "".join(fold(text).split())


ISO_DATE = re.compile(r"\A(\d{4})-(\d{2})-(\d{2})\Z")
"""A fact that is a calendar date as tools write it: ``2027-05-28``."""


YEAR = re.compile(r"\b\d{4}\b")
"""A year an answer names: a date fact is not held by an answer naming another."""


def holds_fact(answer: str, fact: str) -> bool:
    """Whether ``answer`` contains ``fact`` (folded), or, for an ISO date, that date in any form.

    A date's year may stand apart from its day and month ("w 2027 roku w dniu 27 maja") or
    be left out, as the question gave it; an answer naming another year does not hold it.
    """
    if not fact.strip():
        return False
    if _squeezed(fact) in _squeezed(answer):
        return True
    iso = ISO_DATE.match(fact.strip())
    if iso is None:
        return False
    year, month_number, day = (int(g) for g in iso.groups())
    if (year, month_number, day) in dates_in(answer):
        return True
    years = {int(y) for y in YEAR.findall(answer)}
    return years <= {year} and (month_number, day) in _day_months(answer)


def _day_months(text: str) -> set[tuple[int, int]]:
    """The ``(month, day)`` pairs ``text`` writes as a day beside a month's name, either order.

    ``27 maja``, ``május 27-án``, ``May 27``: a number of one or two digits next to a word
    :func:`~toolweave.llm.lexical.month` reads.
    """
    words = re.findall(r"[^\W_]+", text)
    pairs: set[tuple[int, int]] = set()
    for n, word in enumerate(words):
        if not (word.isdigit() and len(word) <= 2 and 1 <= int(word) <= 31):
            continue
        for near in words[max(0, n - 1) : n] + words[n + 1 : n + 2]:
            number = None if near.isdigit() else month(near)
            if number is not None:
                pairs.add((number, int(word)))
    return pairs


def says_no_information(answer: str, own: Iterable[str] = ()) -> bool:
    """Whether ``answer`` says the sources do not cover the question.

    ``own``: the domain's own "no information" texts (``Domain.texts``, P4), in any language.
    """
    folded = " ".join(fold(answer).split())
    phrases = [*NO_INFORMATION, *(" ".join(fold(text).split()) for text in own if text.strip())]
    return any(phrase in folded for phrase in phrases)


BACKING_WORDS = 3
"""Words a source's sentence must share with the answer to back it (fewer if it has fewer)."""


def unbacked_sources(values: Mapping[str, Any], answer: str) -> list[str]:
    """The names of the sources in ``values`` none of whose sentences the answer echoes.

    A sentence backs the answer when the answer holds it whole, or at least
    :data:`BACKING_WORDS` of its words (all of them, if it has fewer), folded.
    """
    said = set(content_words(answer))
    texts: dict[str, list[str]] = {}
    for doc in context_documents(values, terminal_only=True):
        texts.setdefault(doc.document_id, []).append(doc.text)

    def backs(text: str) -> bool:
        words = set(content_words(text))
        return holds_fact(answer, text) or len(words & said) >= min(BACKING_WORDS, len(words))

    return [
        source.name
        for source in as_sources(values.get("sources"))
        if not any(backs(text) for text in texts.get(source.document_id, ()))
    ]


def _saved(values: Mapping[str, Any], *, terminal_only: bool = False) -> list[Any]:
    """The guaranteed contexts and the context buffer's entries (or its terminal's)."""
    buffer = values.get("context_buffer") or {}
    groups = [buffer.get(values.get("terminal") or "", ())] if terminal_only else buffer.values()
    return [*(values.get("guaranteed") or ()), *(e for entries in groups for e in entries or ())]


def context_documents(
    values: Mapping[str, Any], *, terminal_only: bool = False
) -> list[UniqueTextDocument]:
    """The run's passages: documents, guaranteed contexts, context buffer (or its terminal's)."""
    found: list[Any] = [*(values.get("documents") or ())]
    for saved in _saved(values, terminal_only=terminal_only):
        found.extend(getattr(saved, "documents", ()) or ())
    return [
        raw if isinstance(raw, UniqueTextDocument) else UniqueTextDocument.model_validate(raw)
        for raw in found
    ]


def invented_sentences(values: Mapping[str, Any]) -> list[str]:
    """The kept answer's sentences with a checkable token no passage or context text holds (R9)."""
    texts = [source_text(doc) for doc in context_documents(values)]
    texts += [text for entry in _saved(values) if (text := getattr(entry, "context", None))]
    return [
        s.text
        for s in as_sentences(values.get("answer_sentences"))
        if s.supported and checkable(s.text) and not supports(s.text, texts)
    ]


@dataclass(frozen=True)
class CitationFigures:
    """The citation check's figures of one generated answer (R9), from its ledger entry."""

    sentences: int  # generated (by the last generation)
    supported: int  # of them, kept: the answer the person got
    precision: float | None  # recorded by the answer node; None: the answer cited nothing

    @property
    def dropped(self) -> int:
        """Sentences the check dropped (never reached the person)."""
        return self.sentences - self.supported


def citation_figures(ledger: Iterable[Any]) -> CitationFigures | None:
    """The root task's last generated answer's citation figures; ``None``: no such answer."""
    found = None
    for entry in as_ledger(ledger):
        details = entry.details
        if entry.kind != LedgerKind.ANSWER or entry.task_no != ROOT_TASK_NO:
            continue
        if "sentences" in details and "supported" in details:
            rate = details.get("citation_precision", "-")
            precision = None if rate == "-" else float(rate)
            found = CitationFigures(int(details["sentences"]), int(details["supported"]), precision)
    return found


@dataclass(frozen=True)
class GoldenCase:
    """One question of a golden file and what a correct run does with it."""

    id: str
    question: str
    expected_tools: frozenset[str]
    systems: tuple[str, ...] = ()
    user_data: Mapping[str, Any] | None = None
    history: tuple[str, ...] = ()
    expected_facts: tuple[str, ...] = ()  # the answer must hold them (folded)
    expects_no_information: bool = False  # "expected_facts": "none"
    category: str = ""
    lang: str | None = None
    split: str = "dev"  # one of SPLITS
    expects_clarification: bool = False  # Q1
    expected_next: str | None = None  # Q2: a value of NEXT_KINDS; None: not scored


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidRequestError(f"{where}: {key!r} must be a list of strings")
    return tuple(value)


def parse_case(record: Any, where: str) -> GoldenCase:
    """One golden case from a decoded JSON line; :class:`InvalidRequestError` if malformed."""
    if not isinstance(record, dict):
        raise InvalidRequestError(f"{where}: a case must be a JSON object")
    if unknown := set(record) - KNOWN_KEYS:
        raise InvalidRequestError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidRequestError(f"{where}: 'question' must be a non-empty string")
    if "expected_tools" not in record:
        raise InvalidRequestError(f"{where}: 'expected_tools' is required (a list or \"none\")")
    raw = record["expected_tools"]
    expected = frozenset() if raw == NONE else frozenset(_strings(raw, "expected_tools", where))
    user_data = record.get("user_data")
    if user_data is not None and not isinstance(user_data, dict):
        raise InvalidRequestError(f"{where}: 'user_data' must be an object")
    lang = record.get("lang")
    raw_facts = record.get("expected_facts")
    no_information = raw_facts == NONE
    facts = () if no_information else _strings(raw_facts, "expected_facts", where)
    facts += _strings(record.get("expected_words"), "expected_words", where)
    category = record.get("category")
    if category is not None and not isinstance(category, str):
        raise InvalidRequestError(f"{where}: 'category' must be a string")
    split, asks = _split_and_clarification(record, where)
    tools = sorted(expected - {NONE})
    return GoldenCase(
        id=str(record.get("id") or where), question=question, expected_tools=expected - {NONE},
        systems=_strings(record.get("systems"), "systems", where), user_data=user_data,
        history=_strings(record.get("history"), "history", where), expected_facts=facts,
        expects_no_information=no_information,
        category=category or ("+".join(tools) if tools else "documents"),
        lang=lang if isinstance(lang, str) else None, split=split, expects_clarification=asks,
        expected_next=_expected_next(record, where),
    )  # fmt: skip


def _expected_next(record: Mapping[str, Any], where: str) -> str | None:
    kind = record.get("expected_next")
    if kind is not None and kind not in NEXT_KINDS.values():
        kinds = ", ".join(sorted(NEXT_KINDS.values()))
        raise InvalidRequestError(f"{where}: 'expected_next' must be one of {kinds}")
    return kind if isinstance(kind, str) else None


def _split_and_clarification(record: Mapping[str, Any], where: str) -> tuple[str, bool]:
    split = record.get("split", SPLITS[0])
    if split not in SPLITS:
        raise InvalidRequestError(f"{where}: 'split' must be one of {', '.join(SPLITS)}")
    asks = record.get("expected_clarification", False)
    if not isinstance(asks, bool):
        raise InvalidRequestError(f"{where}: 'expected_clarification' must be true or false")
    return split, asks


def load_golden(path: Path) -> list[GoldenCase]:
    """Every case of a golden JSONL file (blank lines and ``#`` comments skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidRequestError(f"cannot read golden file {path}: {exc.strerror}") from exc
    cases: list[GoldenCase] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidRequestError(f"{where}: not JSON ({exc.msg})") from exc
        cases.append(parse_case(record, where))
    if not cases:
        raise InvalidRequestError(f"golden file {path} has no cases")
    return cases


class _ModelTraffic(BaseCallbackHandler):
    """Counts chat-model calls and the characters of the messages sent to them."""

    calls = 0
    chars = 0

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.calls += 1
        self.chars += sum(len(str(m.content)) for batch in messages for m in batch)


@dataclass
class CaseResult:
    """What the graph did with one case."""

    case: GoldenCase
    routed: frozenset[str] = frozenset()
    answer: str = ""
    sources: tuple[Source, ...] = ()  # R9
    unbacked: tuple[str, ...] = ()  # listed sources that hold nothing the answer says
    terminal_tool: str | None = None  # whose finished answer ended the run (R3/R4)
    paused: bool = False  # Q7: on a question, or waiting for client tools
    pause: str | None = None  # the kind and its subject ("clarification: <question>")
    llm_calls: int = 0
    model_calls: int = 0
    model_chars: int = 0
    seconds: float = 0.0
    next_kind: str | None = None  # the message as read when a question was open (Q2)
    error: str | None = None
    crashed: bool = False  # raised something that is no toolweave error (a bug)
    confidence: dict[str, float] = field(default_factory=dict)  # T5: P(yes) of routed tools
    citations: CitationFigures | None = None  # R9; None: no generated answer
    invented: tuple[str, ...] = ()  # kept sentences stating a fact no passage holds
    no_information: tuple[str, ...] = ()  # the domain's own "no information" texts (P4)

    @property
    def exact(self) -> bool:
        """Whether the routed set equals the expected set."""
        return self.error is None and self.routed == self.case.expected_tools

    @property
    def facts_ok(self) -> bool | None:
        """Whether the answer holds every expected fact (or says "no information"); else None."""
        if self.case.expects_no_information:
            return not self.paused and says_no_information(self.answer, self.no_information)
        if not self.case.expected_facts:
            return None
        return not self.paused and all(holds_fact(self.answer, f) for f in self.case.expected_facts)

    @property
    def sources_ok(self) -> bool | None:
        """Whether every listed source backs the answer (R9; "no information" lists none)."""
        if self.paused or self.error is not None or not self.answer:
            return None
        if says_no_information(self.answer, self.no_information):
            return not self.sources
        return not self.unbacked

    @property
    def clarification_ok(self) -> bool:
        """Whether the run asked back exactly when the case expects it (Q1)."""
        asked = self.pause is not None and self.pause.startswith("clarification")
        return self.error is None and asked == self.case.expects_clarification

    @property
    def next_ok(self) -> bool | None:
        """Whether the message was read as the case says (Q2); ``None``: not scored."""
        if self.case.expected_next is None:
            return None
        return self.error is None and self.next_kind == self.case.expected_next

    @property
    def unanswerable_ok(self) -> bool | None:
        """For a case the documents do not answer: the answer says so (else ``None``)."""
        return self.facts_ok if self.case.expects_no_information else None

    @property
    def wrong_finished_answer(self) -> bool:
        """A finished answer (R3/R4) by a tool the case does not expect."""
        return self.terminal_tool is not None and self.terminal_tool not in self.case.expected_tools

    def as_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        case = self.case

        def own(*names: str) -> dict[str, Any]:
            return {name: getattr(self, name) for name in names}

        return {
            "id": case.id, "question": case.question,
            "expected_tools": sorted(case.expected_tools), "routed": sorted(self.routed),
            "category": case.category, "split": case.split,
            **own("exact", "clarification_ok"), "next_message": self.next_kind,
            **own("next_ok", "facts_ok", "sources_ok"),
            "sources": [source.name for source in self.sources],
            "unbacked_sources": list(self.unbacked),
            **own("terminal_tool", "wrong_finished_answer", "paused", "pause", "llm_calls"),
            **own("model_calls", "model_chars"), "seconds": round(self.seconds, 3),
            **own("error", "crashed", "confidence"),
            "citations": None if self.citations is None else asdict(self.citations),
            "invented": list(self.invented), "answer": self.answer,
        }  # fmt: skip


def _run_message(
    graph: Any, config: RunnableConfig, message: str, case: GoldenCase
) -> tuple[list[Any], dict[str, Any]]:
    payload: dict[str, Any] = {"messages": [HumanMessage(content=message)]}
    if case.systems:
        payload["systems"] = list(case.systems)
    if case.user_data is not None:
        payload["user_data"] = dict(case.user_data)
    stream = graph.stream(payload, config, stream_mode=["custom", "updates"])
    events = [chunk for mode, chunk in stream if mode == "custom"]
    return events, dict(graph.get_state(config).values)


def run_case(graph: Any, case: GoldenCase, *, retrieval_tool: str | None) -> CaseResult:
    """Run one case (its history first, on the same thread) and collect what routing did."""
    traffic = _ModelTraffic()
    config: RunnableConfig = {
        "configurable": {"thread_id": f"eval-{uuid.uuid4().hex}"},
        "callbacks": [traffic],
    }
    own_texts = getattr(graph, "texts", None) or {}
    result = CaseResult(
        case=case, no_information=tuple(own_texts.get("no_information", {}).values())
    )
    started = time.perf_counter()
    try:
        carried: list[Any] = []  # a turn the history left waiting on a reply goes on (Q2)
        earlier_values: dict[str, Any] = {}
        for earlier in case.history:
            earlier_events, earlier_values = _run_message(graph, config, earlier, case)
            paused = pause_of(earlier_values) is not None
            carried = [*carried, *earlier_events] if paused else []
        calls_before, chars_before = traffic.calls, traffic.chars
        events, values = _run_message(graph, config, case.question, case)
        if carried:
            result.next_kind = next_message_read(earlier_values, values)
        if result.next_kind in (None, "reply"):
            events = [*carried, *events]
    except ToolweaveError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    except Exception as exc:
        logger.exception("case %s crashed the run", case.id)
        result.error = f"crash: {type(exc).__name__}: {exc}"
        result.crashed = True
        return result
    finally:
        result.seconds = time.perf_counter() - started
    routings = [e for e in events if isinstance(e, Mapping) and e.get("type") == "routed"]
    # the root's first routing; deep fallback may route it again
    routed = next((e.get("tools") or [] for e in routings if e.get("task_no") == ROOT_TASK_NO), [])
    result.routed = frozenset(str(tool) for tool in routed) - {retrieval_tool or ""}
    result.answer = str(values.get("answer") or "")
    result.sources = tuple(as_sources(values.get("sources")))
    result.unbacked = tuple(unbacked_sources(values, result.answer))
    terminal = values.get("terminal")
    dropped = result.next_kind == "cancel"  # ended on the dropped question: no tool's answer
    result.terminal_tool = str(terminal).rpartition(":")[2] if terminal and not dropped else None
    pause = pause_of(values)
    result.paused = pause is not None
    result.pause = None if pause is None else eval_label(payload_of(pause))
    result.llm_calls = int(values.get("llm_calls") or 0)
    result.confidence = routed_confidence(values.get("ledger") or ())
    result.citations = citation_figures(values.get("ledger") or ())
    result.invented = tuple(invented_sentences(values))
    result.model_calls = traffic.calls - calls_before
    result.model_chars = traffic.chars - chars_before
    return result


def next_message_read(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """What the graph read a message on a waiting thread as (Q2), from the ledger's new entries."""
    old: list[Any] = list(before.get("ledger") or [])
    new: list[Any] = list(after.get("ledger") or [])
    if new[: len(old)] == old:
        new = new[len(old) :]
    verdicts = (getattr(entry, "verdict", None) for entry in new)
    return next((NEXT_KINDS[v] for v in verdicts if v in NEXT_KINDS), None)


def routed_confidence(ledger: Iterable[Any]) -> dict[str, float]:
    """P(yes) of each tool the root task's routing said yes to (its ``routed`` entries)."""
    found: dict[str, float] = {}
    for entry in as_ledger(ledger):
        routed = entry.kind == LedgerKind.ROUTING and entry.verdict == "routed"
        if routed and entry.task_no == ROOT_TASK_NO and entry.tool and entry.confidence is not None:
            found[entry.tool] = entry.confidence
    return found


@dataclass
class ToolScore:
    """Precision and recall of routing for one tool."""

    tool: str
    true_positive: int = 0
    false_positive: int = 0
    false_negative: int = 0

    @property
    def precision(self) -> float | None:
        """Share of the tool's routings that were expected."""
        routed = self.true_positive + self.false_positive
        return self.true_positive / routed if routed else None

    @property
    def recall(self) -> float | None:
        """Share of the expected routings that happened."""
        expected = self.true_positive + self.false_negative
        return self.true_positive / expected if expected else None


@dataclass
class EvalReport:
    """The evaluation of a golden file."""

    assistant: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Cases run."""
        return len(self.results)

    def _share(self, predicate: Callable[[CaseResult], bool]) -> float:
        return sum(1 for r in self.results if predicate(r)) / self.count if self.count else 0.0

    @property
    def accuracy(self) -> float:
        """Exact-set routing accuracy."""
        return self._share(lambda r: r.exact)

    @property
    def no_route_rate(self) -> float:
        """Share of the cases that expect a tool where nothing was routed."""
        return self._share(lambda r: bool(r.case.expected_tools) and not r.routed)

    @property
    def over_route_rate(self) -> float:
        """Share of the cases where a tool was routed that the case does not expect."""
        return self._share(lambda r: bool(r.routed - r.case.expected_tools))

    @property
    def wrong_finished_rate(self) -> float:
        """Share of the cases that ended with an unexpected tool's finished answer."""
        return self._share(lambda r: r.wrong_finished_answer)

    @property
    def errors(self) -> int:
        """Cases whose run raised a toolweave error (e.g. a model outage, X2)."""
        return sum(1 for r in self.results if r.error is not None and not r.crashed)

    @property
    def crashes(self) -> int:
        """Cases whose run raised anything else."""
        return sum(1 for r in self.results if r.crashed)

    @property
    def facts_accuracy(self) -> float | None:
        """Share of the cases with expected facts whose answer holds them all."""
        return _ratio(r.facts_ok for r in self.results)

    @property
    def sources_accuracy(self) -> float | None:
        """Share of the answered cases whose sources are all backed by the answer (R9)."""
        return _ratio(r.sources_ok for r in self.results)

    @property
    def clarification_rate(self) -> float:
        """Share of the cases that asked back exactly when expected (Q1)."""
        return self._share(lambda r: r.clarification_ok)

    @property
    def next_message_accuracy(self) -> float | None:
        """Share of the next-message cases read as they say (Q2)."""
        return _ratio(r.next_ok for r in self.results)

    def _figures(self) -> list[CitationFigures]:
        return [r.citations for r in self.results if r.citations is not None]

    @property
    def sentences_supported(self) -> float | None:
        """Supported sentences of all generated answers' sentences (R9); ``None``: none."""
        figures = self._figures()
        total = sum(f.sentences for f in figures)
        return sum(f.supported for f in figures) / total if total else None

    @property
    def sentences_dropped(self) -> int:
        """Generated sentences the check dropped, over every answer (R9)."""
        return sum(f.dropped for f in self._figures())

    @property
    def citation_precision(self) -> float | None:
        """Mean citation precision of the generated answers that cite (R9)."""
        cited = [f.precision for f in self._figures() if f.precision is not None]
        return statistics.fmean(cited) if cited else None

    @property
    def invented_answers(self) -> int:
        """Answers with a sentence stating a fact no passage of the run holds (R9)."""
        return sum(1 for r in self.results if r.invented)

    @property
    def unanswerable_accuracy(self) -> float | None:
        """Share of the unanswerable cases whose answer says the documents do not say."""
        return _ratio(r.unanswerable_ok for r in self.results)

    def splits(self) -> dict[str, EvalReport]:
        """The report by the file's halves (G1), ``dev`` first."""
        parts = {name: EvalReport(assistant=self.assistant) for name in SPLITS}
        for result in self.results:
            parts[result.case.split].results.append(result)
        return {name: part for name, part in parts.items() if part.results}

    def categories(self) -> dict[str, EvalReport]:
        """The report split by case category, categories in first-seen order."""
        parts: dict[str, EvalReport] = {}
        for result in self.results:
            part = parts.setdefault(result.case.category, EvalReport(assistant=self.assistant))
            part.results.append(result)
        return parts

    def tool_scores(self) -> list[ToolScore]:
        """Per-tool precision and recall, by tool name."""
        scores: dict[str, ToolScore] = {}
        for result in self.results:
            expected, routed = result.case.expected_tools, result.routed
            for tool in expected | routed:
                score = scores.setdefault(tool, ToolScore(tool))
                if tool in expected and tool in routed:
                    score.true_positive += 1
                elif tool in routed:
                    score.false_positive += 1
                else:
                    score.false_negative += 1
        return [scores[name] for name in sorted(scores)]

    def _per_case(self, value: Callable[[CaseResult], float]) -> float:
        return statistics.fmean(value(r) for r in self.results) if self.results else 0.0

    def latency(self, quantile: float) -> float:
        """Seconds per case at ``quantile`` (0.5: median), nearest rank."""
        times = sorted(r.seconds for r in self.results)
        if not times:
            return 0.0
        return times[min(len(times) - 1, max(0, round(quantile * len(times) + 0.5) - 1))]

    def summary(self) -> dict[str, Any]:
        """The headline numbers as a JSON-ready dict."""
        tools = {
            s.tool: {
                "precision": s.precision,
                "recall": s.recall,
                **{key: value for key, value in asdict(s).items() if key != "tool"},
            }
            for s in self.tool_scores()
        }
        return {
            "assistant": self.assistant, "cases": self.count, "exact_set_accuracy": self.accuracy,
            "no_route_rate": self.no_route_rate, "over_route_rate": self.over_route_rate,
            "wrong_finished_answer_rate": self.wrong_finished_rate,
            "answer_facts_accuracy": self.facts_accuracy, "sources_accuracy": self.sources_accuracy,
            "unanswerable_accuracy": self.unanswerable_accuracy,
            "clarification_rate": self.clarification_rate,
            "next_message_accuracy": self.next_message_accuracy,
            "sentences_supported": self.sentences_supported,
            "sentences_dropped": self.sentences_dropped,
            "citation_precision": self.citation_precision,
            "invented_fact_answers": self.invented_answers,
            "splits": {name: part.count for name, part in self.splits().items()},
            "errors": self.errors, "crashes": self.crashes,
            "llm_calls_per_case": self._per_case(lambda r: r.llm_calls),
            "model_calls_per_case": self._per_case(lambda r: r.model_calls),
            "model_chars_per_case": self._per_case(lambda r: r.model_chars),
            "latency_p50_s": self.latency(0.5), "latency_p95_s": self.latency(0.95), "tools": tools,
        }  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        """Summary and per-case results."""
        return {"summary": self.summary(), "cases": [r.as_json() for r in self.results]}


def evaluate(
    domain: Domain,
    tools: Sequence[AnyTool],
    cases: Iterable[GoldenCase],
    *,
    assistant: LlmAssistant,
    limits: Limits | None = None,
    progress: Callable[[int, CaseResult], None] | None = None,
) -> EvalReport:
    """Run every case through a fresh graph over ``domain``; a toolweave error is a miss."""
    checkpointer = InMemorySaver(serde=checkpoint_serde())
    graph = build_graph(
        domain, tools, assistant=assistant, limits=limits, checkpointer=checkpointer
    )
    report = EvalReport(assistant=assistant.label)
    for done, case in enumerate(cases, start=1):
        result = run_case(graph, case, retrieval_tool=domain.default_retrieval_tool)
        report.results.append(result)
        if progress is not None:
            progress(done, result)
    return report


def _ratio(checks: Iterable[bool | None]) -> float | None:
    done = [check for check in checks if check is not None]
    return sum(done) / len(done) if done else None


def percent(value: float | None) -> str:
    """``0.873`` -> ``"87.3 %"``; ``None`` -> ``"-"``."""
    return "-" if value is None else f"{100 * value:.1f} %"


def report_table(report: EvalReport) -> list[str]:
    """The report as markdown tables: the headline numbers, per-tool scores, per category."""
    s = report.summary()
    lines = [
        f"assistant: {report.assistant}",
        "",
        "| cases | exact-set accuracy | no-route | over-route | wrong finished answer "
        "| answer facts | sources | errors | crashes | LLM calls/q | model chars/q | p50 s "
        "| p95 s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {report.count} | {percent(report.accuracy)} | {percent(report.no_route_rate)} "
        f"| {percent(report.over_route_rate)} | {percent(report.wrong_finished_rate)} "
        f"| {percent(report.facts_accuracy)} | {percent(report.sources_accuracy)} "
        f"| {report.errors} | {report.crashes} "
        f"| {s['llm_calls_per_case']:.2f} | {s['model_chars_per_case']:,.0f} "
        f"| {s['latency_p50_s']:.2f} | {s['latency_p95_s']:.2f} |",
        "",
        "| tool | precision | recall | expected | routed |",
        "|---|---:|---:|---:|---:|",
    ]
    for score in report.tool_scores():
        expected = score.true_positive + score.false_negative
        routed = score.true_positive + score.false_positive
        lines.append(
            f"| {score.tool} | {percent(score.precision)} | {percent(score.recall)} "
            f"| {expected} | {routed} |"
        )
    category = ("exact-set accuracy", "answer facts", "sources", "wrong finished answer", "crashes")
    return lines + split_table(report) + _parts_table("category", category, report.categories())


_SPLIT_CELLS: dict[str, Callable[[EvalReport], str]] = {
    "tools exact": lambda p: percent(p.accuracy),
    "facts found": lambda p: percent(p.facts_accuracy),
    "unanswerable handled": lambda p: percent(p.unanswerable_accuracy),
    "clarification as expected": lambda p: percent(p.clarification_rate),
    "next message right": lambda p: percent(p.next_message_accuracy),
    "sources right": lambda p: percent(p.sources_accuracy),
    "sentences supported": lambda p: percent(p.sentences_supported),
    "citation precision": lambda p: percent(p.citation_precision),
    "sentences dropped": lambda p: str(p.sentences_dropped),
    "invented facts": lambda p: str(p.invented_answers),
}
SPLIT_COLUMNS = tuple(_SPLIT_CELLS)  # the split table's columns, in order
_CELLS: dict[str, Callable[[EvalReport], str]] = {
    **_SPLIT_CELLS, "exact-set accuracy": _SPLIT_CELLS["tools exact"],
    "answer facts": _SPLIT_CELLS["facts found"], "sources": _SPLIT_CELLS["sources right"],
    "wrong finished answer": lambda p: percent(p.wrong_finished_rate),
    "crashes": lambda p: str(p.crashes),
}  # fmt: skip
"""Each table column's cell of one part of a report."""


def split_table(report: EvalReport) -> list[str]:
    """The file's halves side by side (G1): held-out figures are the ones to report."""
    return _parts_table("split", SPLIT_COLUMNS, report.splits())


def _parts_table(name: str, headers: Sequence[str], parts: Mapping[str, EvalReport]) -> list[str]:
    """A markdown table with a row per part: its name, its case count, then the columns."""
    lines = [
        "",
        "| " + " | ".join([name, "cases", *headers]) + " |",
        "|---|" + "---:|" * (len(headers) + 1),
    ]
    for label, part in parts.items():
        cells = [_CELLS[header](part) for header in headers]
        lines.append("| " + " | ".join([label, str(part.count), *cells]) + " |")
    return lines


THRESHOLDS = (None, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
"""The routing thresholds a calibration tries (``None``: no threshold), lowest first."""


@dataclass(frozen=True)
class ThresholdRow:
    """How a golden file's cases route under one routing threshold (T5)."""

    threshold: float | None
    exact: int  # cases whose routed tool set is the expected one
    routes_nothing: int  # cases that expect a tool where nothing was routed


def threshold_rows(report: EvalReport) -> list[ThresholdRow]:
    """Every :data:`THRESHOLDS` replayed over one run without one (less tools below it, T5)."""
    rows = []
    for threshold in THRESHOLDS:
        exact = nothing = 0
        for result in report.results:
            low = {
                t for t, p in result.confidence.items() if threshold is not None and p < threshold
            }
            routed = result.routed - low
            exact += result.error is None and routed == result.case.expected_tools
            nothing += bool(result.case.expected_tools) and not routed
        rows.append(ThresholdRow(threshold, exact, nothing))
    return rows


def best_threshold(rows: Sequence[ThresholdRow]) -> ThresholdRow:
    """The row with the most exact tool sets; among equals the fewest routes-nothing, the lowest."""
    return max(rows, key=lambda row: (row.exact, -row.routes_nothing))


def threshold_table(rows: Sequence[ThresholdRow], cases: int) -> list[str]:
    """The calibration's rows as a markdown table."""
    lines = ["| threshold | tools exact | routes nothing |", "|---:|---:|---:|"]
    for row in rows:
        label = "none" if row.threshold is None else f"{row.threshold:g}"
        lines.append(f"| {label} | {row.exact}/{cases} | {row.routes_nothing}/{cases} |")
    return lines
