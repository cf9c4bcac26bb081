"""A10, D1, R1: a hedge in the question ("where exactly", "pontosan hol") asks nothing more.

"Where exactly is the archive?" asks what "Where is the archive?" asks. A hedge or
intensifier says how the person asks, never what about, so no sentence of the context
need say it: the offline reading quotes the same sentence for both, and the context
lacks no word of either (so the gatekeeper is not asked for a context that answers).
A neutral test domain (an office building); no example domain's words.
"""

from __future__ import annotations

import pytest

from toolweave.llm.offline_reading import read, wanted_words
from toolweave.tools import text as kit
from toolweave.tools.search.novelty import Known

PAGE = "The archive is in Building B, second floor, room 12."
HEDGED = [
    ("Where exactly is the archive?", "Where is the archive?"),
    ("Where is the archive, actually?", "Where is the archive?"),
    ("Pontosan hol van az archívum?", "Hol van az archívum?"),
    ("Gdzie dokładnie jest archiwum?", "Gdzie jest archiwum?"),
]


@pytest.mark.parametrize(("hedged", "plain"), HEDGED)
def test_A10_a_hedge_adds_no_wanted_word(hedged: str, plain: str) -> None:
    assert wanted_words(hedged) == wanted_words(plain)


def test_R1_the_offline_reading_quotes_the_same_sentence_with_a_hedge() -> None:
    plain = read("Where is the archive?", PAGE, max_sentences=2)
    assert plain is not None
    assert read("Where exactly is the archive?", PAGE, max_sentences=2) == plain


def test_D1_a_context_that_answers_lacks_no_word_of_a_hedged_question() -> None:
    known = Known.of([], [PAGE])
    assert known.lacking("Where exactly is the archive?") == []


def test_A10_hedges_are_query_stop_words_not_language_cues() -> None:
    assert kit.HEDGES <= kit.QUERY_STOPWORDS
    assert kit.HEDGES <= kit.STOPWORDS
