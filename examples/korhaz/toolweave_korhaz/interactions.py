"""The interaction rules of ``data/substances.json`` and the answer ``drug_interaction`` gives.

A rule names two interaction classes, a severity and an explanation in
Hungarian and English. Two substances interact when one has the first class
and the other the second (in either order). The table is deliberately small:
"no known interaction in our table" never means "safe".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Literal

from toolweave_korhaz.substances import Substance, bundled_json

Severity = Literal["major", "moderate", "minor"]
_RANK: dict[str, int] = {"major": 0, "moderate": 1, "minor": 2}
_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "header": "Interaction check: {names}.",
        "pair": "{a} and {b}",
        "major": "major interaction",
        "moderate": "moderate interaction",
        "minor": "minor interaction",
        "none": "no known interaction in our table",
        "same": "the same active substance ({name}): taking both doubles the dose",
        "disclaimer": "This is not medical advice: before combining medicines, ask your "
        "doctor or pharmacist.",
    },
    "hu": {
        "header": "Kölcsönhatás-ellenőrzés: {names}.",
        "pair": "{a} és {b}",
        "major": "súlyos kölcsönhatás",
        "moderate": "közepes kölcsönhatás",
        "minor": "enyhe kölcsönhatás",
        "none": "az adattárunkban nincs ismert kölcsönhatás",
        "same": "ugyanaz a hatóanyag ({name}): a kettő együtt kétszeres adagot jelent",
        "disclaimer": "Ez nem orvosi tanács: mielőtt gyógyszereit együtt szedné, kérdezze "
        "meg kezelőorvosát vagy gyógyszerészét.",
    },
}


@dataclass(frozen=True)
class InteractionRule:
    """Two interaction classes that do not go well together."""

    classes: tuple[str, str]
    severity: Severity
    explanation_en: str
    explanation_hu: str

    def explanation(self, lang: str) -> str:
        """The explanation in ``lang`` (Hungarian for ``"hu"``, else English)."""
        return self.explanation_hu if lang == "hu" else self.explanation_en

    def applies(self, a: Substance, b: Substance) -> bool:
        """Whether one substance has the first class and the other the second."""
        first, second = self.classes
        return (first in a.classes and second in b.classes) or (
            second in a.classes and first in b.classes
        )


@dataclass(frozen=True)
class Finding:
    """What the table says about one pair of substances."""

    first: Substance
    second: Substance
    rules: tuple[InteractionRule, ...]
    """Matching rules, most severe first; empty when the table knows none."""

    @property
    def same_substance(self) -> bool:
        """Whether both names mean one substance (a double dose, not an interaction)."""
        return self.first.id == self.second.id


@cache
def interaction_rules() -> tuple[InteractionRule, ...]:
    """The rules of ``data/substances.json``, in table order."""
    return tuple(
        InteractionRule(
            classes=(raw["classes"][0], raw["classes"][1]),
            severity=raw["severity"],
            explanation_en=raw["en"],
            explanation_hu=raw["hu"],
        )
        for raw in bundled_json("substances.json")["interactions"]
    )


def check_pair(first: Substance, second: Substance) -> Finding:
    """The rules that apply to a pair of substances, most severe first."""
    rules = [r for r in interaction_rules() if r.applies(first, second)]
    rules.sort(key=lambda r: _RANK[r.severity])
    return Finding(first=first, second=second, rules=tuple(rules))


def check_all(found: Sequence[Substance]) -> list[Finding]:
    """A finding for every pair of ``found``, in mention order."""
    return [check_pair(a, b) for a, b in combinations(found, 2)]


def interaction_report(
    found: Sequence[Substance], lang: str, written: Sequence[str] | None = None
) -> str:
    """The answer text: a line per pair, then the not-medical-advice line.

    Args:
        found: The substances, in the order the user named them.
        lang: ``"hu"`` for Hungarian, anything else gives English.
        written: The names as the user wrote them, parallel to ``found``; they
            label a pair of two names for one substance (``Advil + Nurofen``).

    Returns:
        A short plain-text answer.
    """
    texts = _TEXTS.get(lang, _TEXTS["en"])
    unique = list({s.id: s for s in found}.values())
    lines = [texts["header"].format(names=", ".join(s.name(lang) for s in unique))]
    as_written = list(written) if written is not None and len(written) == len(found) else None
    for (i, j), finding in zip(combinations(range(len(found)), 2), check_all(found), strict=True):
        pair = texts["pair"].format(a=finding.first.name(lang), b=finding.second.name(lang))
        if finding.same_substance and as_written is not None:
            pair = texts["pair"].format(a=as_written[i], b=as_written[j])
        if finding.same_substance:
            lines.append(f"- {pair}: {texts['same'].format(name=finding.first.name(lang))}.")
            continue
        if not finding.rules:
            lines.append(f"- {pair}: {texts['none']}.")
        lines.extend(
            f"- {pair}: {texts[rule.severity]}. {rule.explanation(lang)}" for rule in finding.rules
        )
    lines.append(texts["disclaimer"])
    return "\n".join(lines)


__all__ = [
    "Finding",
    "InteractionRule",
    "Severity",
    "check_all",
    "check_pair",
    "interaction_report",
    "interaction_rules",
]
