"""What the routing call of a task is offered (T12) and which of its yes-verdicts are taken (A8).

Both run inside the ``route`` node around its one routing call (T5); neither
runs for forced activation (F1).

**T12, the pre-filter.** A task with more routable candidates than
``Limits.max_routing_candidates`` has them ranked against its task prompt
(``toolweave.tools.prefilter``) and only the best are offered, plus
``Domain.always_offered``. One ``prefilter`` ledger entry records the verdict:
the kept tools and the best-ranked dropped ones with their rank and score, so
``toolweave explain`` can say "ranked 57th of 1,702 by the pre-filter".

**A8, the terminal safety net.** A tool that declares ``returns_answer`` ends
the run with its finished answer (R3/R4), so a wrong yes is costly: the user
gets, say, the emergency numbers for a parking question. Its yes is taken only
when the routing verdict is clear. The verdict is *unclear*, and treated as a
routing failure, when a terminal tool is among the routed tools and

1. more than one terminal tool was routed, or
2. three or more tools were routed and they are at least half of the candidates
   (a model saying yes to most or all tools is not choosing), or
3. the task prompt shares no word with the terminal tool's routing text (name,
   routing question, instruction, description; forms, stems and stem prefixes as
   the pre-filter matches them): a yes with no word in common is the typical
   small-model failure of saying yes to the first tool listed.

On a routing failure no routed tool runs: the task falls back to the domain's
default retrieval (A5) and an ``a8_routing_failure`` entry names the routed tools.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from toolweave.graph.context import Dependencies
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import TaskNode
from toolweave.tools.prefilter import CandidateIndex, ordinal, prefilter
from toolweave.tools.registry import AnyTool

LEDGER_DROPPED = 100
"""Dropped candidates the pre-filter's ledger entry names (the best ranked, with a score)."""
ROUTING_FAILURE = "a8_routing_failure"
MANY_ROUTED = 3
"""Routed tools that, when also at least half of the candidates, are no choice (A8)."""


def offer_candidates(
    deps: Dependencies, node: TaskNode, candidates: Sequence[AnyTool]
) -> tuple[list[AnyTool], list[LedgerEntry]]:
    """T12: the candidates the routing call sees, ranked by the task prompt only (M2)."""
    result = prefilter(
        deps.candidate_index,
        node.task.task_prompt,
        candidates,
        cap=deps.limits.max_routing_candidates,
        pinned=deps.domain.always_offered,
    )
    if not result.filtered:
        return result.offered, []
    total = len(result.ranking)
    cap = deps.limits.max_routing_candidates
    details: dict[str, str] = {}
    for ranked in result.ranking:
        place = f"ranked {ordinal(ranked.rank)} of {total:,}, score {ranked.score:.3f}"
        if ranked.rank <= cap:
            details[ranked.tool] = f"kept: {place}"
        elif ranked.tool in result.pinned:
            details[ranked.tool] = f"pinned: {place}"
        elif ranked.score > 0 and ranked.rank <= cap + LEDGER_DROPPED:
            details[ranked.tool] = f"dropped: {place}"
    entry = LedgerEntry(
        kind=LedgerKind.PREFILTER,
        task_no=node.task_no,
        verdict=f"kept {len(result.offered)} of {total}",
        reason=(
            f"{total:,} candidates, more than {cap}: offered the best {cap} by the task "
            f"prompt and {len(result.pinned)} pinned; the others unnamed here rank below "
            f"{cap + LEDGER_DROPPED} or share no word with the prompt"
        ),
        details=details,
    )
    return result.offered, [entry]


def routing_failure(
    index: CandidateIndex, prompt: str, candidates: Sequence[AnyTool], routed: Collection[str]
) -> str | None:
    """A8: why the routed set is no clear verdict for a terminal tool, or ``None`` if it is."""
    terminal = [t.name for t in candidates if t.name in routed and t.returns_answer]
    if not terminal:
        return None
    if len(terminal) > 1:
        return f"{len(terminal)} tools with a finished answer routed at once"
    if len(routed) >= MANY_ROUTED and 2 * len(routed) >= len(candidates):
        return (
            f"{terminal[0]} (a finished answer) routed together with {len(routed)} of "
            f"{len(candidates)} candidates"
        )
    if not index.shares_words(prompt, terminal[0]):
        return f"{terminal[0]} (a finished answer) shares no word with the task prompt"
    return None


def guard_terminal(
    deps: Dependencies, node: TaskNode, candidates: Sequence[AnyTool], routed: set[str]
) -> tuple[set[str], list[LedgerEntry]]:
    """A8: the routed set, emptied (retrieval only) when its verdict is unclear."""
    why = routing_failure(deps.candidate_index, node.task.task_prompt, candidates, routed)
    if why is None:
        return routed, []
    entry = LedgerEntry(
        kind=LedgerKind.ROUTING,
        task_no=node.task_no,
        verdict=ROUTING_FAILURE,
        reason=f"{why}: treated as a routing failure, retrieval answers instead (A8)",
        details={name: "routed, not run (A8)" for name in sorted(routed)},
    )
    return set(), [entry]
