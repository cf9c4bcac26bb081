"""T12: the candidate pre-filter (BM25, fused with embeddings) keeping the routing call small."""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings

from toolweave.tools import embeddings as semantic
from toolweave.tools.registry import AnyTool
from toolweave.tools.search.text import STOPWORDS, content_words, fold, word_terms, words

BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 60  # reciprocal rank fusion: score = sum(weight / (RRF_K + rank))
COSINE_WEIGHT = 3.0  # the cosine ranking's weight in the fusion (keywords: 1), bench.recall
NAME_WEIGHT = 2  # a word of the tool's name counts this many times
PREFIX = 6
MIN_PREFIX = 4
MIN_STEM = 3  # fewest letters of a stem term other than the word itself ("need" -> "ne")
MIN_HEAD = 5  # fewest letters of a compound's head word (below it, endings and suffixes)
MIN_MODIFIER = 3  # fewest letters before a compound's head (below it, a prefix)
_NAME_SPLIT = re.compile(r"[_\-.]+")
_BOILERPLATE = re.compile(
    r"\b(?:use this tool (?:to|for|when|if)|this tool (?:can be used to|lets you|allows you to"
    r"|is used to|will)|true when the user (?:asks for what this tool does|asks about|asks for"
    r"|wants to|wants|asks)|answers questions about|useful for)\b:?",
    re.IGNORECASE,
)  # phrasing of tool texts in general that says nothing about the tool

if TYPE_CHECKING:
    from toolweave.tools.embeddings import Matrix


def _texts(tool: AnyTool) -> list[str]:
    """A tool's questions, instruction, description, examples (A9) and fields' texts."""
    parts = [tool.executable_instruction or "", tool.instruction, tool.description]
    parts.extend(tool.routing_examples)
    for field in tool.request_model.model_fields.values():
        parts.append(field.description or "")
        parts.extend(str(example) for example in field.examples or [])
    return parts


def tool_text(tool: AnyTool) -> str:
    """The text a tool is ranked by: its name's words, then :func:`_texts`."""
    name = " ".join([_NAME_SPLIT.sub(" ", tool.name)] * NAME_WEIGHT)
    return "\n".join(part for part in [name, *_texts(tool)] if part)


def embedding_text(tool: AnyTool) -> str:
    """The text a tool is embedded by: without boilerplate, nor a part another contains."""
    name = _NAME_SPLIT.sub(" ", tool.name)
    cleaned: list[str] = [name]
    for part in _texts(tool):
        text = part.strip()
        if text.startswith(f"{tool.name}:"):
            text = text[len(tool.name) + 1 :]
        text = " ".join(_BOILERPLATE.sub(" ", text).split()).strip(" :")
        if text and not any(text.casefold() in kept.casefold() for kept in cleaned):
            cleaned = [kept for kept in cleaned if kept.casefold() not in text.casefold()]
            cleaned.append(text)
    if name not in cleaned:  # a part holding the name's words replaced it
        cleaned.insert(0, name)
    return "\n".join(cleaned)


@lru_cache(maxsize=65536)
def _terms_of_word(word: str) -> tuple[str, ...]:
    """A word's index terms, the same on both sides: folded form, stems, stem prefix."""
    folded, *stemmed = word_terms(word)
    terms = [folded, *(s for s in stemmed if len(s) >= MIN_STEM)]
    stem = terms[1] if len(terms) > 1 else terms[0]
    if len(stem) >= MIN_PREFIX:
        terms.append("~" + stem[:PREFIX])
    return tuple(dict.fromkeys(terms))


def _indexed_words(text: str) -> list[str]:
    """A tool text's words as the index counts them: every use, the query's stop words out."""
    return [w for w in words(text) if w not in STOPWORDS and fold(w) not in STOPWORDS]


def compound_heads(terms: Sequence[str], vocabulary: Collection[str]) -> tuple[str, ...]:
    """Index terms that end a query word's terms as a compound's head word (T5, T12).

    Languages that write compounds as one word (Hungarian, German, Dutch, the Nordic
    languages) name a kind of a thing by its head at the end: a question's
    "gyerekosztály" (children's ward) is an "osztály" (ward) a tool's text names. The
    longest such ending of each term that the index knows, of at least
    :data:`MIN_HEAD` letters after at least :data:`MIN_MODIFIER` others, is the head.
    """
    heads: list[str] = []
    for term in terms:
        if term.startswith("~"):  # a prefix term: no word of its own
            continue
        last = len(term) - MIN_HEAD
        head = next((term[i:] for i in range(MIN_MODIFIER, last + 1) if term[i:] in vocabulary), "")
        if head and head not in heads and head not in terms:
            heads.append(head)
    return tuple(heads)


def query_words(text: str) -> list[tuple[str, ...]]:
    """The terms of each content word of ``text`` (stopwords dropped unless nothing is left)."""
    return [_terms_of_word(word) for word in content_words(text)]


@dataclass(frozen=True)
class RankedTool:
    """A candidate's place in the pre-filter's ranking of one task."""

    tool: str
    rank: int  # 1-based
    score: float  # BM25, or the fused RRF score with embeddings


class CandidateIndex:
    """A BM25 index (and optional embedding matrix) over tools' routing texts, built once.

    Args:
        tools: The tools to index (the domain's routable tools).
        embeddings: LangChain embeddings, or ``"auto"`` for the bundled model when installed.
    """

    def __init__(
        self, tools: Iterable[AnyTool], embeddings: Embeddings | Literal["auto"] | None = None
    ) -> None:
        tools = list(tools)
        self._names: list[str] = []
        self._lengths: list[int] = []
        postings: dict[str, dict[int, int]] = defaultdict(dict)
        for doc, tool in enumerate(tools):
            self._names.append(tool.name)
            tokens = _indexed_words(tool_text(tool))
            self._lengths.append(len(tokens))
            for word in tokens:
                for term in _terms_of_word(word):
                    row = postings[term]
                    row[doc] = row.get(doc, 0) + 1
        count = len(self._names)
        average = (sum(self._lengths) / count) if count else 1.0
        # each posting holds its finished BM25 weight: a request only adds them up
        self._postings: dict[str, dict[int, float]] = {}
        for term, row in postings.items():
            idf = math.log(1 + (count - len(row) + 0.5) / (len(row) + 0.5))
            self._postings[term] = {
                doc: idf
                * freq
                * (BM25_K1 + 1)
                / (freq + BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[doc] / average))
                for doc, freq in row.items()
            }
        self._position = {name: doc for doc, name in enumerate(self._names)}
        self._embeddings = semantic.resolve(embeddings) if self._names else None
        self._texts = [embedding_text(tool) for tool in tools] if self._embeddings else []
        self._vectors: Matrix | None = None
        self._lock = threading.Lock()
        self._last_scores: tuple[str, Collection[str], Mapping[int, float]] | None = None

    def __len__(self) -> int:
        return len(self._names)

    @property
    def semantic(self) -> bool:
        """Whether rankings fuse the keyword ranking with embeddings."""
        return self._embeddings is not None

    def _matrix(self) -> Matrix:
        """The tool vectors (unit rows), computed (or read from the disk cache) once."""
        with self._lock:
            if self._vectors is None:
                assert self._embeddings is not None
                self._vectors = semantic.tool_vectors(self._embeddings, self._texts)
            return self._vectors

    def keyword_scores(
        self, prompt: str, *, ignore: Collection[str] = frozenset()
    ) -> Mapping[int, float]:
        """BM25 scores of tools sharing a word (none in ``ignore``) with ``prompt``; cached, PF1."""
        last = self._last_scores
        if last is not None and last[0] == prompt and (last[1] is ignore or last[1] == ignore):
            return last[2]
        scores = self._keyword_scores(prompt, ignore)
        self._last_scores = (prompt, ignore, scores)
        return scores

    def _keyword_scores(self, prompt: str, ignore: Collection[str]) -> Mapping[int, float]:
        scores: dict[int, float] = defaultdict(float)
        for terms in query_words(prompt):
            if ignore and any(term in ignore for term in terms):
                continue
            best: dict[int, float] = {}  # a word counts once per tool, with its best term
            terms = (*terms, *compound_heads(terms, self._postings))
            for postings in (self._postings.get(term, {}) for term in terms):
                for doc, value in postings.items():
                    if value > best.get(doc, 0.0):
                        best[doc] = value
            for doc, value in best.items():
                scores[doc] += value
        return MappingProxyType(dict(scores))

    def scores(
        self, prompt: str, names: Iterable[str], *, ignore: Collection[str] = frozenset()
    ) -> dict[str, float]:
        """The keyword (BM25) score of each named tool for ``prompt``; 0 for unknown names."""
        keyword = self.keyword_scores(prompt, ignore=ignore)
        return {name: keyword.get(self._position.get(name, -1), 0.0) for name in names}

    def rank(
        self,
        prompt: str,
        candidates: Sequence[str],
        *,
        limit: int | None = None,
        include: Collection[str] = (),
        keywords_only: bool = False,
        ignore: Collection[str] = frozenset(),
    ) -> list[RankedTool]:
        """Rank ``candidates`` (tool names) against ``prompt``, best first; ties in given order.

        Args:
            prompt: The task prompt (never its context, M2).
            candidates: The names to rank.
            limit: Return only the first ``limit`` (``None``: all).
            include: Names whose rank is returned even beyond ``limit`` (pinned tools).
            keywords_only: Rank by keywords even when the index has embeddings.
            ignore: Index terms that are no evidence (the domain's own words).
        """
        position = self._position
        keyword = self.keyword_scores(prompt, ignore=ignore)
        score: Mapping[int, float]
        if self._embeddings is not None and not keywords_only:
            wanted = sorted({position[n] for n in candidates if n in position})
            order, score = self._fused(prompt, wanted, keyword)
            names = [self._names[doc] for doc in order]
            names += [n for n in candidates if n not in position]
        else:
            given = set(candidates)
            hits = sorted(
                (d for d in keyword if self._names[d] in given), key=lambda d: (-keyword[d], d)
            )
            names = [self._names[doc] for doc in hits]
            found = set(names)
            names += [n for n in candidates if n not in found]
            score = keyword
        count = len(names) if limit is None else min(limit, len(names))
        extra = set(include)
        return [
            RankedTool(name, place, score.get(position.get(name, -1), 0.0))
            for place, name in enumerate(names, start=1)
            if place <= count or name in extra
        ]

    def _fused(
        self, prompt: str, wanted: list[int], keyword: Mapping[int, float]
    ) -> tuple[list[int], dict[int, float]]:
        """Weighted reciprocal rank fusion of the keyword and the cosine rankings, vectorised."""
        np: Any = semantic.numpy_module()
        assert self._embeddings is not None
        docs = np.asarray(wanted, dtype=np.int64)
        bm25 = np.zeros(len(self._names), dtype=np.float64)
        if keyword:
            bm25[np.fromiter(keyword, np.int64, len(keyword))] = list(keyword.values())
        query = semantic.query_vector(self._embeddings, prompt)
        # einsum, not ``@``: BLAS starts threads that cost milliseconds on a busy machine
        cosine = np.einsum("ij,j->i", self._matrix(), query)[docs]
        keyword_hits = bm25[docs]
        places = np.empty((2, len(docs)), dtype=np.float64)
        for row, values in enumerate((keyword_hits, cosine)):
            places[row, np.argsort(-values, kind="stable")] = np.arange(1, len(docs) + 1)
        # a tool sharing no word with the prompt is not in the keyword ranking (textbook RRF)
        fused = np.where(keyword_hits > 0, 1.0 / (RRF_K + places[0]), 0.0)
        fused += COSINE_WEIGHT / (RRF_K + places[1])
        order = np.argsort(-fused, kind="stable")
        return docs[order].tolist(), dict(zip(wanted, fused.tolist(), strict=True))


@dataclass(frozen=True)
class Prefiltered:
    """What the pre-filter offers to the routing call, and the ranking behind it."""

    offered: list[AnyTool]  # in the registry's order
    ranking: list[RankedTool]  # kept, ``detail`` more and pinned, best first; empty: no filter
    pinned: frozenset[str]  # offered because the domain pins them, whatever their rank
    total: int = 0  # candidates ranked

    @property
    def filtered(self) -> bool:
        """Whether the pre-filter ran (the task had more candidates than the cap)."""
        return bool(self.ranking)


def prefilter(
    index: CandidateIndex,
    prompt: str,
    candidates: Sequence[AnyTool],
    *,
    cap: int,
    pinned: Collection[str] = (),
    detail: int = 0,
    ignore: Collection[str] = frozenset(),
) -> Prefiltered:
    """T12: the best ``cap`` candidates for the task prompt (M2), pinned ones, ``detail`` more."""
    if len(candidates) <= cap:
        return Prefiltered(list(candidates), [], frozenset(), len(candidates))
    names = [tool.name for tool in candidates]
    present = set(names)
    pinned_here = [name for name in pinned if name in present]
    ranking = index.rank(prompt, names, limit=cap + detail, include=pinned_here, ignore=ignore)
    keep = {ranked.tool for ranked in ranking if ranked.rank <= cap}
    pins = frozenset(name for name in pinned_here if name not in keep)
    offered = [tool for tool in candidates if tool.name in keep or tool.name in pins]
    return Prefiltered(offered, ranking, pins, len(candidates))


_SUFFIXES = ("th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th")  # by last digit


def ordinal(number: int) -> str:
    """``1`` -> ``"1st"``, ``57`` -> ``"57th"``, ``1702`` -> ``"1,702nd"``."""
    suffix = "th" if 10 <= number % 100 <= 20 else _SUFFIXES[number % 10]
    return f"{number:,}{suffix}"
