"""The offline model's follow-up rules: a follow-up made a standalone question (A1, T10)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType

from langchain_core.messages import BaseMessage, HumanMessage

from toolweave.llm.lexical import (
    FOLLOWUP_OPENERS,
    GREETINGS,
    QUESTION_CONJUNCTIONS,
    QUESTION_WORDS,
    content_words,
    detect_language,
    fold,
    is_generic,
    is_stopword,
    matches,
    weekday,
    words,
)
from toolweave.llm.next_message import (
    choice_number,
    correction,
    is_cancel,
    next_message_kind,
    picks_by_ordinal,
)
from toolweave.llm.offline_reading import FIGURE_VERBS
from toolweave.llm.port import Normalized
from toolweave.tools import text as kit


def _strip_opener(message: str) -> tuple[str, bool]:
    """The message without a follow-up opener ("and", "what about", "és", …)."""
    stripped = message.strip()
    folded = fold(stripped)
    for opener in FOLLOWUP_OPENERS:
        key = fold(opener)
        if folded == key or folded.startswith(key + " ") or folded.startswith(key + ","):
            return stripped[len(key) :].lstrip(" ,"), True
    first, _, rest = stripped.partition(" ")
    then = words(rest)[:1]
    asks = bool(then) and then[0] in QUESTION_WORDS
    if fold(first) in QUESTION_CONJUNCTIONS and asks and not content_words(rest):
        return rest, True  # "A gdzie to jest?" ("A gdzie jest parking?" stands alone)
    return stripped, False


def _replace_word(text: str, old: str, new: str) -> str:
    pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.IGNORECASE)
    return pattern.sub(lambda m: new.capitalize() if m.group()[0].isupper() else new, text, 1)


def _is_subject(word: str) -> bool:
    """A word that can be what a question is about (not a function, question or day word)."""
    return (
        not is_stopword(word)
        and word.casefold() not in QUESTION_WORDS
        and weekday(word) is None
        and not word.isdigit()
    )


POINTING_WORDS = frozenset([
    "it", "its", "they", "their", "them", "there", "that", "this", "those", "these", "he", "she",
    "his", "her", "him", "ott", "oda", "onnan", "annak", "ennek", "erre", "arra", "ezt", "azt",
    "ők", "neki", "nála", "előtte", "utána", "tam", "tego", "tym", "jego", "jej", "nim", "niej",
    "niego",
])  # fmt: skip
"""Words of a follow-up that point back at the earlier question's subject."""
MAX_FRAGMENT_TOKENS = 4
"""The most words a follow-up without an opener has ("On Friday?", "Cardiology, please."):
a longer message of few content words is a sentence of its own ("I would like to book a
room."), never the earlier question with a word added (A1, S5: a tool that acted on the
earlier question would act on it again)."""
_SAME_WORD = MappingProxyType({"az": "a", "an": "a"})
"""Function words that are one word in two spellings (the article before a vowel)."""


def _function_word(token: str | None) -> str | None:
    if token is None or not is_stopword(token):
        return None
    return _SAME_WORD.get(token.casefold(), token.casefold())


def _neighbours(tokens: list[str], at: int) -> tuple[str | None, str | None]:
    """The function words right before and after ``tokens[at]`` (``None`` where there is none)."""
    before = _function_word(tokens[at - 1] if at > 0 else None)
    return before, _function_word(tokens[at + 1] if at + 1 < len(tokens) else None)


def _counterpart(text: str, new: str, body: list[str]) -> str | None:
    """The word of ``text`` that ``new`` takes the place of: a day, number, ending or neighbour."""
    candidates = content_words(text)
    day = weekday(new)
    if day is not None:
        return next((w for w in candidates if weekday(w) is not None), None)
    if new.isdigit():
        return next((w for w in candidates if w.isdigit()), None)
    rhyme = next((w for w in candidates if _same_ending(w, new) and weekday(w) is None), None)
    if rhyme is not None:
        return rhyme
    at = next((i for i, t in enumerate(body) if t.casefold() == new.casefold()), None)
    return None if at is None else _in_same_place(text, body, at)


def _same_ending(word: str, new: str) -> bool:
    """``word`` and ``new`` end in the same four letters or more (``-ology``, ``-ológián``)."""
    a, b = fold(word), fold(new)
    return min(len(a), len(b)) >= 4 and a[-4:] == b[-4:]


def _in_same_place(text: str, body: list[str], at: int) -> str | None:
    """The subject word of ``text`` beside the function word ``body[at]`` has, or its name.

    A word capitalised after the first is a name: it takes the place of the earlier
    question's name first ("E o Plus?" after "Quanto custa o plano Max?" asks about the Plus
    plan, not "o Plus Max"), then of the word beside the same function word.
    """
    before, after = _neighbours(body, at)
    tokens: list[str] = kit.TOKEN.findall(text)
    name = next((t for t in tokens[1:] if _is_subject(t) and t[:1].isupper()), None)
    if at > 0 and body[at][:1].isupper() and name is not None:
        return name
    for i, token in enumerate(tokens):
        if not _is_subject(token):
            continue
        left, right = _neighbours(tokens, i)
        if (before is not None and left == before) or (after is not None and right == after):
            return token
    if body[at][:1].isupper() and not _points_next(body, at):  # a name takes a name's place
        return name
    return None


def _phrase(tokens: Sequence[str], start: int) -> tuple[int, int] | None:
    """``tokens[start:end]``: a function word, then function words or numbers, then a subject."""
    for end in range(start + 1, len(tokens)):
        token = tokens[end]
        if _is_subject(token) and weekday(token) is None:
            return start, end + 1
        if not (is_stopword(token) or token.isdigit()):
            return None
    return None


def _same_opening_phrase(previous: str, tokens: list[str]) -> str:
    """``previous`` with the phrase a follow-up opens with in the place of the one it matches.

    "for a week" after "How much is a compact car for 3 days?" takes the place of "for 3
    days" (the phrase the same function word opens), not of "compact" (A1).
    """
    if not tokens or not is_stopword(tokens[0]):
        return previous
    new = _phrase(tokens, 0)
    earlier: list[str] = kit.TOKEN.findall(previous)
    at = next((i for i, t in enumerate(earlier) if t.casefold() == tokens[0].casefold()), None)
    old = None if new is None or at is None else _phrase(earlier, at)
    if new is None or old is None:
        return previous
    pattern = r"\W+".join(re.escape(t) for t in earlier[old[0] : old[1]])
    replacement = " ".join(tokens[new[0] : new[1]])
    return re.sub(pattern, lambda _: replacement, previous, count=1)


def _points_next(tokens: list[str], at: int) -> bool:
    """Whether a pointing word follows ``tokens[at]``: "Make it Friday", "Move them" (A1).

    A word before "it" acts on what was asked: a verb capitalised as a sentence's first
    word, never a name that takes the place of one in the earlier question.
    """
    return at + 1 < len(tokens) and tokens[at + 1].casefold() in POINTING_WORDS


def _add_day(text: str, phrase: str) -> str:
    """``text`` with ``phrase`` (``"on Friday"``, ``"pénteken"``) put before its final mark."""
    stripped = text.rstrip()
    mark = stripped[-1] if stripped and stripped[-1] in "?.!" else ""
    return f"{stripped.removesuffix(mark).rstrip()} {phrase}{mark}"


def resolve_followup(message: str, previous: str | None) -> str:
    """Turn a follow-up into a standalone question using the previous question (A1)."""
    return _resolve(message, previous)[0]


def _resolve(message: str, previous: str | None) -> tuple[str, bool]:
    """:func:`resolve_followup`, and whether complete: nothing appended, nothing pointing back."""
    if previous is None or picks_by_ordinal(message):  # a pick of no offered choice (S5)
        return message, True
    body, opened = _strip_opener(message)
    new = content_words(body)
    asks = any(w in QUESTION_WORDS for w in words(body))
    tokens: list[str] = kit.TOKEN.findall(body)
    pointing = any(t.casefold() in POINTING_WORDS for t in tokens)
    fragment = len(new) <= 2 and not asks and len(tokens) <= MAX_FRAGMENT_TOKENS
    if not (opened or fragment) or not new:
        if opened and not new and asks:  # "and where is it?", "és hol van?"
            return _asked_about(message, previous), False
        return (message, not pointing) if new or not opened else (previous, True)
    if asks and len(new) >= 2 and not pointing:
        return body, True  # its own question, pointing back at nothing: it stands alone
    result, extra = _merged(previous, tokens, new)
    if extra and pointing:
        return _asked_about(message, result), False
    return (f"{result.rstrip()} {' '.join(extra)}", False) if extra else (result, True)


def _merged(previous: str, tokens: list[str], new: list[str]) -> tuple[str, list[str]]:
    """``previous`` with a follow-up's new words put in, and those that found no place (A1).

    A new word takes the place of its counterpart, a day is added; the rest are returned.
    """
    surface = {w.casefold(): w for w in tokens}
    result, extra = _same_opening_phrase(previous, tokens), []
    for word in new:
        if any(matches(word, old) for old in content_words(result)):
            continue
        written = surface.get(word, word)
        old = _counterpart(result, word, tokens)
        if old is not None:
            result = _replace_word(result, old, written)
        elif weekday(word) is not None:
            at = next(i for i, t in enumerate(tokens) if t.casefold() == word)
            before, _ = _neighbours(tokens, at)
            pointing_before = before is not None and before in POINTING_WORDS
            phrase = f"{tokens[at - 1]} {written}" if before and not pointing_before else written
            result = _add_day(result, phrase)
        else:
            extra.append(written)
    return result, extra


def _asked_about(message: str, previous: str) -> str:
    """``message`` as asked, then the subject of ``previous`` its pointing word stands for (A1).

    "Do I need to fast before it?" after "When is blood taken in the lab?" asks something new
    about the earlier subject: "Do I need to fast before it? (blood taken lab)". The earlier
    question put first with the new words after it was answered as the earlier question.
    """
    said = content_words(message)
    subject = [
        token
        for token in kit.TOKEN.findall(previous)
        if _is_subject(token)
        and fold(token) not in FIGURE_VERBS  # how it is asked ("kosztuje"), not about what
        and not is_generic(token)
        and not any(matches(token.casefold(), w) for w in said)
    ]
    return f"{message.strip()} ({' '.join(dict.fromkeys(subject))})" if subject else message


def _previous_question(message: str, history: Sequence[BaseMessage]) -> str | None:
    """The earlier question ``message`` follows (``history`` may end with it), resolved (A1).

    A message that answered a question asked back (Q2) is read as the graph read it: a
    pick puts the chosen text into the earlier question ("1" is the first choice, not a
    number), a correction puts in what it corrects, a cancel leaves the question as it was.
    """
    said = list(history)
    if said and isinstance(said[-1], HumanMessage) and said[-1].text.strip() == message.strip():
        said.pop()
    previous: str | None = None
    open_question: tuple[str, list[str]] | None = None
    for each in said:
        asked = each.additional_kwargs.get(CLARIFICATION_KEY)
        if isinstance(each, HumanMessage):
            previous = _followed(each.text, previous, open_question)
        open_question = (each.text, list(asked.get("choices") or [])) if asked else None
    return previous


CLARIFICATION_KEY = "toolweave_clarification"
"""Where a question asked back keeps who asked and the choices in its AI message (Q1, Q8)."""


def _followed(text: str, previous: str | None, asked: tuple[str, list[str]] | None) -> str:
    """``previous`` after the person's message ``text``, which answered ``asked`` if given."""
    if asked is None or previous is None:
        return resolve_followup(text, previous)
    question, choices = asked
    match next_message_kind(text, question, choices):
        case "cancel":
            return previous
        case "new_question":
            return resolve_followup(text, previous)
        case "amended":
            return _put_in(previous, correction(text) or text)
        case _:
            picked = choice_number(text, choices)
            return _put_in(previous, text if picked is None else choices[picked - 1])


def _put_in(previous: str, said: str) -> str:
    """``previous`` with the words of a reply put in: in place of their counterparts, or after."""
    result, extra = _merged(previous, kit.TOKEN.findall(said), content_words(said))
    return f"{result.rstrip()} {' '.join(extra)}" if extra else result


def borrows_from_earlier(message: str, history: Sequence[BaseMessage]) -> bool:
    """Whether the rules make ``message`` a follow-up that takes words of an earlier question.

    "and an SUV?" after "Please reserve a compact car ..." is that question again with
    "SUV": the act ("reserve") is the earlier question's word, not the person's (A1, A9).
    """
    previous = _previous_question(message, history)
    return previous is not None and resolve_followup(message, previous) != message


def resolved_by_rules(message: str, history: Sequence[BaseMessage]) -> bool:
    """Whether the offline rules resolve ``message`` completely: they beat a small model there."""
    return _resolve(message, _previous_question(message, history))[1]


def normalize_offline(
    message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
) -> Normalized:
    """Normalization without a model: language by the detector, follow-ups by rules (A1, T10)."""
    cancel = is_cancel(message)  # "never mind" alone follows up nothing: it asks nothing
    previous = None if cancel else _previous_question(message, history)
    question = resolve_followup(message, previous)
    lang = detect_language(message, default="")
    if not lang:
        lang = detect_language(previous or "", default=default_lang)
    important = [w for w in content_words(question) if w not in GREETINGS]
    greeting = any(w in GREETINGS for w in words(message))
    prompt_type = "smalltalk" if cancel or (greeting and not important) else "factual"
    return Normalized(
        question=question, user_lang=lang, important_words=tuple(important), prompt_type=prompt_type
    )
