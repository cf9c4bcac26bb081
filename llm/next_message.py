"""The next message while a clarification waits: reply, amended request, new question, cancel."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from toolweave.llm.lexical import QUESTION_OPENERS, content_words
from toolweave.tools.text import GREETINGS_EN, GREETINGS_HU, GREETINGS_PL, TOKEN, fold, words

NextMessageKind = Literal["reply", "amended", "new_question", "cancel"]
"""What the message does to the open question (Q2, Q8)."""

CANCEL_PHRASES = frozenset(
    fold(phrase)
    for phrase in (
        "never mind", "nevermind", "forget it", "cancel", "skip it", "skip", "no thanks",
        "stop", "mindegy", "hagyjuk", "felejtsd el", "mégsem", "nem kell", "nieważne",
        "nie ważne", "anuluj", "zapomnij", "nie trzeba", "pomiń", "laissez tomber",
        "laisse tomber", "peu importe", "tant pis", "annuler", "annulez", "oubliez",
        "oubliez ça", "non merci", "pas la peine",
    )
)  # fmt: skip
"""Whole messages that drop the question, in each language the text kit knows, and French."""

POLITE = frozenset(
    fold(w)
    for w in (*GREETINGS_EN, *GREETINGS_HU, *GREETINGS_PL, "please", "you", "ok", "okay",
              "kérem", "proszę", "merci", "svp", "s", "il", "vous", "plaît", "bonjour")
)  # fmt: skip
"""Words a cancel may carry besides its phrase ("never mind, thanks", "nieważne, dzięki")."""

CORRECTION_PHRASES = tuple(
    tuple(fold(phrase).split())
    for phrase in (
        "i meant", "i mean", "what i meant", "i wanted to ask", "correction", "úgy értem",
        "gondoltam", "mármint", "akartam kérdezni", "chodziło mi", "chodzi mi o",
        "miałem na myśli", "miałam na myśli", "chciałem zapytać", "chciałam zapytać",
        "poprawka", "instead", "inkább", "zamiast", "en fait je voulais dire",
        "en fait je veux dire", "je voulais dire", "je veux dire", "je voulais demander",
        "en fait", "au lieu de",
    )
)  # fmt: skip
"""Words that correct the request wherever they stand ("Sorry, I meant…", "…-ra gondoltam")."""

CORRECTION_OPENERS = frozenset(
    fold(w) for w in ("actually", "rather", "valójában", "helyesebben", "pontosabban",
                      "właściwie", "raczej", "plutôt", "finalement")
)  # fmt: skip
"""Words that correct the request when the message opens with them ("Actually, …")."""

LEAD_INS = frozenset(
    fold(w) for w in (*POLITE, "sorry", "no", "oh", "oops", "nem", "bocsánat", "elnézést",
                      "pardon", "jaj", "nie", "przepraszam", "sorki", "désolé", "désolée",
                      "non", "oups")
)  # fmt: skip
"""Words a correction may open with before its marker ("No, sorry, I meant…")."""

MAX_EXTRA_WORDS = 1
"""Other words a correction naming an offered choice may hold and still answer; more amend."""
MIN_QUESTION_WORDS = 4
"""A new question has at least this many words; a short reply ("the Central one?") is a reply."""


def is_cancel(message: str) -> bool:
    """The message is a cancel phrase alone (polite words aside)."""
    said = [w for w in (fold(w) for w in words(message)) if w not in POLITE]
    return " ".join(said) in CANCEL_PHRASES


def _folded_words(texts: Sequence[str]) -> set[str]:
    return {fold(w) for text in texts for w in content_words(text)}


LAST = -1
"""The number :data:`ORDINALS` gives "last": the last offered choice."""
_PL_ENDINGS = ("y", "a", "e", "ą", "ego", "ej", "ym", "emu", "i", "ia", "ie", "ią", "iego",
               "iej", "im", "iemu")  # fmt: skip
ORDINALS: dict[str, tuple[dict[int, str], tuple[str, ...]]] = {
    "en": (
        {1: "first 1st", 2: "second 2nd", 3: "third 3rd", 4: "fourth 4th", 5: "fifth 5th",
         6: "sixth 6th", 7: "seventh 7th", 8: "eighth 8th", 9: "ninth 9th",
         10: "tenth 10th", LAST: "last"},
        ("",),
    ),
    "hu": (
        {1: "első", 2: "második", 3: "harmadik", 4: "negyedik", 5: "ötödik", 6: "hatodik",
         7: "hetedik", 8: "nyolcadik", 9: "kilencedik", 10: "tizedik", LAST: "utolsó"},
        ("", "t", "at", "et", "ra", "re"),  # a második, a másodikat, a másodikra
    ),
    "pl": (
        {1: "pierwsz", 2: "drug", 3: "trzec", 4: "czwart", 5: "piąt", 6: "szóst", 7: "siódm",
         8: "ósm", 9: "dziewiąt", 10: "dziesiąt", LAST: "ostatn"},
        _PL_ENDINGS,  # stems: drugi, druga, drugą, drugiego; ostatni, ostatnią ...
    ),
    "fr": (
        {1: "premier première", 2: "deuxième second seconde", 3: "troisième",
         4: "quatrième", 5: "cinquième", 6: "sixième", 7: "septième", 8: "huitième",
         9: "neuvième", 10: "dixième", LAST: "dernier dernière"},
        ("",),  # le deuxième, la dernière
    ),
}  # fmt: skip
"""Each language's ordinal words by the number they pick (:data:`LAST`), and their endings."""

ORDINAL_WORDS: dict[str, int] = {
    fold(form + ending): number
    for by_number, endings in ORDINALS.values()
    for number, forms in by_number.items()
    for form in forms.split()
    for ending in endings
}
"""Every form of :data:`ORDINALS`, folded, with its number."""

CHOICE_FILLERS = frozenset(
    fold(w)
    for w in (*POLITE, "the", "one", "option", "choice", "number", "no", "nr", "i", "ll", "d",
              "s", "it", "is", "that", "take", "want", "like", "would", "pick", "choose", "go",
              "with", "yes", "let", "me", "have", "a", "az", "azt", "ezt", "legyen",
              "kérem", "kérném", "kérek", "szeretném", "választom", "opció", "opciót",
              "lehetőség", "lehetőséget", "szám", "számú", "igen", "akkor", "ten", "ta", "to",
              "tę", "tą", "tego", "opcja", "opcję", "opcji", "numer", "poproszę", "wybieram",
              "biorę", "wezmę", "chcę", "tak", "niech", "będzie", "le", "la", "l", "celui",
              "celle", "ci", "là", "je", "prends", "choisis", "veux", "voudrais", "numéro",
              "oui", "alors")
)  # fmt: skip
"""Words a pick may carry besides its number or ordinal, in each language the text kit knows
and French."""

_NUMBERED = re.compile(r"(\d+)(?:st|nd|rd|th)?")


def _picked(word: str) -> int | None:
    """The number a folded word picks: a numeral ("2", "2nd") or an ordinal; else ``None``."""
    numbered = _NUMBERED.fullmatch(word)
    return int(numbered.group(1)) if numbered else ORDINAL_WORDS.get(word)


def choice_number(message: str, choices: Sequence[str]) -> int | None:
    """The offered choice a message picks by its number or ordinal alone (1-based), or ``None``.

    Examples:
        >>> choice_number("az utolsót kérem", ["Mon", "Tue", "Wed"])
        3
        >>> choice_number("second floor", ["Mon", "Tue"]) is None
        True
    """
    said = [fold(word) for word in words(message)]
    picked = [number for word in said if (number := _picked(word)) is not None]
    rest = [word for word in said if _picked(word) is None]
    if len(picked) != 1 or any(word not in CHOICE_FILLERS for word in rest):
        return None
    number = len(choices) if picked[0] == LAST else picked[0]
    return number if 1 <= number <= len(choices) else None


def picks_by_ordinal(message: str) -> bool:
    """Whether a message is an ordinal pick alone ("the second one", "az utolsót"), no digit.

    With no choices offered it points at none: it is no follow-up of an earlier question
    (A1), whose tool would run again on the earlier question with the pick added.
    """
    if any(word.isdigit() for word in words(message)):
        return False  # "2" may take the place of an earlier number ("floor 3" -> "floor 2")
    return choice_number(message, [""] * MAX_PICK) is not None


MAX_PICK = 99
"""The largest place :func:`picks_by_ordinal` reads a pick of."""


def names_what_was_asked(message: str, question: str, choices: Sequence[str]) -> bool:
    """The message holds a word of the open question or of an offered choice, or its number."""
    if choice_number(message, choices) is not None:
        return True
    return bool(_folded_words([message]) & _folded_words([question, *choices]))


def _marker(folded: Sequence[str], start: int) -> tuple[int, int] | None:
    """Where a correction marker stands in the folded words (from, to), if one does."""
    for at in range(len(folded)):
        for phrase in CORRECTION_PHRASES:
            if tuple(folded[at : at + len(phrase)]) == phrase:
                return at, at + len(phrase)
    if start < len(folded) and folded[start] in CORRECTION_OPENERS:
        return start, start + 1
    return None


def correction(message: str) -> str | None:
    """What a correcting message asks instead, its lead-in and marker dropped; else ``None``."""
    tokens = list(TOKEN.finditer(message))
    folded = [fold(t.group()) for t in tokens]
    start = next((i for i, w in enumerate(folded) if w not in LEAD_INS), len(folded))
    found = _marker(folded, start)
    if found is None:
        return None
    dropped = [*tokens[:start], *tokens[found[0] : found[1]]]
    body, end = [], 0
    for token in dropped:
        body.append(message[end : token.start()])
        end = token.end()
    text = " ".join("".join([*body, message[end:]]).split())
    return re.sub(r"\s+([.,;:?!])", r"\1", text).strip(" ,;:-–—")


def answers_the_question(body: str, question: str, choices: Sequence[str]) -> bool:
    """A correction that only picks an offered choice ("I meant Riverside"): a reply after all."""
    if choice_number(body, choices) is not None:
        return True
    said = _folded_words([body])
    if not said & _folded_words(choices):
        return False
    return len(said - _folded_words([question, *choices])) <= MAX_EXTRA_WORDS


def asks_a_question(message: str) -> bool:
    """The message is a question of its own: a question mark or a question word, several words."""
    found = words(message)
    if len(found) < MIN_QUESTION_WORDS:
        return False
    return message.rstrip().endswith("?") or fold(found[0]) in QUESTION_OPENERS


def next_message_kind(message: str, question: str, choices: Sequence[str]) -> NextMessageKind:
    """What ``message`` does to the open ``question`` (with its offered ``choices``).

    A correction asking more than an offered choice amends the request; a message naming what was
    asked is a reply; a question of its own is a new question; anything else is a reply.

    Examples:
        >>> next_message_kind("Central", "Which branch?", ["Central", "Riverside"])
        'reply'
        >>> next_message_kind("Sorry, I meant the closing time on Sunday.", "Which branch?", [])
        'amended'
        >>> next_message_kind("How much is the annual membership?", "Which branch?", [])
        'new_question'
        >>> next_message_kind("Never mind, thanks.", "Which branch?", [])
        'cancel'
    """
    if is_cancel(message):
        return "cancel"
    body = correction(message)
    if body and not answers_the_question(body, question, choices):
        return "amended"
    if names_what_was_asked(message, question, choices) and not asks_more(
        message, question, choices
    ):
        return "reply"
    return "new_question" if asks_a_question(message) else "reply"


def asks_more(message: str, question: str, choices: Sequence[str]) -> bool:
    """A question of its own that says more than the open question and its choices (Q2).

    "How much does the Max cost?" or "What does Max include?" while "Which plan?" waits asks
    about a choice, it does not pick it: a tool that acts must not act on it (A9, S5). A
    pick by number or ordinal, and a question made only of the choice and the question's
    own words ("The Central one?"), still reply.
    """
    if not asks_a_question(message) or choice_number(message, choices) is not None:
        return False
    return bool(_folded_words([message]) - _folded_words([question, *choices]))
