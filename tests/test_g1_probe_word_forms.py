"""G1 with A7 and D1: word forms any question of a language may use (issue 36, the probe).

Questions written fresh from the example domains' documents (``bench/data/probe_offline.jsonl``)
missed where a word was typed without its stroked letter ("rozlacza"), a stop word without its
accents ("sie"), a Hungarian infinitive took its linking vowel ("kiváltani" for a page's
"kiválthatja"), a Polish form of a generic verb was read as a subject ("robi" of "robić"), and
"mennyi ideig" (how long) was read as asking about "ideig". Each rule is checked in a neutral
domain (a sports club), beside the case it must still refuse.
"""

from __future__ import annotations

from tests.test_answer_coverage_rules import _answer, _doc
from toolweave.evaluation import says_no_information
from toolweave.llm.lexical import content_words, is_generic, matches
from toolweave.tools import text as kit

CLUB_PL = [
    _doc("Przystań", 1, "Łódki wypożycza się na przystani od 10:00 do 18:00."),
    _doc("Basen", 1, "Basen jest otwarty od 6:00 do 22:00."),
    _doc("Siłownia", 1, "Siłownia ma 40 stanowisk."),
]


def test_A7_a_word_typed_without_its_stroked_letter_is_the_same_word() -> None:
    assert kit.fold("Łódka") == "lodka"
    assert matches("lodki", "łódki")
    assert matches("rozlacza", "rozłącza")
    # the boat hire's page answers a question typed without Polish letters
    assert "10:00 do 18:00" in _answer("od ktorej godziny wypozycza sie lodki?", CLUB_PL, "pl")
    # another word is still another word
    assert not matches("lodki", "ladki")
    assert says_no_information(_answer("ile kosztuje rower?", CLUB_PL, "pl"))


def test_A7_a_stop_word_typed_without_its_accents_is_no_key_word() -> None:
    assert content_words("gdzie sie zapisac na basen") == ["zapisac", "basen"]
    assert content_words("hany oras a torna") == ["oras", "torna"]
    # written with its accents, a word is read as written: "oras" is no stop word's form
    assert "órás" in content_words("hány órás a torna")


def test_A7_a_hungarian_infinitive_with_its_linking_vowel_is_the_verb() -> None:
    assert kit.hungarian_base("küldeni") == "kuld"
    assert kit.hungarian_base("kiváltani") == "kivalt"
    assert matches("kiváltani", "kiválthatja")
    assert matches("küldeni", "küldhetik")
    # a vowel after one consonant is the verb's own: "várni" is "vár", not "vr"
    assert kit.hungarian_base("várni") == "var"
    assert kit.hungarian_base("kérni") == "ker"
    # different verbs stay apart
    assert not matches("kiváltani", "kivárni")


def test_A7_a_polish_form_of_a_generic_verb_is_generic() -> None:
    assert is_generic("robić")
    assert is_generic("robi")
    assert is_generic("zrobi")
    # a noun with the same letters at its start is no form of the verb
    assert not is_generic("robot")
    assert not is_generic("basen")


CLUB_HU = [
    _doc("Edzés", 1, "Egy edzés általában 90 percig tart."),
    _doc("Uszoda", 1, "Az uszoda edzés idején is nyitva tart."),
    _doc("Terem", 1, "A terem edzés után zárva tart."),
]


def test_A7_mennyi_ideig_asks_how_long_not_about_a_time_word() -> None:
    # "ideig" is the "long" of "how long": no page needs to say it, and the rest of the
    # question ("tart", "edzés") is on every page, so no word of it tells the pages apart
    assert "90 percig" in _answer("Mennyi ideig tart egy edzés?", CLUB_HU, "hu")
    # a subject no page names is still missed
    assert says_no_information(_answer("Mennyi ideig tart egy verseny?", CLUB_HU, "hu"))


CLUB_LEAVE = [
    _doc("Urlop trenera", 1, "Za udział w zawodach przysługują 3 dni wolne od zajęć."),
    _doc("Basen", 1, "Basen jest otwarty od 6:00 do 22:00."),
    _doc("Siłownia", 1, "Siłownia ma 40 stanowisk."),
]


def test_A7_a_month_says_when_and_an_indefinite_pronoun_nothing() -> None:
    assert "jakieś" not in content_words("czy dostanę jakieś wolne")
    # "w lipcu" (in July) says when, as "tomorrow" does: the page need not name July
    question = "Jadę na zawody w lipcu, czy dostanę jakieś wolne?"
    assert "3 dni wolne" in _answer(question, CLUB_LEAVE, "pl")
    # what the question is about still has to be on the page
    assert says_no_information(
        _answer("Jadę na obóz w lipcu, czy dostanę jakieś wolne?", CLUB_LEAVE, "pl")
    )


CLUB_EN = [
    _doc(
        "Pool", 1, "Glass bottles are not allowed in the pool area because of the risk of injury."
    ),
    _doc("Gym", 1, "Members may use the gym from 6:00."),
    _doc("Sauna", 1, "Members must shower before the sauna."),
]


def test_A7_a_word_most_pages_hold_is_not_missed_by_the_sentence() -> None:
    # "members" is on most pages: it tells no sentence apart, so the pool's rule answers
    # though it does not say it ("carry" is said by no page: it does not stop the answer)
    answer = _answer("Could I carry glass bottles for members?", CLUB_EN)
    assert "Glass bottles are not allowed" in answer
    # the common word alone answers nothing: "wine" is not on the pool's page
    assert says_no_information(_answer("Could I carry wine for members?", CLUB_EN))
