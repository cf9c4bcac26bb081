"""D9, D1: Hungarian questions ask what one *can* do; pages tell one to do it.

"Hol parkolhatok?" (where can I park) and a page's "parkoljon" (please park), "Parkolás"
(parking) or "parkolni" (to park) are one verb, "parkol", that the Snowball stemmer leaves
under four stems. One general rule of the language (:func:`toolweave.tools.text.hungarian_base`)
reads the verb under the potential "-hat/-het", the imperative "-j", the infinitive's "-n" and
the noun-making "-ás/-és"; and a question word in any case form ("kihez", to whom) is no
query word. Keyword search already met such forms by a prefix term; index terms compared
whole (what the context lacks, D1 and A10; what a search adds, D8) did not.
A neutral test domain (a car park, an office); no example domain's words.
"""

from __future__ import annotations

import pytest

from toolweave.tools import text as kit
from toolweave.tools.search import text as search_text
from toolweave.tools.search.novelty import Known

VERB_FORMS = [
    ("parkolhatok", "parkoljon"),  # potential, question; imperative, page
    ("parkolhatok", "parkolás"),  # the noun a page's title gives the doing
    ("fordulhatok", "forduljon"),
    ("jelentkezhetek", "jelentkezni"),  # the infinitive
    ("fizethetek", "fizetés"),
    ("foglalhatok", "foglalásért"),  # the noun with a case ending
]


@pytest.mark.parametrize(("asked", "written"), VERB_FORMS)
def test_D9_hungarian_verb_forms_share_an_index_term(asked: str, written: str) -> None:
    shared = set(search_text.word_terms(asked)) & set(search_text.word_terms(written))
    assert shared
    assert set(search_text.word_terms(asked, "hu")) & set(search_text.word_terms(written, "hu"))


@pytest.mark.parametrize(
    "word",
    [
        "lehet",  # "le" would be no verb: too short under the potential
        "mehet",
        "olaj",  # a noun ending in a vowel and "j"
        "fej",
        "asztalon",  # an "-n" that is no infinitive
        "kert",
    ],
)
def test_D9_a_word_with_no_verb_mark_or_too_short_a_verb_under_it_adds_no_term(word: str) -> None:
    assert kit.hungarian_base(word) == ""


def test_D9_the_verb_rule_is_hungarian_only_when_the_language_is_known() -> None:
    assert "parkol" in search_text.word_terms("parkolhatok", "hu")
    assert "parkol" not in search_text.word_terms("parkolhatok", "en")
    assert "parkol" not in search_text.word_terms("parkolhatok", "pl")


def test_D1_a_context_that_says_the_asked_verb_in_another_form_lacks_no_word() -> None:
    known = Known.of([], ["Panasszal forduljon az ügyfélszolgálat vezetőjéhez."])
    # "kihez" (to whom) is a question word in a case form: never a word the context lacks
    assert known.lacking("Kihez fordulhatok panasszal?") == []
