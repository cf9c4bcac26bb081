"""The non-LLM gates a tool passes before it is offered or run (T2-T4, A2, F4)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolweave.state.errors import InvalidRequestError
from toolweave.tools.base import ALL, ChatbotTool, EligibleSystem
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GateVerdict:
    """Whether a tool may activate for a request, and if not, which gate refused it."""

    passed: bool
    gate: str = ""  # ``"domain"``, ``"system"``, ``"eligibility"`` or ``"excluded"`` when refused
    reason: str = ""


PASSED = GateVerdict(passed=True)
UNKNOWN_SYSTEMS = (
    "unknown system {unknown}: no tool names it, so the filter would only switch tools off; "
    "the tools name: {known}"
)


def known_systems(tools: Iterable[AnyTool]) -> list[str]:
    """The system names the tools' ``eligible_system`` mention, sorted (T3)."""
    names: set[str] = set()
    for tool in tools:
        eligible = tool.eligible_system
        if isinstance(eligible, str):
            names.add(eligible)
        elif isinstance(eligible, frozenset):
            names |= eligible
    return sorted(names)


def check_systems(systems: Sequence[str], tools: Iterable[AnyTool]) -> None:
    """Refuse a system filter naming a system no tool knows: a typo, not a filter (T3).

    Raises:
        InvalidRequestError: The message lists the unknown names and the known ones.
    """
    known = known_systems(tools)
    unknown = [name for name in systems if name not in known]
    if unknown:
        raise InvalidRequestError(
            UNKNOWN_SYSTEMS.format(
                unknown=", ".join(map(repr, unknown)), known=", ".join(known) or "none"
            )
        )


def system_allows(eligible: EligibleSystem, systems: Sequence[str]) -> bool:
    """T3: ``None`` passes only without a filter, ``ALL`` always, names also when one is in it."""
    if eligible is ALL or not systems:
        return True
    if eligible is None:
        return False
    names = {eligible} if isinstance(eligible, str) else set(eligible)
    return not names.isdisjoint(systems)


def check_gates(
    tool: AnyTool,
    *,
    domain: str,
    systems: Sequence[str],
    user_data: Mapping[str, Any] | None,
    excluded: frozenset[str] = frozenset(),
) -> GateVerdict:
    """Run T2, T3 and T4 for one tool, cheapest first; an ``is_eligible`` that raises refuses it."""
    if tool.name in excluded:
        return GateVerdict(False, "excluded", f"excluded by domain {domain!r}")
    if tool.domain is not None and tool.domain != domain:
        return GateVerdict(False, "domain", f"tool domain {tool.domain!r} is not {domain!r}")
    if not system_allows(tool.eligible_system, systems):
        return GateVerdict(
            False,
            "system",
            f"eligible_system {_describe(tool.eligible_system)} does not match {list(systems)}",
        )
    try:
        eligible = tool.is_eligible(user_data)
    except Exception as exc:  # T4 is a gate: a failing gate refuses the tool
        logger.warning("is_eligible of %s raised; tool refused", tool.name, exc_info=True)
        return GateVerdict(False, "eligibility", f"is_eligible raised {type(exc).__name__}")
    if not eligible:
        return GateVerdict(False, "eligibility", "is_eligible(user_data) returned False")
    return PASSED


def _describe(eligible: EligibleSystem) -> str:
    if eligible is None:
        return "None (no system filter only)"
    if isinstance(eligible, frozenset):
        return str(sorted(eligible))
    return repr(eligible if isinstance(eligible, str) else eligible.value)


def open_without_filter(tool: AnyTool) -> bool:
    """Whether T3 and T4 pass ``tool`` for any request without a system filter, once per tool."""
    method = getattr(tool, "is_eligible", None)
    return getattr(method, "__func__", None) is ChatbotTool.is_eligible
