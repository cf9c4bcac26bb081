"""What the context already holds, so a deep search that finds only that finds nothing (D8)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.base import PriorContext
from toolweave.tools.search.text import content_words, split_sentences, word_terms

SentenceKey = tuple[str, int | None, int]  # document_id, page, sentence_number


def content_terms(text: str) -> set[str]:
    """The terms (word_terms) of the content words of ``text``."""
    return {term for word in content_words(text) for term in word_terms(word)}


@dataclass(frozen=True)
class Known:
    """The sentences and the words a context holds."""

    sentences: frozenset[SentenceKey] = frozenset()
    texts: tuple[frozenset[str], ...] = ()  # the terms of each known text
    passages: frozenset[tuple[str, int | None, str]] = frozenset()  # pages read: id, page, text

    @classmethod
    def of(cls, documents: Iterable[UniqueTextDocument], texts: Iterable[str] = ()) -> Known:
        """What ``documents`` and the free ``texts`` (guaranteed context) hold."""
        docs = list(documents)
        sentences = frozenset(
            (d.document_id, d.page, d.sentence_number) for d in docs if d.sentence_number
        )
        known = (frozenset(content_terms(text)) for text in [*(d.text for d in docs), *texts])
        passages = frozenset(
            (d.document_id, d.page, d.text.strip()) for d in docs if not d.sentence_number
        )
        return cls(sentences, tuple(terms for terms in known if terms), passages)

    @classmethod
    def of_prior(cls, prior_context: PriorContext) -> Known:
        """What the context buffer holds: every entry's documents and text."""
        entries = [entry for found in prior_context.values() for entry in found]
        documents = [doc for entry in entries for doc in entry.documents]
        return cls.of(documents, [entry.context for entry in entries if not entry.documents])

    def holds(self, document: UniqueTextDocument) -> bool:
        """Whether ``document`` says nothing the context does not (D8)."""
        key = (document.document_id, document.page, document.sentence_number)
        if document.sentence_number and key in self.sentences:
            return True
        return self.covers(document.text)

    def repeats(self, document: UniqueTextDocument) -> bool:
        """Whether the context holds ``document`` as a passage read before, word for word."""
        return (document.document_id, document.page, document.text.strip()) in self.passages

    def covers(self, text: str) -> bool:
        """Whether each sentence of ``text`` has all its content words in one known text."""
        return all(self._said(sentence) for sentence in split_sentences(text))

    def lacking(self, text: str) -> list[str]:
        """The content words of ``text`` that no known text holds (in any form of its stem)."""
        return [
            w for w in content_words(text) if not any(self._has(w, known) for known in self.texts)
        ]

    @staticmethod
    def _has(word: str, known: frozenset[str]) -> bool:
        return any(t in known for t in word_terms(word))

    def _said(self, sentence: str) -> bool:
        wanted = [word_terms(word) for word in content_words(sentence)]
        return any(all(any(t in known for t in terms) for terms in wanted) for known in self.texts)

    def new(self, documents: Sequence[UniqueTextDocument]) -> list[UniqueTextDocument]:
        """The documents of ``documents`` the context does not hold, in order."""
        return [doc for doc in documents if not self.holds(doc)]
