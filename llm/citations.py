"""Verified citations (R9): each sentence of an answer, the passages it rests on, and a check."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from toolweave.llm.chat_messages import passage_source
from toolweave.llm.lexical import content_words, matches, weekday
from toolweave.llm.port import CITATION, cited_ids
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit
from toolweave.tools.memo import per_step


@dataclass(frozen=True)
class Claim:
    """One sentence of a generated answer and the context ids it cites (1-based)."""

    text: str
    cited: tuple[int, ...] = ()
    line: int = 0
    """The answer's line it was written on (sentences of one line are joined by a space)."""


@dataclass(frozen=True)
class Checked:
    """A claim after the check: the passages it rests on and whether they support it."""

    claim: Claim
    sources: tuple[int, ...]
    """Its cited ids; for a sentence citing nothing, the passages found to support it."""
    supported: bool
    recited: bool = False
    """Supported by other passages than the ones it cited, now its :attr:`sources` (R9)."""


# -- the constrained reply (a citation outside the context cannot be written) ----------


@functools.lru_cache(maxsize=64)
def citation_schema(count: int) -> type[BaseModel]:
    """The answer reply for ``count`` passages; ``sources`` can name only ids ``1..count``."""
    ids: Any = Literal[tuple(range(1, count + 1))]
    sentence = create_model(
        "CitedSentence",
        __config__=ConfigDict(extra="forbid"),
        text=(str, Field(description="One sentence of the answer.")),
        sources=(list[ids], Field(description="The context passages it says, by number.")),
    )
    return create_model(
        "CitedAnswer", __config__=ConfigDict(extra="forbid"), sentences=(list[sentence], ...)
    )


def reply_claims(
    reply: BaseModel, documents: Sequence[UniqueTextDocument] = (), *, first: int = 1
) -> list[Claim]:
    """The claims of a constrained reply: no blanks, copied labels or repeated sentences.

    ``first``: the number the first document had in the prompt; the numbers below it were
    guaranteed texts (:func:`~toolweave.llm.chat_messages.cited_context`), which a claim
    needs not cite (R5), so they are left out and the rest count from 1 again.
    """
    labels = sorted({f"{passage_source(d)}: " for d in documents}, key=len, reverse=True)
    claims: list[Claim] = []
    said: set[str] = set()
    for n, sentence in enumerate(getattr(reply, "sentences", [])):
        text = CITATION.sub("", sentence.text).strip()
        text = next((text[len(lb) :].strip() for lb in labels if text.startswith(lb)), text)
        folded = " ".join(kit.fold(text).split())
        if text and folded not in said:
            said.add(folded)
            cited = (number - first + 1 for number in sentence.sources if number >= first)
            claims.append(Claim(text, tuple(dict.fromkeys(cited)), n))
    return claims


def marked_text(claims: Sequence[Claim]) -> str:
    """``claims`` written as an answer with markers (``"Open 8-16. [1, 2]"``), one a line."""
    return "\n".join(
        c.text + (f" [{', '.join(map(str, c.cited))}]" if c.cited else "") for c in claims
    )


# -- markers ---------------------------------------------------------------------------

_MARKERS_AFTER_END = re.compile(rf"([.!?…])[ \t]*((?:{CITATION.pattern}[ \t]*)+)")
_MARKER_AND_SPACE = re.compile(rf"[ \t]*{CITATION.pattern}")
"""A citation marker with the spaces before it: removed, it leaves no space before a full
stop ("open [1]." reads "open."), and the text's own spaces stay (French "fait : prendre")."""


def claims_of(answer: str, count: int) -> list[Claim]:
    """The sentences of an answer with ``[n]`` markers, each with its ids in ``1..count``."""
    claims: list[Claim] = []
    moved = _MARKERS_AFTER_END.sub(lambda m: f" {m.group(2).strip()}{m.group(1)} ", answer)
    for line_no, line in enumerate(moved.splitlines()):
        for sentence in kit.line_sentences(kit.strip_markup(line)):
            ids = cited_ids(sentence)
            text = _MARKER_AND_SPACE.sub("", sentence).strip()
            if any(ch.isalnum() for ch in text):
                cited = tuple(dict.fromkeys(i for i in ids if 1 <= i <= count))
                claims.append(Claim(text, cited, line_no))
    return claims


def joined(claims: Sequence[Claim]) -> str:
    """The text of ``claims``: one line's sentences a space apart, lines a line apart."""
    out = ""
    for n, claim in enumerate(claims):
        if n:
            out += "\n" if claim.line != claims[n - 1].line else " "
        out += claim.text
    return out


# -- the check ---------------------------------------------------------------------------

_EMAIL_OR_URL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://|www\.)[^\s)\]]+")
_PHONE = re.compile(r"\+?\d[\d \-/()]{5,}\d")
_THOUSANDS = re.compile(r"(?<=\d)[ \u00a0\u202f.](?=\d{3}(?!\d))")
_TIME = re.compile(r"(?<![\d:.])(\d{1,2})\s*[:.]\s*(\d{2})(?![\d:])")
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]+")
PHONE_DIGITS = 7
"""Digits from which a run of digits and separators is a phone number (compared by them)."""


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


@per_step
def checkable(sentence: str) -> list[str]:
    """The tokens of ``sentence`` a source must hold for it to be supported.

    Addresses and URLs, phones (``"tel:"``), times (``"time:14:00"``), numbers (``"num:3"``),
    weekdays in any language (``"day:0"``, Monday) and capitalised words not opening the
    sentence (``"name:Central"``).
    """
    tokens = [f"addr:{m[0].rstrip('.,;')}" for m in _EMAIL_OR_URL.finditer(sentence)]
    rest = _EMAIL_OR_URL.sub(" ", sentence)
    phones = [m[0] for m in _PHONE.finditer(rest) if len(_digits(m[0])) >= PHONE_DIGITS]
    tokens += [f"tel:{_digits(p)}" for p in phones]
    for phone in phones:
        rest = rest.replace(phone, " ")
    rest = _THOUSANDS.sub("", rest)
    tokens += [f"time:{int(m[1])}:{m[2]}" for m in _TIME.finditer(rest)]
    tokens += [f"num:{int(n)}" for n in _NUMBER.findall(_TIME.sub(" ", rest))]
    tokens += [f"day:{day}" for day in _days(rest)]
    for line in rest.splitlines():
        for part in kit.line_sentences(line):
            words = [w for w in _WORD.findall(part) if weekday(w) is None]
            tokens += [f"name:{w}" for w in words[1:] if w[0].isupper() and len(w) > 1]
    return list(dict.fromkeys(tokens))


def _days(text: str) -> list[int]:
    """The weekdays ``text`` names (0 Monday to 6 Sunday), in any language the kit knows."""
    return [day for w in _WORD.findall(text) if (day := weekday(w)) is not None]


@dataclass(frozen=True)
class _Source:
    """What a source offers the check, read once."""

    folded: str
    phones: tuple[str, ...]
    times: frozenset[str]
    numbers: frozenset[int]
    words: frozenset[str]
    days: frozenset[int]

    def holds(self, token: str) -> bool:
        kind, _, value = token.partition(":")
        if kind == "day":  # a weekday it names, or within a span it names ("Mon-Thu"), or none
            return not self.days or min(self.days) <= int(value) <= max(self.days)
        if kind == "addr":
            return kit.fold(value) in self.folded
        if kind == "tel":
            return any(value[-PHONE_DIGITS:] in p for p in self.phones)
        if kind == "time":
            hour, minute = value.split(":")
            return value in self.times or (minute == "00" and int(hour) in self.numbers)
        if kind == "num":
            return int(value) in self.numbers
        return self.has_word(kit.fold(value))

    def has_word(self, word: str) -> bool:
        return word in self.words or any(matches(word, w) for w in self.words)


@per_step
def _read(text: str) -> _Source:
    spaced = _THOUSANDS.sub("", text)
    times = frozenset(f"{int(m[1])}:{m[2]}" for m in _TIME.finditer(spaced))
    return _Source(
        folded=kit.fold(text),
        phones=tuple(_digits(m[0]) for m in _PHONE.finditer(text)),
        times=times,
        numbers=frozenset(int(n) for n in _NUMBER.findall(spaced)),
        words=frozenset(kit.fold(w) for w in _WORD.findall(text)),
        days=frozenset(_days(text)),
    )


def source_text(doc: UniqueTextDocument) -> str:
    """What a passage says for the check: its document's name and its text."""
    return f"{doc.document_name or ''}\n{doc.text}"


_DISTINCT = ("addr:", "tel:")
"""Checkable tokens that name one thing (an address, a phone number), in any language."""


def _backing(tokens: Sequence[str], words: Sequence[str], sources: Sequence[_Source]) -> bool:
    """Whether ``sources`` hold every token, or, with none, at least half the words."""
    if tokens:
        return all(any(s.holds(t) for s in sources) for t in tokens)
    return 2 * sum(any(s.has_word(w) for s in sources) for w in words) >= len(words)


def supports(sentence: str, texts: Sequence[str]) -> bool:
    """Whether cited ``texts`` hold the sentence's checkable tokens, or half its content words."""
    words = [kit.fold(w) for w in content_words(sentence)]
    return _backing(checkable(sentence), words, [_read(t) for t in texts])


def held_by(text: str, passage: str, *, names: bool = True) -> str:
    """The sentences of ``text`` whose figures ``passage`` holds, joined; names if ``names``."""
    source = _read(passage)
    kept = [
        sentence
        for line in text.splitlines()
        for sentence in kit.line_sentences(line)
        if all(source.holds(t) for t in checkable(sentence) if names or not t.startswith("name:"))
    ]
    return " ".join(kept)


def _shows(read: _Source, missing: Sequence[str], words: Sequence[str]) -> tuple[bool, int, int]:
    """How well a passage sentence shows an answer's: holds all ``missing``, how many, words."""
    held = sum(read.holds(t) for t in missing)
    return (_backing(missing, words, [read]), held, sum(read.has_word(w) for w in words))


def supporting_sentences(sentence: str, texts: Sequence[str]) -> list[str]:
    """The sentences of ``texts`` that support ``sentence`` together, in passage order."""
    found = [c for text in texts for c in kit.split_sentences(text)]
    if len(found) < 2:  # nothing to choose from (a one-sentence passage: the usual case)
        return found
    words = [kit.fold(w) for w in content_words(sentence)]
    reads = [_read(c) for c in found]
    picked: list[int] = []
    missing = checkable(sentence)
    while reads and (not picked or missing):
        scores = [_shows(r, missing, words) for r in reads]
        best = max(range(len(reads)), key=lambda i: (scores[i], -i))
        if picked and scores[best][1] == 0:  # nothing more to show
            break
        picked.append(best)
        missing = [t for t in missing if not reads[best].holds(t)]
    return [found[i] for i in sorted(picked)]


QUOTE_GAP = " … "
"""Between two sentences of one source quoted for one answer sentence."""


def supporting_quotes(
    sentence: str, cited: Sequence[UniqueTextDocument], documents: Sequence[str]
) -> tuple[str, ...]:
    """Per id of ``documents``, its ``cited`` passages' :func:`supporting_sentences` (R9)."""
    return tuple(
        QUOTE_GAP.join(
            supporting_sentences(sentence, [d.text for d in cited if d.document_id == document])
        )
        for document in documents
    )


def says_something(sentence: str) -> bool:
    """Whether ``sentence`` states something a source could hold (not a connective)."""
    return bool(checkable(sentence) or content_words(sentence))


def _quoted(sentence: str, pool: Sequence[int], texts: Sequence[str]) -> tuple[int, ...]:
    """The passages of ``pool`` that hold ``sentence`` word for word (a quote), if any."""
    said = " ".join(kit.fold(sentence).split()).rstrip(".!?…")
    return tuple(i for i in pool if said and said in " ".join(kit.fold(texts[i - 1]).split()))


def _restates(sentence: str, words: Sequence[str]) -> bool:
    """Whether ``sentence`` has a form of one of ``words`` (folded)."""
    return any(matches(w, f) for w in map(kit.fold, content_words(sentence)) for f in words)


@dataclass(frozen=True)
class _Against:
    """What every claim of one answer is checked against (built once by :func:`verify`)."""

    texts: list[str]
    documents: Sequence[UniqueTextDocument]
    """The passages whose :func:`source_text` :attr:`texts` are, in that order."""
    guaranteed: Sequence[str]
    foreign: list[str]
    pool: tuple[int, ...]
    lenient: bool

    def check(self, claim: Claim) -> Checked:
        """The check of one claim (:func:`verify`)."""
        if not says_something(claim.text):  # a connective rests on nothing
            return Checked(claim, claim.cited, True)
        if _restates(claim.text, self.foreign):
            return Checked(claim, claim.cited, False)
        if claim.cited:
            cited = [self.texts[i - 1] for i in claim.cited]
            if supports(claim.text, [*cited, *self.guaranteed]):
                return Checked(claim, claim.cited, True)
            return self._recited(claim)
        return self._uncited(claim)

    def _recited(self, claim: Claim) -> Checked:
        """A claim its cited passages do not support, tied to the passages that say it.

        Only a claim with figures or names (:func:`checkable`) that shares a word with a
        passage it cited (the model pointed at its subject, not at random), and only to a
        passage of a document it cited that holds every one of them and half its content
        words (an address or phone number alone is enough: a passage in another language):
        the fact is on the page the model cited, one sentence off, so the sentence keeps its
        fact with the right source (R9); a figure from another document stays unsupported.
        """
        tokens = checkable(claim.text)
        if not tokens or not self._points_at(claim):
            return Checked(claim, claim.cited, False)
        cited_documents = {self.documents[i - 1].document_id for i in claim.cited}
        words = [] if any(t.startswith(_DISTINCT) for t in tokens) else content_words(claim.text)
        folded = [kit.fold(w) for w in words]
        found = tuple(
            i
            for i, text in enumerate(self.texts, start=1)
            if self.documents[i - 1].document_id in cited_documents
            and supports(claim.text, [text])
            and (not folded or _backing((), folded, [_read(text)]))
        )
        return Checked(claim, found or claim.cited, bool(found), recited=bool(found))

    def _points_at(self, claim: Claim) -> bool:
        """Whether a passage ``claim`` cites has one of its content words (not a figure)."""
        words = [kit.fold(w) for w in content_words(claim.text) if not w.isdigit()]
        cited = [_read(self.documents[i - 1].text) for i in claim.cited]  # not its page name
        return any(source.has_word(w) for w in words for source in cited)

    def _uncited(self, claim: Claim) -> Checked:
        """A claim citing no passage, checked against the pool: a quote, or what supports it."""
        quoted = _quoted(claim.text, self.pool, self.texts)
        if quoted:
            return Checked(claim, quoted, True)
        guaranteed = self.guaranteed
        if _quoted(claim.text, range(1, len(guaranteed) + 1), guaranteed):  # R5: its own source
            return Checked(claim, (), True)
        if self.lenient and not checkable(claim.text):  # an assistant that never cites, no figure
            return Checked(claim, (), True)
        found = tuple(i for i in self.pool if supports(claim.text, [self.texts[i - 1]]))
        ok = bool(found) or (bool(self.guaranteed) and supports(claim.text, self.guaranteed))
        return Checked(claim, found, ok)


def _standing(known: Sequence[Checked]) -> dict[tuple[str, tuple[int, ...]], Checked]:
    """The results of ``known`` that hold whatever the rest of the answer cites."""
    return {
        (c.claim.text, c.claim.cited): c
        for c in known
        if c.claim.cited or not says_something(c.claim.text)
    }


def verify(
    claims: Sequence[Claim],
    documents: Sequence[UniqueTextDocument],
    guaranteed: Sequence[str] = (),
    implicit: Sequence[int] = (),
    *,
    lenient: bool = False,
    uncovered: Sequence[str] = (),
    known: Sequence[Checked] = (),
) -> list[Checked]:
    """Each claim checked against what it cites, with the guaranteed context (R5, R9).

    A claim citing nothing rests on ``implicit`` (``lenient``: every passage); one restating an
    ``uncovered`` word the guaranteed context lacks is not supported; ``known`` results are reused.
    """
    texts = [source_text(d) for d in documents]
    held = [_read(t) for t in guaranteed]
    foreign = [w for w in uncovered if not any(s.has_word(w) for s in held)]
    pool = tuple(implicit) or (tuple(range(1, len(documents) + 1)) if lenient else ())
    against = _Against(texts, documents, guaranteed, foreign, pool, lenient)
    done = _standing(known)
    found = ((claim, done.get((claim.text, claim.cited))) for claim in claims)
    return [against.check(c) if seen is None else replace(seen, claim=c) for c, seen in found]


def precision_recall(
    claims: Sequence[Claim], documents: Sequence[UniqueTextDocument]
) -> tuple[float | None, float | None]:
    """Citation precision and recall of one answer (``None`` where nothing is counted)."""
    texts = [source_text(d) for d in documents]
    pairs = good = backed = found = 0
    for claim in (c for c in claims if says_something(c.text)):
        holding = {i for i, t in enumerate(texts, 1) if supports(claim.text, [t])}
        cited = [texts[i - 1] for i in claim.cited]
        together = len(cited) > 1 and supports(claim.text, cited)
        tokens = checkable(claim.text)
        part = {i for i in claim.cited if any(_read(texts[i - 1]).holds(t) for t in tokens)}
        pairs += len(claim.cited)
        good += sum(i in holding or (together and i in part) for i in claim.cited)
        backed += bool(holding) or together
        found += bool(holding & set(claim.cited)) or together
    return (good / pairs if pairs else None, found / backed if backed else None)
