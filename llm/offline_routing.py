"""The offline model's router: lexical scores per tool and a calibrated decision rule (T5).

:class:`RoutingRule`'s thresholds are fitted on ``bench/data``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

from pydantic import BaseModel

from toolweave.llm.lexical import (
    GREETINGS,
    ROUTING_STOPWORDS,
    content_words,
    fold,
    is_generic,
    is_stopword,
    month,
    weekday,
)
from toolweave.llm.lexical import word_matches as word_matches
from toolweave.tools import text as kit
from toolweave.tools.prefilter import CandidateIndex, tool_text
from toolweave.tools.registry import AnyTool
from toolweave.tools.required import choices

_MIN_LETTERS = 3
"""Shorter task words (Hungarian verb prefixes "le", "fel"; "ok") route nothing."""


@dataclass(frozen=True, kw_only=True)
class RoutingRule:
    """Thresholds of the offline routing decision (fitted; see the module docstring)."""

    min_score: float = 0.7
    """Least score a tool needs (one word only this tool has scores 1)."""
    relative: float = 0.3
    """Least share of the best tool's score."""
    min_extra: float = 1.3
    """Least score a second (third, ...) tool must add from task words the tools routed
    before it did not match, unless it is a *twin* (``tie``)."""
    min_coverage: float = 0.1
    """Least share of the task's word weight the tool explains."""
    max_tools: int = 2
    """Most tools routed for one task."""
    tie: float = 0.98
    """A tool matching exactly the words of a routed one, with at least this share of its
    score, is its twin and runs too (the words cannot tell the two apart, so the rule
    does not pick one by list order; above 1: never)."""
    margin: float = 2.0
    """When no tool passes, the pre-filter's best-ranked tool (T12) runs if its BM25 score
    is this many times the second one's (a clear winner) ..."""
    margin_score: float = 0.4
    """... and at least this."""
    terminal_coverage: float = 0.5
    """Least coverage of a tool whose result ends the run (A9): its declared intent
    (routing question, examples) must explain this share of the task, not one shared word ..."""
    terminal_own: float = 0.8
    """... or it must score this from words no other candidate has."""
    near: float = 0.9
    """A passing tool with at least this share of the best score is a near tie; of the
    near ties the best-ranked candidate (T12) is routed first."""
    clause_share: float = 0.7
    """A further tool whose own subject words are in a clause of the task no routed tool
    matched ("... and tell me if it will rain there") needs only this share of ``min_extra``."""


@dataclass(frozen=True)
class ToolScore:
    """One tool's lexical evidence for a task."""

    hits: tuple[str, ...]
    weights: tuple[float, ...]
    """What each hit adds to the score."""
    score: float
    coverage: float
    terminal: bool = False
    """The tool's result ends the run (``returns_answer``)."""
    clauses: tuple[int, ...] = ()
    """The clause of the task each hit is in (:func:`clause_of_words`)."""
    named: bool = False
    """The task names every word of the tool's name ("reserve a car": ``reserve_car``)."""


@lru_cache(maxsize=8192)
def _vocabulary_of(text: str, fields: str) -> dict[str, float]:
    counts: dict[str, float] = {}
    for source, share in ((text, 1.0), (fields, FIELD_SHARE)):
        for word in kit.words(source):
            if word not in ROUTING_STOPWORDS and not is_stopword(word) and len(word) > 1:
                counts[word] = counts.get(word, 0.0) + share
    return counts


FIELD_SHARE = 0.5
"""A request field's word's weight against the routing question's: what it takes, not is about."""


def vocabulary(tool: AnyTool) -> dict[str, float]:
    """The words of a tool's routing question, description and request fields (those halved)."""
    fields: list[str] = []
    for name, info in tool.request_model.model_fields.items():
        fields.append(name.replace("_", " "))
        fields.extend(str(e) for e in info.examples or [])
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        known = extra.get("known_values")
        if isinstance(known, list | tuple):
            fields.extend(str(k) for k in known)
    text = "\n".join([tool.executable_instruction or "", tool.description, *tool.routing_examples])
    return _vocabulary_of(text, "\n".join(fields))


def _buckets(word: str) -> set[str]:
    """Where a word's matches are: its first two letters, or its Polish core's ("pies", "psa")."""
    day = weekday(word)
    if day is not None:
        return {f"#day{day}"}
    return {fold(word)[:2], kit.polish_core(word.casefold())[:2]} - {""}


def _matching(query: Sequence[str], vocabs: Sequence[dict[str, float]]) -> dict[str, set[str]]:
    """For each task word, the vocabulary words (of any tool) it matches."""
    buckets: dict[str, set[str]] = {}
    for word in (w for vocab in vocabs for w in vocab):
        for key in _buckets(word):
            buckets.setdefault(key, set()).add(word)
    return {
        w: {v for key in _buckets(w) for v in buckets.get(key, ()) if word_matches(w, v)}
        for w in query
    }


CLAUSE = re.compile(
    r"[.?!;:]|\band\b|\balso\b|\bthen\b|\bplus\b|\bés\b|\bmajd\b|\billetve\b|\bvalamint\b",
    re.IGNORECASE,
)
"""Where a task's clauses part: a request for a second thing usually comes after one."""


def clause_of_words(task_prompt: str) -> dict[str, int]:
    """Each task word's clause (0, 1, ...; the first one where it occurs)."""
    found: dict[str, int] = {}
    for number, part in enumerate(CLAUSE.split(task_prompt)):
        for word in task_words(part):
            found.setdefault(word, number)
    return found


def task_words(task_prompt: str) -> list[str]:
    """The words of a task that routing weighs (stopwords and short words dropped)."""
    return [
        w
        for w in content_words(task_prompt)
        if w not in ROUTING_STOPWORDS and (len(w) >= _MIN_LETTERS or w.isdigit())
    ]


def is_value(word: str, stated: Collection[str] = frozenset()) -> bool:
    """Whether a task word is a value the request states (a date, a number, an identifier).

    A number no tool's words hold says *which* (a policy number, a day, an amount), not
    *what about*: it takes nothing from a tool's share of the task (A9's coverage). So does
    a month's name (a date written out) and a word of a value a candidate's request field
    offers (``stated``: its ``Literal``/enum members, :func:`field_values`).
    """
    return any(c.isdigit() for c in word) or month(word) is not None or fold(word) in stated


def names_action(tool: AnyTool, hits: Sequence[str]) -> bool:
    """Whether one of ``hits`` is a word of the tool's name or routing question (A9).

    Only a task that names the act has the values it states (:func:`is_value`) left out of
    its share: "Reserve a compact car at the Airport" is the request, "Thursday with Dr
    Dubois" alone names no act and is weighed whole.
    """
    action = _action_words(tool.name, tool.executable_instruction or "")
    return any(word_matches(word, own) for word in hits for own in action)


@lru_cache(maxsize=8192)
def _action_words(name: str, instruction: str) -> tuple[str, ...]:
    """The words of a tool's name and routing question, read once per tool (PF1)."""
    return tuple(task_words(f"{name.replace('_', ' ')} {instruction}"))


def names_whole(tool: AnyTool, query: Sequence[str]) -> bool:
    """Whether every word of the tool's name is matched by a word of the task (T5 twins)."""
    own = task_words(tool.name.replace("_", " "))
    return bool(own) and all(any(word_matches(w, n) for w in query) for n in own)


def field_values(tools: Sequence[AnyTool]) -> frozenset[str]:
    """The folded words of the closed values the tools' request fields take (A9, T6)."""
    return frozenset().union(*(_model_values(tool.request_model) for tool in tools))


@lru_cache(maxsize=8192)
def _model_values(model: type[BaseModel]) -> frozenset[str]:
    """:func:`field_values` of one request model, read once (PF1: asked on every routing)."""
    return frozenset(
        fold(word)
        for info in model.model_fields.values()
        for value in choices(info)
        for word in kit.words(value)
    )


def resemblance(words: Sequence[str], text: str) -> float:
    """The share of ``words`` (a task's, :func:`task_words`) that match a word of ``text``."""
    if not words:
        return 0.0
    other = task_words(text)
    return sum(any(word_matches(w, o) for o in other) for w in words) / len(words)


def closer_to_not_for(task_prompt: str, tool: AnyTool) -> bool:
    """A9: whether the task resembles a ``not_for`` question of the tool most.

    For a tool that acts, a tie is enough when a word of the task is the ``not_for``
    question's and none of its own texts': such a task leans to what it is not for ("How
    much is boarding for a cat?" beside "Book boarding for my cat for 3 nights." and "How
    much is boarding?": "much"), and it never acts on a lean. "I want to book a court."
    beside "How much is it to book a court?" has no such word and still books.
    """
    if not tool.not_for:
        return False
    words = task_words(task_prompt)
    near = {text: resemblance(words, text) for text in tool.not_for}
    against = max(near.values())
    texts = [tool.executable_instruction or "", *tool.routing_examples]
    own = max(resemblance(words, text) for text in texts)
    if against != own or not tool.side_effects or against == 0:
        return against > own
    closest = [text for text, share in near.items() if share == against]
    return leans_to(words, closest, texts)


def leans_to(words: Sequence[str], questions: Sequence[str], own: Sequence[str]) -> bool:
    """A9: whether a task word is a word of ``questions`` and of none of the ``own`` texts."""
    theirs = [w for text in questions for w in task_words(text)]
    mine = [w for text in own for w in task_words(text)]
    return any(
        any(word_matches(word, t) for t in theirs) and not any(word_matches(word, m) for m in mine)
        for word in words
    )


def only_not_for_words(task_prompt: str, tool: AnyTool, found: ToolScore) -> bool:
    """A9: whether the tool's evidence is one subject word that its ``not_for`` questions have."""
    if not tool.not_for or not found.hits:
        return False
    subject = {word for word in found.hits if not is_generic(word)}
    if len(subject) >= TERMINAL_WORDS:
        return False
    against = {word for text in tool.not_for for word in task_words(text)}
    return all(any(word_matches(word, other) for other in against) for word in found.hits)


TERMINAL_WORDS = 2
"""Subject words that are evidence for a finished answer whatever ``not_for`` shares (A9)."""


def needs_intent(tool: AnyTool) -> bool:
    """A9: whether a yes needs more evidence: it ends the run (R3, R4) or acts outside it."""
    return tool.returns_answer or tool.side_effects


def held_back(
    task_prompt: str, tools: Sequence[AnyTool], scores: dict[str, ToolScore], rule: RoutingRule
) -> set[str]:
    """A9: the tools that end the run or act (:func:`needs_intent`) with no declared intent."""
    return {
        tool.name
        for tool in tools
        if needs_intent(tool)
        and tool.name in scores
        and not declared_intent(task_prompt, tool, scores, rule)
    }


def declared_intent(
    task_prompt: str,
    tool: AnyTool,
    scores: dict[str, ToolScore],
    rule: RoutingRule,
    *,
    margin: bool = True,
) -> bool:
    """A9: whether the task is what the tool declares it is for, on more than one shared word."""
    found = scores.get(tool.name)
    if found is None or not found.hits or not has_evidence(found):
        return False
    shared = Counter(word for each in scores.values() for word in each.hits)
    own = sum(
        w
        for word, w in zip(found.hits, found.weights, strict=True)
        if shared[word] == 1 and not is_generic(word)  # "day" is no clear margin
    )
    intent = found.coverage >= rule.terminal_coverage or (margin and own >= rule.terminal_own)
    return (
        intent
        and not closer_to_not_for(task_prompt, tool)
        and not only_not_for_words(task_prompt, tool, found)
    )


def score_tools(task_prompt: str, tools: Sequence[AnyTool]) -> dict[str, ToolScore]:
    """The lexical evidence for each routable tool (those with a routing question)."""
    query = task_words(task_prompt)
    routable = [tool for tool in tools if tool.executable_instruction]
    vocabularies = [vocabulary(tool) for tool in routable]
    matching = _matching(query, vocabularies)
    hits: dict[str, tuple[str, ...]] = {}
    uses: dict[str, dict[str, float]] = {}
    for tool, vocab in zip(routable, vocabularies, strict=True):
        counts = {w: sum(vocab.get(v, 0) for v in matching[w]) for w in query}
        hits[tool.name] = tuple(w for w in query if counts[w])
        uses[tool.name] = counts
    n = len(routable)
    shared = Counter(dict.fromkeys(query, 0))
    shared.update(word for found in hits.values() for word in found)
    lengths = [sum(vocab.values()) for vocab in vocabularies]
    average = sum(lengths) / n if n else 0.0
    length_of = {tool.name: length for tool, length in zip(routable, lengths, strict=True)}
    norm = math.log(1 + n) if n else 1.0
    weight = {w: (math.log(1 + n / k) / norm if k else 1.0) for w, k in shared.items()}
    total = sum(v for w, v in weight.items() if shared[w] or not is_value(w)) or 1.0
    stated = field_values(routable)
    lean = sum(v for w, v in weight.items() if shared[w] or not is_value(w, stated)) or 1.0
    terminal = {tool.name: tool.returns_answer for tool in routable}
    by_name = {tool.name: tool for tool in routable}
    clause = clause_of_words(task_prompt)
    scores: dict[str, ToolScore] = {}
    for name, found in hits.items():
        weights = tuple(
            weight[w] * _saturate(uses[name][w], length_of[name], average) for w in found
        )
        score = sum(weights)
        where = tuple(clause.get(w, 0) for w in found)
        tool = by_name[name]
        share = score / (lean if names_action(tool, found) else total)
        named = names_whole(tool, query)
        scores[name] = ToolScore(found, weights, score, share, terminal[name], where, named)
    return scores


def _saturate(uses: float, length: float, average: float) -> float:
    """BM25's term-frequency factor with a small ``k1`` (near 1)."""
    if not uses:
        return 0.0
    norm = 1 - BM25_B + BM25_B * (length / average if average else 1.0)
    return uses * (BM25_K1 + 1) / (uses + BM25_K1 * norm)


BM25_K1 = 0.2
"""Small: term frequency and vocabulary length break ties, they do not rank."""
BM25_B = 0.75


def decide(
    scores: dict[str, ToolScore], rule: RoutingRule, held: Collection[str] = frozenset()
) -> set[str]:
    """The tools the rule routes (see :class:`RoutingRule`); never those ``held`` back."""
    ranked = sorted(
        ((name, s) for name, s in scores.items() if name not in held), key=lambda i: -i[1].score
    )
    best = ranked[0][1].score if ranked else 0.0
    passing = [
        (name, s)
        for name, s in ranked
        if s.score >= rule.min_score
        and s.score >= rule.relative * best
        and s.coverage >= rule.min_coverage
        and has_evidence(s)
    ]
    if passing:  # of the near ties a context tool first (A9), then the better ranked (T12)
        top = passing[0][1].score
        rank = {name: i for i, name in enumerate(scores)}  # ``scores`` is in rank order
        near = [i for i, (_, s) in enumerate(passing) if s.score >= rule.near * top]
        first = min(near, key=lambda i: (passing[i][1].terminal, rank[passing[i][0]]))
        passing.insert(0, passing.pop(first))
    routed: list[str] = []
    covered: set[str] = set()
    claimed: set[int] = set()
    for name, found in passing:
        if len(routed) >= rule.max_tools:
            break
        own = [
            (word, w, at)
            for word, w, at in zip(found.hits, found.weights, found.clauses, strict=True)
            if word not in covered
        ]
        extra = sum(w for _, w, _ in own)
        twin = len(found.hits) >= TWIN_WORDS and any(
            found.hits == scores[other].hits
            and found.score >= rule.tie * scores[other].score
            and (found.named or not scores[other].named)  # the task names one of them
            for other in routed
        )
        clause = extra >= rule.clause_share * rule.min_extra and any(
            at not in claimed and not is_generic(word) for word, _, at in own
        )
        if routed and extra < rule.min_extra and not twin and not clause:
            continue
        routed.append(name)
        covered.update(found.hits)
        claimed.update(at for word, _, at in own if not is_generic(word))
    return set(routed)


def has_evidence(found: ToolScore) -> bool:
    """Whether a tool's hits are evidence (T5, A8): a subject word, or two generic ones."""
    generic = sum(is_generic(word) for word in found.hits)
    return generic < len(found.hits) or generic >= GENERIC_EVIDENCE


TWIN_WORDS = 2
"""Words twins share at least: one shared word makes no twins, the rank breaks the tie."""
GENERIC_EVIDENCE = 2
"""How many generic words a tool must share with the task when it shares no other."""


@lru_cache(maxsize=64)
def _index(tools: tuple[AnyTool, ...]) -> CandidateIndex:
    """One index per candidate set (keyed in name order: the rank order changes per task)."""
    return CandidateIndex(tools)


def ranking_winner(
    task_prompt: str, tools: Sequence[AnyTool], rule: RoutingRule, held: Collection[str]
) -> str | None:
    """The pre-filter ranking's clear winner (T12) when the rule routed nothing, with evidence."""
    words = " ".join(task_words(task_prompt))  # a greeting's stopwords are no evidence
    routable = tuple(sorted((t for t in tools if t.executable_instruction), key=lambda t: t.name))
    scores = _index(routable).scores(words, [t.name for t in routable]) if words else {}
    order = sorted(scores.items(), key=lambda item: -item[1])
    if not order:
        return None
    name, best = order[0]
    second = order[1][1] if len(order) > 1 else 0.0
    if name in held or best < rule.margin_score or best < rule.margin * second:
        return None
    tool = next(t for t in routable if t.name == name)
    said = [
        w for w in task_words(task_prompt) if any(word_matches(w, t) for t in _text_words(tool))
    ]
    if not said:
        return None  # the index's stem prefix alone ("lisa" in "lists"): no word in common
    generic = sum(is_generic(word) for word in said)
    if generic == len(said) < GENERIC_EVIDENCE:
        return None  # one generic word ("work") is no evidence (:func:`has_evidence`)
    return name


class Decision(NamedTuple):
    """What the offline rule routes for a task, and why (see :func:`offline_decision`)."""

    scores: dict[str, ToolScore]
    """Each routable candidate's :class:`ToolScore`."""
    held: set[str]
    """Tools that end the run or act, not routed: no declared intent behind them (A9)."""
    abstain: bool
    """The task is no request (a pasted error message, a definitional question)."""
    winner: str | None
    """The ranking's clear winner, when the thresholds routed nothing (T12)."""
    routed: set[str]
    """The tools the rule routes."""


def offline_decision(
    task_prompt: str,
    tools: Sequence[AnyTool],
    rule: RoutingRule,
    scores: dict[str, ToolScore] | None = None,
) -> Decision:
    """The offline rule's routing of ``task_prompt`` over ``tools`` (T5, T12, A9)."""
    scores = score_tools(task_prompt, tools) if scores is None else scores
    held = held_back(task_prompt, tools, scores, rule)
    abstain = not_a_request(task_prompt)
    routed = set() if abstain else decide(scores, rule, held)
    winner = None if routed or abstain else ranking_winner(task_prompt, tools, rule, held)
    if winner is not None:
        routed = {winner}  # a clear winner of the ranking
    return Decision(scores, held, abstain, winner, routed)


class RoutingEvidence:
    """The offline rule's evidence for one task over its candidates, read once (T5, A8, A9, Q1)."""

    def __init__(
        self, task_prompt: str, tools: Sequence[AnyTool], rule: RoutingRule | None = None
    ) -> None:
        """Evidence for ``task_prompt`` over ``tools`` (the candidates, best ranked first)."""
        self.task_prompt = task_prompt
        self.tools = tuple(tools)
        self.rule = rule or RoutingRule()

    @cached_property
    def scores(self) -> dict[str, ToolScore]:
        """Each routable candidate's :class:`ToolScore` for the task (:func:`score_tools`)."""
        return score_tools(self.task_prompt, self.tools)

    @cached_property
    def routed(self) -> set[str]:
        """The tools the offline rule itself routes for the task (:func:`offline_decision`)."""
        return offline_decision(self.task_prompt, self.tools, self.rule, self.scores).routed

    def shares_a_word(self, tool: AnyTool) -> bool:
        """Whether a word of the task matches one of the tool's text (:func:`shares_a_word`)."""
        return shares_a_word(self.task_prompt, tool)

    def declared_intent(self, tool: AnyTool, *, margin: bool = True) -> bool:
        """Whether the task is what the tool declares it is for (:func:`declared_intent`)."""
        return declared_intent(self.task_prompt, tool, self.scores, self.rule, margin=margin)

    def asks_whether_to(self) -> bool:
        """Whether the task asks if the person should do something (:func:`asks_whether_to`)."""
        return asks_whether_to(self.task_prompt)

    def names_its_action(self, tool: AnyTool) -> bool:
        """Whether a word of the task is a word of the tool's name or routing question (A9, Q6)."""
        return names_action(tool, task_words(self.task_prompt))

    def fits_better(self, tool: AnyTool, others: Sequence[AnyTool]) -> AnyTool | None:
        """The first of ``others`` whose texts resemble the task more than ``tool``'s (A9, T4).

        A tool's texts: its routing question and examples, read together
        (:func:`resemblance`); ``None`` when none of ``others`` resembles it more.
        """
        words = task_words(self.task_prompt)
        own = resemblance(words, _declared_text(tool))
        return next((o for o in others if resemblance(words, _declared_text(o)) > own), None)

    def against_not_for(self, tool: AnyTool) -> str | None:
        """A9: why the tool's ``not_for`` questions speak against it for the task, or ``None``."""
        if not tool.not_for:
            return None
        if closer_to_not_for(self.task_prompt, tool):
            return "the task is closer to what it is not for"
        found = self.scores.get(tool.name)
        if found is not None and only_not_for_words(self.task_prompt, tool, found):
            words = ", ".join(found.hits)
            return f"the task's only word for it ({words}) is in what it is not for"
        return None

    def hits(self, name: str) -> tuple[str, ...]:
        """The task words that hit the tool ``name`` (none for a tool not scored)."""
        found = self.scores.get(name)
        return found.hits if found else ()

    def justifies_another(self, name: str, covered: Collection[str]) -> bool:
        """T5: whether the tool's hits not in ``covered`` weigh ``rule.min_extra`` or more."""
        found = self.scores.get(name)
        pairs = zip(found.hits, found.weights, strict=True) if found else iter(())
        return sum(w for word, w in pairs if word not in covered) >= self.rule.min_extra


def _declared_text(tool: AnyTool) -> str:
    """What a tool declares it is for: its name, routing question and examples, as one text."""
    examples = " ".join(tool.routing_examples)
    return f"{tool.name.replace('_', ' ')} {tool.executable_instruction or ''} {examples}"


def shares_a_word(task_prompt: str, tool: AnyTool) -> bool:
    """Whether a task word truly matches the tool's text (stem prefixes pair unrelated words)."""
    said = task_words(task_prompt)
    return bool(said) and any(word_matches(w, t) for w in said for t in _text_words(tool))


@lru_cache(maxsize=4096)
def _text_words(tool: AnyTool) -> frozenset[str]:
    return frozenset(task_words(tool_text(tool)))


PASTED = re.compile(
    r"\s*(traceback \(most recent call last\)|[\w.]*(error|exception)\b|fatal:|npm err!"
    r"|http \d{3}\b|segmentation fault)",
    re.IGNORECASE,
)
"""A message that starts as machine output does: a pasted error, not a request."""
DEFINITION = re.compile(
    r"\s*(what\s+(is|are)\s+(an?\s+[^\s,?]+|[^\s,?]+)\s*[,?]|what\s+does\s.+\s(mean|stand\s+for)\b"
    r"|define\s|what\s+is\s+the\s+(meaning|definition|history|difference)\b"
    r"|mit\s+jelent|mi\s+az\s+a(z)?\s|mi\s+a\s+különbség)",
    re.IGNORECASE,
)
"""A definitional question ("What is a mortgage?", "Mit jelent ..."): general knowledge."""


ADVICE_QUESTION = re.compile(
    r"^\W*(?:(?:should|must)\s+(?:i|we)"
    r"|(?:do|does)\s+(?:i|we|one)\s+(?:really\s+)?(?:need|have)\s+to"
    r"|is\s+it\s+(?:necessary|required|mandatory|compulsory|worth)"
    r"|czy\s+(?:muszę|musimy|trzeba|należy|powinienem|powinnam)"
    r"|dois-je|faut-il|muss\s+ich|sollte\s+ich|kell-e)\b",
    re.IGNORECASE,
)
"""A question whether the person should do something ("Should I book ...?", "Do I need to
renew ...?", "Czy trzeba ...?"): it asks advice about an act, never for it (A9)."""


def asks_whether_to(task_prompt: str) -> bool:
    """A9: whether the task asks if the person should or must do something (advice, no act)."""
    return ADVICE_QUESTION.match(task_prompt) is not None


def not_a_request(task_prompt: str) -> bool:
    """Abstention: small talk (a greeting and one word more), a pasted error, a definition."""
    said = kit.words(task_prompt)
    small_talk = bool(said) and said[0] in GREETINGS and len(task_words(task_prompt)) <= 1
    return small_talk or bool(PASTED.match(task_prompt) or DEFINITION.match(task_prompt))
