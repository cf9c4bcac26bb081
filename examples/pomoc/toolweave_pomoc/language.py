"""The user's language for the helpdesk's own texts: Polish unless the question is English.

The library's language detector tells Hungarian from English (T10); a Polish
question is often read as English ("do", "to", "a" are English words too). The
helpdesk's tools write Polish unless the library said English *and* the question
has neither a Polish letter nor a Polish question word.
"""

from __future__ import annotations

from toolweave import ToolCallContext, words

POLISH_LETTERS = frozenset("ąćęłńóśźż")
"""Letters only Polish writes."""

POLISH_WORDS = frozenset(
    {"jak", "jaki", "jaka", "jakie", "czy", "ile", "kto", "gdzie", "kiedy", "się", "nie"}
    | {"mi", "mam", "jest", "dla", "od", "po", "przez", "który", "która", "które", "pod"}
    | {"numer", "moje", "mój", "mnie", "trzeba", "można"}
)
"""Question and function words only Polish has (unfolded, lower case)."""


def language_of(text: str, detected: str) -> str:
    """``"en"`` for an English question, else ``"pl"``.

    Args:
        text: The user's text.
        detected: The library's reading (``ctx.user_lang``).
    """
    if detected != "en":
        return "pl"
    lowered = text.lower()
    if POLISH_LETTERS & set(lowered) or POLISH_WORDS & set(words(lowered)):
        return "pl"
    return "en"


def user_language(ctx: ToolCallContext) -> str:
    """The language the helpdesk's tools answer ``ctx``'s question in."""
    return language_of(ctx.text, ctx.user_lang)


__all__ = ["language_of", "user_language"]
