"""Reading heuristics of the offline model: the gatekeeper (D1) and per-page reading (D3).

Sentences, headings and words are the text kit's (:mod:`toolweave.tools.text`).

Lexical stand-ins for what a model does:

- a question asking *when*, *how much*, *how many* or for a number or fee is
  answered precisely only by a sentence about it that holds a figure;
- a sentence under a heading is read with that heading and the document's
  title (a list item under "## Visiting hours" is about visiting hours).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolweave.llm.lexical import GREETINGS, content_words, fold, matches
from toolweave.tools import text as kit

QUANTITY_CUES = (
    "mikor", "mennyi", "hany", "meddig", "mettol", "dij", "telefonszam", "arak",
    "when", "much", "many", "cost", "price", "fee", "phone", "number",
)  # fmt: skip
"""Folded word prefixes that ask for a time, amount, count, price or number."""


def wanted_words(question: str) -> list[str]:
    """The question's content words (greetings dropped)."""
    return [w for w in content_words(question) if w not in GREETINGS]


def asks_for_quantity(question: str) -> bool:
    """Whether the question asks for a time, amount, count, price or number."""
    return any(fold(word).startswith(QUANTITY_CUES) for word in content_words_all(question))


def content_words_all(text: str) -> list[str]:
    """Every word of ``text``, stopwords included (question words are stopwords)."""
    return kit.words(text)


def has_figure(text: str) -> bool:
    """Whether ``text`` holds a digit."""
    return any(ch.isdigit() for ch in text)


def hits(wanted: Sequence[str], have: Iterable[str]) -> int:
    """How many wanted words some word of ``have`` matches."""
    present = list(have)
    return sum(any(matches(w, h) for h in present) for w in wanted)


@dataclass(frozen=True)
class ReadSentence:
    """A sentence of a passage with the words of the headings above it."""

    text: str
    heading_words: tuple[str, ...]


def passage_sentences(passage: str) -> list[ReadSentence]:
    """A passage's sentences, line by line; each carries its title and section heading words."""
    found: list[ReadSentence] = []
    title, section = "", ""
    for raw in passage.splitlines():
        heading = kit.heading(raw)
        if heading is not None:
            level, text = heading
            if level == 1:
                title, section = text, ""
            else:
                section = text
            continue
        line = kit.strip_markup(raw)
        if not line:
            continue
        context = tuple(content_words(f"{title} {section}"))
        found.extend(ReadSentence(s, context) for s in kit.line_sentences(line))
    return found


def read(question: str, passage: str, *, max_sentences: int) -> str | None:
    """The passage's sentences answering ``question``, or ``None``.

    A sentence answers when it (with its headings) holds at least half the
    question's content words; for a quantity question it must also hold a figure.
    """
    wanted = wanted_words(question)
    if not wanted:
        return None
    quantity = asks_for_quantity(question)
    picked = []
    for sentence in passage_sentences(passage):
        found = hits(wanted, [*content_words(sentence.text), *sentence.heading_words])
        if not found or found * 2 < len(wanted):
            continue
        if quantity and not has_figure(sentence.text):
            continue
        picked.append(sentence.text)
    return " ".join(picked[:max_sentences]) or None


def lacks_figure(question: str, passages: Iterable[Sequence[str]]) -> bool:
    """True for a quantity question that no relevant context sentence answers with a figure.

    Args:
        question: The user's question.
        passages: Runs of consecutive sentences (one page's hits, one guaranteed text).

    A sentence with a figure answers when it, read with the sentence before it
    (which may name what "it" or "her" is), holds at least half the question's words.
    """
    if not asks_for_quantity(question):
        return False
    wanted = wanted_words(question)
    for passage in passages:
        sentences = [s for text in passage for s in kit.line_sentences(text)]
        for index, sentence in enumerate(sentences):
            if not has_figure(sentence):
                continue
            window = " ".join(sentences[max(0, index - 1) : index + 1])
            if hits(wanted, content_words(window)) * 2 >= len(wanted):
                return False
    return True


def page_runs(texts: Iterable[tuple[str, int | None, str]]) -> list[list[str]]:
    """Group ``(document_id, page, text)`` into runs per page, in first-seen order."""
    runs: dict[tuple[str, int | None], list[str]] = {}
    for document_id, page, text in texts:
        runs.setdefault((document_id, page), []).append(text)
    return list(runs.values())
