"""Offline request extraction: fill a tool's request model from text without an LLM (T7).

A plain field named for a thing is left unfilled, so the tool declines or asks (T13).
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import types
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from toolweave.llm.lexical import (
    MIN_STEM,
    QUESTION_WORDS,
    content_words,
    fold,
    holds_run,
    matches,
    polish_forms,
    weekday,
    words,
    written_dates,
)
from toolweave.tools.json_schema import DATE_FORMATS
from toolweave.tools.language import WEEKDAYS_EN
from toolweave.tools.required import field_pattern

_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"(?<![\d-])\d+(?:[.,]\d+)?(?![\d-])")
_DAY_NAMES = ("day", "date", "nap", "datum", "dátum", "weekday", "when")
_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
OFFLINE_HINTS = ("cues", "after_cues", "max_words", "user_text")
"""``json_schema_extra`` keys read by this extraction only; left out of a model's schema."""
_FREE_TEXT_NAMES = ("text", "query", "question", "message", "prompt", "input", "param")
"""Words in a field's name or description that say it takes the user's text as written."""
_AFTER_CUE_WORDS = 3
"""Words an ``after_cues`` field takes when the writer does not capitalise."""


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The field's core type without ``None``, and whether it is a list."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else (annotation, False)
    if origin in (list, tuple, set, frozenset):
        inner = get_args(annotation)
        return (inner[0] if inner else str), True
    return annotation, False


def _choices(core: Any, info: FieldInfo) -> list[Any]:
    """Allowed or known values of a field: Literal/enum members, known values, examples."""
    found: list[Any] = []
    if get_origin(core) is Literal:
        found.extend(get_args(core))
    elif isinstance(core, type) and issubclass(core, enum.Enum):
        found.extend(core)
    known = _extra(info).get("known_values")
    if isinstance(known, list | tuple):
        found.extend(known)
    if field_pattern(info) is None:  # a set form's examples show the form, never a value
        found.extend(info.examples or [])
    return found


HINTS = ("known_values", "cues", "after_cues")
"""``json_schema_extra`` keys that say which words of a text concern a field."""


def hinted(extra: object) -> bool:
    """Whether a field's ``json_schema_extra`` declares :data:`HINTS` (a lookup or cue words)."""
    return isinstance(extra, dict) and any(extra.get(key) for key in HINTS)


def _extra(info: FieldInfo) -> dict[str, Any]:
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def _label(choice: Any) -> str:
    return str(choice.value) if isinstance(choice, enum.Enum) else str(choice)


def _wanted(choice: Any) -> list[str]:
    label = _label(choice)
    wanted = content_words(label) or words(label)
    if isinstance(choice, enum.Enum):
        wanted = wanted or words(choice.name.replace("_", " "))
    return wanted


NAME_ENDING = 2
"""Letters a name's word may change at its end when inflected."""


def written(name_word: str, text_word: str) -> bool:
    """Whether ``text_word`` writes ``name_word``: folded, the same or inflected at its end only.

    A Polish name's word in another case counts too ("Nowy" in "do Nowego", :func:`polish_forms`);
    a word with a digit counts only as written.
    """
    name, text = fold(name_word), fold(text_word)
    if any(c.isdigit() for c in name):
        return text == name  # a number is never inflected: 204519 does not write 204518
    if text.startswith(name) or polish_forms(name_word, text_word):
        return True
    kept = name[: max(MIN_STEM, len(name) - NAME_ENDING)]
    return len(kept) < len(name) and text.startswith(kept)


def written_whole(label: str, text_words: list[str]) -> bool:
    """Whether ``label``'s words stand in the text in full, in order, together."""
    return holds_run([fold(t) for t in text_words], [fold(w) for w in words(label)])


def _present(choice: Any, text_words: list[str]) -> bool:
    """Whether every word of ``choice`` is in the text (a member in any form, a name as written)."""
    wanted = _wanted(choice)
    if isinstance(choice, enum.Enum | bool):
        return bool(wanted) and all(any(matches(w, t) for t in text_words) for w in wanted)
    if not content_words(_label(choice)):
        return written_whole(_label(choice), text_words)
    return bool(wanted) and all(any(written(w, t) for t in text_words) for w in wanted)


def _mentioned(choices: list[Any], text_words: list[str]) -> list[Any]:
    """The found choices in order of mention; one whose words another's include is dropped."""
    kept: list[tuple[Any, frozenset[str]]] = []
    for choice in sorted(choices, key=lambda c: -len(_wanted(c))):
        own = frozenset(fold(w) for w in _wanted(choice))
        if not any(own <= other for _, other in kept):
            kept.append((choice, own))

    def first(item: tuple[Any, frozenset[str]]) -> int:
        wanted = _wanted(item[0])
        at = [i for i, t in enumerate(text_words) if any(matches(w, t) for w in wanted)]
        return min(at, default=len(text_words))

    return [choice for choice, _ in sorted(kept, key=first)]


def _after_cue(text: str, cues: list[Any], max_words: int) -> str | None:
    """The words right after the first cue word (a name after a title), or ``None``."""
    wanted = {fold(str(cue)).rstrip(".") for cue in cues}
    tokens = list(_TOKEN.finditer(text))
    for i, token in enumerate(tokens):
        if fold(token.group()) not in wanted:
            continue
        j = i + 2 if i + 1 < len(tokens) and tokens[i + 1].group() == "." else i + 1
        taken: list[re.Match[str]] = []
        while j < len(tokens) and len(taken) < max_words:
            word = tokens[j].group()
            if not word[0].isalnum() or content_words(word) == [] or fold(word) in wanted:
                break
            if taken and taken[0].group()[0].isupper() and not word[0].isupper():
                break
            taken.append(tokens[j])
            j += 1
        if taken:
            return text[taken[0].start() : taken[-1].end()]
    return None


CUED_NUMBER_WORDS = 4
"""Words after a number field's cue its number may come in ("segna 1234", "is now 1234")."""


def _cued_number(text: str, cues: Sequence[Any]) -> str | None:
    """The first number within :data:`CUED_NUMBER_WORDS` words after a cue word, or ``None``."""
    wanted = {fold(str(cue)).rstrip(".") for cue in cues}
    for token in _TOKEN.finditer(text):
        if fold(token.group()) in wanted:
            near = " ".join(text[token.end() :].split()[:CUED_NUMBER_WORDS])
            found = _NUMBER.search(_ISO_DATE.sub(" ", near))
            if found is not None:
                return found.group().replace(",", ".")
    return None


CUED_DATE_WORDS = 2
"""Words that may stand between a date field's cue and its date ("from the 12 March 2027")."""


def _date_value(info: FieldInfo, text: str, taken: set[str]) -> str | None:
    """A date field's date (T6): the one right after its cue, else the first not taken.

    Of two date fields (a rental's pick-up and return), the later one takes a date the
    earlier did not, and ``after_cues`` ("from", "to") say which is which.
    """
    dates = [(at, day.isoformat()) for at, day in written_dates(text)]
    cues = _extra(info).get("after_cues")
    wanted = {fold(str(cue)) for cue in cues} if isinstance(cues, list | tuple) else set()
    for token in _TOKEN.finditer(text):
        if fold(token.group()) not in wanted:
            continue
        for at, day in dates:
            if at >= token.end() and len(text[token.end() : at].split()) <= CUED_DATE_WORDS:
                return day
    return next((day for _, day in dates if day not in taken), None)


def _day_value(
    core: Any, text: str, text_words: list[str], info: FieldInfo, taken: set[str]
) -> Any:
    if core is dt.date:  # a date written out: "3 December 2026", "03.12.2026" (T6)
        return _date_value(info, text, taken)
    iso = _ISO_DATE.search(text)
    if iso:
        return iso.group()
    day = next((weekday(w) for w in text_words if weekday(w) is not None), None)
    return None if day is None else WEEKDAYS_EN[day].capitalize()


def _patterned(pattern: str, text: str) -> str | None:
    """The first word of ``text`` the field's ``pattern`` takes whole ("HS-204518"), or ``None``.

    The pattern's anchors are dropped to search the text; a value written in another letter
    case ("hs-204518") counts when its upper or lower case matches the pattern whole.
    """
    inner = pattern.removeprefix("^").removesuffix("$").removeprefix(r"\A").removesuffix(r"\Z")
    try:
        found = re.compile(rf"(?<![\w-])(?:{inner})(?![\w-])", re.IGNORECASE).finditer(text)
        whole = re.compile(pattern)
    except re.error:
        return None
    for match in found:
        for value in (match.group(), match.group().upper(), match.group().lower()):
            if whole.fullmatch(value):
                return value
    return None


def _pick(choices: list[Any], info: FieldInfo, text: str, taken: set[str]) -> Any:
    """One value of a closed set: the one after the field's cue, else the first named.

    Of two fields over the same values ("from" and "to" of one list of places), the
    later one takes a value the earlier did not; none when the text names no other.
    """
    cues = _extra(info).get("after_cues")
    if isinstance(cues, list | tuple) and cues:
        after = _after_cue(text, list(cues), MAX_NAME_WORDS)
        cued = [c for c in choices if after is not None and _present(c, words(after))]
        if cued:
            return cued[0]
    ordered = _mentioned(choices, words(text))
    return next((c for c in ordered if _label(c) not in taken), None)


def _field_value(
    name: str,
    info: FieldInfo,
    text: str,
    numbers: Iterator[str],
    only: bool = False,
    taken: set[str] | None = None,
) -> Any:
    core, is_list = _unwrap(info.annotation)
    text_words = words(text)
    choices = [c for c in _choices(core, info) if _present(c, text_words)]
    if core is bool:
        cues = _extra(info).get("cues")
        cued = isinstance(cues, list | tuple) and any(_present(c, text_words) for c in cues)
        return True if choices or cued else None
    if choices:
        if not is_list:
            choice = _pick(choices, info, text, set() if taken is None else taken)
            return choice.value if isinstance(choice, enum.Enum) else choice
        values = [
            c.value if isinstance(c, enum.Enum) else c for c in _mentioned(choices, text_words)
        ]
        return values
    pattern = field_pattern(info) if core is str and not is_list else None
    if pattern is not None:
        return _patterned(pattern, text)  # an identifier of a set form: as the text writes it
    cues = _extra(info).get("after_cues")
    if core is str and isinstance(cues, list | tuple) and cues:
        limit = _extra(info).get("max_words", _AFTER_CUE_WORDS)
        found = _after_cue(text, list(cues), limit if isinstance(limit, int) else _AFTER_CUE_WORDS)
        return [found] if is_list and found is not None else found
    if core in (int, float):  # the number after a cue ("segna 1234"), else the next one
        after = _cued_number(text, cues) if isinstance(cues, list | tuple) and cues else None
        number = after if after is not None else next(numbers, None)
        return [number] if is_list and number is not None else number
    named_day = any(part in fold(name) for part in _DAY_NAMES)
    if core is dt.date or (core is str and named_day):
        value = _day_value(core, text, text_words, info, set() if taken is None else taken)
        return [value] if is_list and value is not None else value
    plain = core is str and not is_list and not _choices(core, info) and not cues
    said = fold(f"{name} {info.description or ''}")
    free_text = only and any(part in said for part in _FREE_TEXT_NAMES)
    if plain and (free_text or _extra(info).get("user_text") is True):
        return text.strip() or None  # a free-text field that is the user's text
    return None


def extract_request(text: str, model: type[BaseModel]) -> dict[str, Any] | None:
    """Fill ``model``'s fields from ``text``, defaults elsewhere; ``None`` if invalid."""
    numbers = (m.group().replace(",", ".") for m in _NUMBER.finditer(_ISO_DATE.sub(" ", text)))
    values: dict[str, Any] = {}
    only = len(model.model_fields) == 1
    taken: set[str] = set()
    for name, info in model.model_fields.items():
        value = _field_value(name, info, text, numbers, only, taken)
        if isinstance(value, str | enum.Enum):
            taken.add(_label(value))
        if value is not None or info.is_required():
            values[info.alias or name] = value
    try:
        return model.model_validate(values).model_dump(mode="json")
    except ValidationError:
        return None


_MIN_DIGITS = 5
"""Digits a value needs to be matched by its digits alone (a phone number)."""
MAX_NAME_WORDS = 4
"""Most content words a value of a named thing (a field of known values) has."""
PLACEHOLDERS = frozenset(
    {"", "null", "none", "nil", "unknown", "undefined", "n/a", "na", "empty", "-", "?"}
)
"""Strings a model writes for "nothing": they mean ``None`` (T7)."""
_MONTHS = (
    ("jan",), ("feb",), ("mar",), ("apr",), ("may", "maj"), ("jun",), ("jul",), ("aug",),
    ("sep", "szep"), ("oct", "okt"), ("nov",), ("dec",),
)  # fmt: skip
"""Folded prefixes of the month names in English and Hungarian (a date's grounding)."""


def _date_grounded(value: str, text: str) -> bool:
    """An ISO date counts when the text gives its day and its month (number or name)."""
    _, month, day = (int(part) for part in value.split("-"))
    numbers = {int(n) for n in re.findall(r"\d+", text)}
    named = any(w.startswith(_MONTHS[month - 1]) for w in words(fold(text)))
    return day in numbers and (month in numbers or named)


def grounded(value: str, text: str, *, named_thing: bool = False) -> bool:
    """Whether an extracted ``value`` is written in ``text`` (T7).

    Every content word in some form, a number as a number, a phone in any spacing, an ISO date by
    its day and month; never a placeholder. A ``named_thing`` is no question and no long text.
    """
    folded = fold(value).strip()
    if folded in PLACEHOLDERS:
        return False
    if _ISO_DATE.fullmatch(value.strip()):
        return value.strip() in text or _date_grounded(value.strip(), text)
    digits = re.sub(r"\D", "", value)
    if len(digits) >= _MIN_DIGITS and digits in re.sub(r"\D", "", text):
        return True  # a phone or an id, written with other spaces or signs
    numbers = {int(n) for n in re.findall(r"\d+", text)}
    wanted = content_words(value)
    text_words = words(text)
    if not wanted:  # a name without a content word ("A&E") is there only as written
        return written_whole(value, text_words)
    found = (
        (w.isdigit() and (int(w) in numbers or int(w) == 0))
        or any(matches(w, t) for t in text_words)
        for w in wanted
    )
    if not all(found):
        return False
    question_like = "?" in value or any(w in QUESTION_WORDS for w in words(value))
    return not (named_thing and (question_like or len(wanted) > MAX_NAME_WORDS))


def ground_request(values: dict[str, Any] | None, model: type[BaseModel], text: str) -> Any:
    """``values`` with every text value that ``text`` does not hold made ``None`` (T7, C1)."""
    if not values:
        return values
    out = dict(values)
    for name, info in model.model_fields.items():
        key = info.alias or name
        value = out.get(key)
        core, is_list = _unwrap(info.annotation)
        if isinstance(value, str) and _is_closed_set(core):
            if weekday(value) is not None:
                out[key] = said_weekday(value, _choices(core, info), text)
            continue
        if value is None or core not in (str, dt.date):
            continue
        named = bool(_extra(info).get("known_values"))
        if _extra(info).get("format") in DATE_FORMATS and not _is_iso_date(value):
            out[key] = None  # "Sunday" in a date field: not a date (T7)
            continue
        if is_list and isinstance(value, list):
            out[key] = [
                v for v in value if not isinstance(v, str) or grounded(v, text, named_thing=named)
            ]
        elif isinstance(value, str) and not grounded(value, text, named_thing=named):
            out[key] = None
    return out


def said_weekday(value: str, members: list[Any], text: str) -> Any:
    """A weekday ``value`` of a closed set as ``text`` says it (T7); any other value as it is.

    When the text names other weekdays and not this one, the model misread it: the one
    member the text names, or ``None`` (``"sunday"`` for "hétfőn" is ``"monday"``).
    """
    day = weekday(value)
    said = {weekday(w) for w in words(text)} - {None}
    if day is None or not said or day in said:
        return value
    named = [m for m in members if isinstance(m, str) and weekday(m) in said]
    return named[0] if len(said) == 1 and len(named) == 1 else None


def states_input(values: dict[str, Any] | None, model: type[BaseModel], text: str) -> bool:
    """Whether a grounded request states a text or number input of its tool as ``text`` does."""
    numbers = {float(n.replace(",", ".")) for n in _NUMBER.findall(text)}
    for name, info in model.model_fields.items():
        value = (values or {}).get(info.alias or name)
        core, _ = _unwrap(info.annotation)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item is None or item == "" or isinstance(item, bool | enum.Enum):
                continue
            if isinstance(item, int | float):
                if core in (int, float) and float(item) in numbers:
                    return True
                continue
            if _is_closed_set(core):
                continue
            known = _extra(info).get("known_values")
            if not isinstance(known, list | tuple) or any(
                _present(k, words(str(item))) for k in known
            ):
                return True
    return False


def _is_closed_set(annotation: Any) -> bool:
    """Whether ``annotation`` is a closed set of members (a ``Literal`` or an enum)."""
    return get_origin(annotation) is Literal or (
        isinstance(annotation, type) and issubclass(annotation, enum.Enum)
    )


def _is_iso_date(value: object) -> bool:
    """Whether ``value`` is an ISO date (or a date-time starting with one), or a list of them."""
    if isinstance(value, list):
        return all(_is_iso_date(v) for v in value)
    return isinstance(value, str) and bool(_ISO_DATE.fullmatch(value.strip()[:10]))


INVENTED_INPUT = "its input is not in the question: the model made it up (T7)"
"""Why a routed tool whose whole request the model made up does not run."""


def invented_required(filled: dict[str, Any] | None, kept: dict[str, Any] | None) -> bool:
    """Whether the model filled a request of which grounding kept nothing: all made up."""
    given = [v for v in (filled or {}).values() if v not in (None, [], "")]
    left = [v for v in (kept or {}).values() if v not in (None, [], "")]
    return bool(given) and not left
