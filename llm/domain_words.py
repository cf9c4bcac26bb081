"""A domain's own words: no evidence for a tool, no word a question asks for (N1, T12)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from toolweave.llm.lexical import matches
from toolweave.tools.language import OwnLanguage
from toolweave.tools.prefilter import query_words
from toolweave.tools.text import fold

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DomainWords:
    """The domain's name (any form of its words) and its store's stop words (those words).

    Example:
        >>> own = DomainWords(("polideportivo",), stopwords=("que", "tienen"))
        >>> own.without("¿Tienen sauna en el polideportivo, que queja!")
        '¿ sauna en el ,  queja!'
        >>> own.asked("¿Tienen sauna en el polideportivo?")
        '¿ sauna en el polideportivo?'
    """

    words: tuple[str, ...] = ()
    """The domain's name and other words of which every form is the domain's."""
    stopwords: tuple[str, ...] = ()
    """Words dropped as they are (``"que"``, not ``"queja"``): the store's ``stopwords``."""
    language: OwnLanguage | None = None
    """The domain's language when no kit knows it, the stop words its evidence (T10)."""

    @functools.cached_property
    def terms(self) -> frozenset[str]:
        """Their index terms, for :class:`~toolweave.tools.prefilter.CandidateIndex` ``ignore``."""
        texts = (*self.words, *self.stopwords)
        return frozenset(term for text in texts for terms in query_words(text) for term in terms)

    @functools.cached_property
    def _forms_of(self) -> tuple[str, ...]:
        return tuple(fold(word) for text in self.words for word in _WORD.findall(text))

    @functools.cached_property
    def _exact(self) -> frozenset[str]:
        return frozenset(fold(word) for text in self.stopwords for word in _WORD.findall(text))

    def own(self, word: str) -> bool:
        """Whether ``word`` is one of the domain's own words."""
        folded = fold(word)
        return folded in self._exact or any(matches(folded, w) for w in self._forms_of)

    def without(self, text: str) -> str:
        """``text`` without the domain's own words."""
        if not self._forms_of and not self._exact:
            return text
        return _dropping(text, self.own)

    def asked(self, text: str) -> str:
        """``text`` without the store's stop words (what routing and reading weigh), or ``text``.

        The domain's name stays: a passage that names it says more of what was asked. When no
        other word is left, ``text`` as it is.
        """
        if not self._exact:
            return text
        kept = _dropping(text, lambda word: fold(word) in self._exact)
        return kept if _WORD.search(kept) else text


def _dropping(text: str, drop: Callable[[str], bool]) -> str:
    """``text`` without the words ``drop`` says to drop, all else as it is."""
    return _WORD.sub(lambda found: "" if drop(found.group()) else found.group(), text)
