"""What the routing call of a task is offered (T12) and which of its yes-verdicts are taken (A8).

The why of each rule is on ``docs/routing-decisions.md``; the domain's own words are no evidence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from toolweave.graph.context import Dependencies
from toolweave.graph.nodes import entry
from toolweave.llm.domain_words import DomainWords
from toolweave.llm.offline_extract import extract_request, states_input
from toolweave.llm.offline_routing import RoutingEvidence
from toolweave.llm.port import Activation, RoutingVerdict
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import TaskNode, execution_text
from toolweave.tools.prefilter import CandidateIndex, ordinal, prefilter
from toolweave.tools.registry import AnyTool
from toolweave.tools.required import asks_itself, graph_asks, missing_from

Scores = Mapping[str, float]
"""Each candidate's keyword (BM25) score for the task prompt."""
Tools = Sequence[AnyTool]
Names = Collection[str]

LEDGER_DROPPED = 100
"""Dropped candidates the pre-filter's ledger entry names (the best ranked, with a score)."""
ROUTING_FAILURE = "a8_routing_failure"
TERMINAL_DROPPED = "a8_terminal_dropped"
TERMINAL_AS_CONTEXT = "a9_terminal_as_context"
OTHERS_DROPPED = "a8_others_dropped"
NEAR_DUPLICATES = "t5_near_duplicates_dropped"
BEST_FIT_RUNS = "t5_best_fit_runs"
BEST_FIT_UNBACKED = "t5_best_fit_not_backed"
INPUTS_MISSING = "t13_required_input_missing"
INPUT_NOT_GIVEN = "routed, not run: its required input {names} is not in the question (T13)"
YES_UNBACKED = "t5_yes_not_backed"
NOTHING_BEHIND_YES = (
    "routed, not run: the task shares no word with it and states none of its inputs (T5, T7)"
)
BEST_FIT_SHARE = 0.5
"""A best fit with no yes runs when its keyword score is at least this share of the best."""
TERMINAL_MARGIN = 1.2
"""A finished answer routed with others runs alone above this times the best other's score (A9)."""
MANY_ROUTED = 3
"""Routed tools that, when also at least half of the candidates, are no choice (A8)."""


def offer_candidates(
    deps: Dependencies, node: TaskNode, candidates: Tools, ignore: Collection[str] = frozenset()
) -> tuple[list[AnyTool], list[LedgerEntry]]:
    """T12: the candidates the routing call sees, best ranked first, by the task prompt (M2)."""
    result = prefilter(
        deps.candidate_index,
        node.task.task_prompt,
        candidates,
        cap=deps.limits.max_routing_candidates,
        pinned=deps.domain.always_offered,
        detail=LEDGER_DROPPED,
        ignore=ignore,
    )
    ranking = result.ranking or deps.candidate_index.rank(  # under the cap: keywords only
        node.task.task_prompt,
        [tool.name for tool in result.offered],
        keywords_only=True,
        ignore=ignore,
    )
    rank_of = {ranked.tool: ranked.rank for ranked in ranking}
    offered = sorted(result.offered, key=lambda tool: rank_of.get(tool.name, len(rank_of) + 1))
    if not result.filtered:
        return offered, []
    total = result.total
    cap = deps.limits.max_routing_candidates
    details: dict[str, str] = {}
    of = f"of {total:,}"
    for ranked in result.ranking:
        place = f"ranked {ordinal(ranked.rank)} {of}, score {ranked.score:.3f}"
        if ranked.rank <= cap:
            details[ranked.tool] = f"kept: {place}"
        elif ranked.tool in result.pinned:
            details[ranked.tool] = f"pinned: {place}"
        elif ranked.score > 0 and ranked.rank <= cap + LEDGER_DROPPED:
            details[ranked.tool] = f"dropped: {place}"
    why = (
        f"{total:,} candidates, more than {cap}: offered the best {cap} by the task "
        f"prompt and {len(result.pinned)} pinned; the others unnamed here rank below "
        f"{cap + LEDGER_DROPPED} or share no word with the prompt"
    )
    verdict = f"kept {len(result.offered)} of {total}"
    return offered, [entry(node, None, LedgerKind.PREFILTER, verdict, why, details=details)]


def keyword_evidence(
    index: CandidateIndex, prompt: str, candidates: Tools, ignore: Collection[str] = frozenset()
) -> dict[str, float]:
    """Each candidate's keyword (BM25) score for ``prompt``, without the ``ignore`` terms (N1)."""
    return index.scores(prompt, [tool.name for tool in candidates], ignore=ignore)


def terminal_verdict(
    scores: Scores, evidence: RoutingEvidence, candidates: Tools, routed: Names
) -> tuple[str, set[str], str] | None:
    """A8: ``(verdict, tools not to run, why)`` when a terminal yes is unclear, else ``None``."""
    terminal = {t.name for t in candidates if t.name in routed and t.returns_answer}
    if not terminal:
        return None
    if len(terminal) > 1 or no_choice(routed, candidates):
        why = (
            f"{len(routed)} of {len(candidates)} candidates routed, "
            f"{len(terminal)} with a finished answer"
        )
        return ROUTING_FAILURE, set(routed), why
    (name,) = terminal
    tool = next(t for t in candidates if t.name == name)
    if len(routed) == 1:
        found = yes_doubt(scores, evidence, tool, candidates, routed)
        return None if found is None else (found[0], {name}, found[1])
    against = evidence.against_not_for(tool)
    if against is not None:
        return TERMINAL_DROPPED, {name}, f"{name} (a finished answer): {against} (A9)"
    own = own_score(scores, evidence, tool)
    best_other = max(scores.get(tool, 0.0) for tool in routed if tool != name)
    if own > TERMINAL_MARGIN * best_other:
        why = (
            f"{name} (a finished answer) routed with others; it matches the task prompt clearly "
            f"best (score {own:.2f} > {TERMINAL_MARGIN:g} x {best_other:.2f})"
        )
        return OTHERS_DROPPED, set(routed) - {name}, why
    why = (
        f"{name} (a finished answer) routed with others that match the task prompt about as "
        f"well (score {own:.2f}, not {TERMINAL_MARGIN:g} x {best_other:.2f})"
    )
    return TERMINAL_DROPPED, {name}, why


def no_choice(routed: Collection[str], candidates: Sequence[AnyTool]) -> bool:
    """A8: most candidates routed (:data:`MANY_ROUTED` or more, and half of them): no choice."""
    return len(routed) >= MANY_ROUTED and 2 * len(routed) >= len(candidates)


def own_score(scores: Mapping[str, float], evidence: RoutingEvidence, tool: AnyTool) -> float:
    """The tool's keyword score for the task, counted only when a word of the task is its."""
    return scores.get(tool.name, 0.0) if evidence.shares_a_word(tool) else 0.0


def yes_doubt(
    scores: Scores, evidence: RoutingEvidence, tool: AnyTool, candidates: Tools, routed: Names
) -> tuple[str, str] | None:
    """A9: ``(verdict, why)`` when a yes lacks the evidence a run-ending or acting tool needs."""
    name = tool.name
    kind = "a finished answer" if tool.returns_answer else "it acts"
    asked = "a finished answer" if tool.returns_answer else "a tool that acts"
    against = evidence.against_not_for(tool)
    if against is not None:
        return TERMINAL_DROPPED, f"{name} ({kind}): {against} (A9)"
    own = own_score(scores, evidence, tool)
    rivals = (scores.get(t.name, 0.0) for t in candidates if t.name not in routed)
    best_other = max(rivals, default=0.0)
    if own == best_other == 0 and tool.routing_examples:
        why = (
            f"{name} ({kind}): no candidate shares a word with the task, nor "
            "does any of its declared examples"
        )
        return TERMINAL_AS_CONTEXT, why
    if own < best_other or 0 < own == best_other:  # a tie at zero: it stands
        why = (
            f"{name} ({kind}) matches the task prompt no better than another "
            f"candidate (score {own:.2f} <= {best_other:.2f})"
        )
        return TERMINAL_DROPPED, why
    if own > 0 and name not in evidence.routed:
        why = (
            f"{name} ({kind}) matches the task prompt best, but not with the evidence "
            f"the offline rule asks of {asked} (its declared intent)"
        )
        return TERMINAL_AS_CONTEXT, why
    return None


def guard_terminal(
    scores: Scores, evidence: RoutingEvidence, node: TaskNode, candidates: Tools, routed: set[str]
) -> tuple[set[str], set[str], list[LedgerEntry]]:
    """A8: the routed tools that run, those whose finished answer joins the context (A9)."""
    found = terminal_verdict(scores, evidence, candidates, routed)
    if found is None:
        return routed, set(), []
    verdict, dropped, why = found
    if verdict == TERMINAL_AS_CONTEXT:
        acting, held = acting_in_doubt(node, candidates, dict.fromkeys(dropped, why))
        dropped -= acting
        if not dropped:
            return routed - acting, set(), held
        reason = f"{why}: retrieval answers, with its text in the context (A9)"
        line = "runs, its answer joins the context (A9)"
        return routed, dropped, [_routing_entry(node, verdict, reason, dropped, line)]
    fallback = "it runs alone" if verdict == OTHERS_DROPPED else "the others run"
    reason = f"{why}: {'retrieval answers instead' if dropped == routed else fallback} (A8)"
    said = _routing_entry(node, verdict, reason, dropped, "routed, not run (A8)")
    return routed - dropped, set(), [said]


ACTING_IN_DOUBT = "a9_acting_in_doubt"
ACTING_NOT_RUN = "routed, not run: it acts, and the verdict is in doubt"


def acting_in_doubt(
    node: TaskNode, candidates: Tools, doubted: Mapping[str, str]
) -> tuple[set[str], list[LedgerEntry]]:
    """A9: of the tools whose yes is in doubt (name -> why), those that act: they do not run."""
    acting = {t.name: doubted[t.name] for t in candidates if t.name in doubted and t.side_effects}
    if not acting:
        return set(), []
    why = "; ".join(acting.values()) + ": it acts (side effects), so it does not run (A9)"
    return set(acting), [_routing_entry(node, ACTING_IN_DOUBT, why, set(acting), ACTING_NOT_RUN)]


def guard_acting(
    scores: Scores,
    evidence: RoutingEvidence,
    node: TaskNode,
    candidates: Tools,
    routed: set[str],
    refused: Tools = (),
    said: str = "",
) -> tuple[set[str], list[LedgerEntry]]:
    """A9: the routed tools that run, less the tools that act and give context on a yes in doubt.

    ``said``: the person's own words when the task borrows an earlier question's (A1); a
    tool that acts must be named in them.

    ``refused``: the domain's tools the gates refused for this request (T4), never offered;
    a tool that acts does not act in the place of one of them that fits the task better.
    """
    failure = f"{len(routed)} of {len(candidates)} candidates routed"
    many = no_choice(routed, candidates)
    doubted: dict[str, str] = {}
    for tool in candidates:
        if tool.name not in routed or not tool.side_effects:  # whatever its result kind
            continue
        found = (
            (TERMINAL_DROPPED, failure)
            if many
            else _in_the_place_of(evidence, tool, refused)
            or _advice_asked(evidence, tool)
            or _borrowed_act(tool, said)
            or _acting_doubt(scores, evidence, tool, candidates, routed)
        )
        if found is not None:
            doubted[tool.name] = found[1]
    acting, held = acting_in_doubt(node, candidates, doubted)
    return routed - acting, held


ADVICE = "{tool} (it acts): the task asks whether to do it, not for it to be done"


def _advice_asked(evidence: RoutingEvidence, tool: AnyTool) -> tuple[str, str] | None:
    """A9: a doubt when the task asks advice about the act ("Should I reserve ...?")."""
    if not evidence.asks_whether_to():
        return None
    return TERMINAL_AS_CONTEXT, ADVICE.format(tool=tool.name)


BORROWED = (
    "{tool} (it acts): the act is named only by the earlier question this follow-up "
    "borrows from ({said!r}), never by the person now (A1, S5)"
)


def _borrowed_act(tool: AnyTool, said: str) -> tuple[str, str] | None:
    """A9, S5: a doubt when a follow-up's own words name nothing of what the tool does.

    "and an SUV?" after a reservation is no second reservation: acting again needs the
    person to ask for the act ("Reserve an SUV too."), as the first time.
    """
    if not said or RoutingEvidence(said, [tool]).names_its_action(tool):
        return None
    return TERMINAL_AS_CONTEXT, BORROWED.format(tool=tool.name, said=said)


IN_THE_PLACE_OF = "{tool} (it acts): {other}, which this request may not use, fits the task better"


def _in_the_place_of(
    evidence: RoutingEvidence, tool: AnyTool, refused: Tools
) -> tuple[str, str] | None:
    """A9, T4: a doubt when a tool the gates refused fits the task better than ``tool``.

    The model never saw the refused tool (T4), so it said yes to the nearest one it saw:
    "Book boarding for my cat" without a client's data must not book an appointment.
    """
    other = evidence.fits_better(tool, refused)
    if other is None:
        return None
    return TERMINAL_AS_CONTEXT, IN_THE_PLACE_OF.format(tool=tool.name, other=other.name)


def _acting_doubt(
    scores: Scores, evidence: RoutingEvidence, tool: AnyTool, candidates: Tools, routed: Names
) -> tuple[str, str] | None:
    """A9 with Q6: :func:`yes_doubt` for a tool that acts, and a word of what it does."""
    found = yes_doubt(scores, evidence, tool, candidates, routed)
    if found is not None:
        return found
    if not tool.routing_examples or evidence.names_its_action(tool):
        return None  # with no examples declared, the model's yes for a paraphrase stands
    why = f"{tool.name} (it acts): the task names nothing of what it does (name, routing question)"
    return TERMINAL_AS_CONTEXT, why


def _routing_entry(
    node: TaskNode, verdict: str, reason: str, tools: set[str], line: str
) -> LedgerEntry:
    """A routing ledger entry naming ``tools``, each with the same ``line`` (L1)."""
    names = sorted(tools)
    details = dict.fromkeys(names, line)
    return entry(node, None, LedgerKind.ROUTING, verdict, reason, details=details, tools=(*names,))


ASKING_IN_DOUBT = "q1_asking_in_doubt"
NOT_ASKED = "runs after the retrieval; a question back to the user becomes no result (Q1, A9)"


def asking_in_doubt(
    deps: Dependencies,
    scores: Scores,
    evidence: RoutingEvidence,
    node: TaskNode,
    candidates: Tools,
    routed: Names,
) -> tuple[set[str], list[LedgerEntry]]:
    """Q1 with A9: the routed tools that may ask the user, but on a verdict in doubt."""
    asks = deps.domain.ask_for_missing_inputs
    details: dict[str, str] = {}
    for tool in candidates:  # a finished answer's evidence is A8's (guard_terminal)
        if tool.name not in routed or tool.returns_answer:
            continue
        # Q1: it may stop the run with a question: clarifiable, or graph-asked (T13)
        if asks_itself(tool) or (tool.required_inputs and graph_asks(tool, domain_asks=asks)):
            why = asking_doubt(scores, evidence, tool, candidates, routed)
            if why is not None:
                details[tool.name] = f"{why}: {NOT_ASKED}"
    if not details:
        return set(), []
    why = "routed on evidence in doubt; it may not stop the run with a question (Q1, A9)"
    tools = tuple(sorted(details))
    said = entry(node, None, LedgerKind.ROUTING, ASKING_IN_DOUBT, why, details=details, tools=tools)
    return set(details), [said]


def asking_doubt(
    scores: Scores, evidence: RoutingEvidence, tool: AnyTool, candidates: Tools, routed: Names
) -> str | None:
    """Why a tool that may ask is in doubt for the task (``evidence``'s prompt), or ``None``."""
    if no_choice(routed, candidates):
        return f"{len(routed)} of {len(candidates)} candidates routed"
    own = own_score(scores, evidence, tool)
    best_other = max((scores.get(t.name, 0.0) for t in candidates if t is not tool), default=0.0)
    if own == 0:
        return "the task shares no word with it"
    if own < best_other:
        return f"another candidate matches the task better (score {own:.2f} < {best_other:.2f})"
    against = evidence.against_not_for(tool)
    if against is not None:
        return against
    if not evidence.declared_intent(tool, margin=False):
        return "what it is for explains too little of the task (its declared intent)"
    return None


def best_fit_yes(
    scores: Scores, node: TaskNode, candidates: Tools, activation: Activation
) -> tuple[Activation, list[LedgerEntry]]:
    """T5: the model's best fit as its yes, when it said yes to none, on keyword evidence (T7)."""
    verdicts = activation.verdicts
    best = next((v.tool for v in verdicts if v.best), None)
    if best is None or any(v.run for v in verdicts):
        return activation, []
    tool = next((t for t in candidates if t.name == best), None)
    if tool is None:
        return activation, []
    top = max((scores.get(t.name, 0.0) for t in candidates), default=0.0)
    score = scores.get(best, 0.0)
    backed = score > 0 and score >= BEST_FIT_SHARE * top
    why = f"no yes, but named the best fit; keyword score {score:.2f} of the best {top:.2f}: " + (
        "runs (T5)" if backed else "not backed by the task's words (T5)"
    )
    verdict = BEST_FIT_RUNS if backed else BEST_FIT_UNBACKED
    said = entry(node, best, LedgerKind.ROUTING, verdict, why)
    if not backed:
        return activation, [said]
    requests = dict(activation.requests)
    if tool.request_model.model_fields:
        requests[best] = extract_request(execution_text(node.task), tool.request_model)
    kept = tuple(
        replace(v, run=True, reason=why, best=True) if v.tool == best else v for v in verdicts
    )
    return replace(activation, verdicts=kept, requests=requests), [said]


def without_missing_inputs(
    deps: Dependencies, node: TaskNode, candidates: Tools, activation: Activation
) -> tuple[Activation, list[LedgerEntry]]:
    """T13 at routing: a yes whose request leaves a required input unfilled is a no."""
    domain_asks = deps.domain.ask_for_missing_inputs
    yes = {v.tool for v in activation.verdicts if v.run}
    requests = dict(activation.requests)
    details: dict[str, str] = {}
    for tool in candidates:
        if tool.name not in yes or tool.name not in requests:
            continue
        if graph_asks(tool, domain_asks=domain_asks) or asks_itself(tool):
            continue
        given = {k: v for k, v in (requests[tool.name] or {}).items() if v is not None}
        if not missing_from(tool, given):
            continue
        ruled = extract_request(execution_text(node.task), tool.request_model) or {}
        merged = {**{k: v for k, v in ruled.items() if v is not None}, **given}
        missing = missing_from(tool, merged)
        if missing:
            details[tool.name] = INPUT_NOT_GIVEN.format(names=", ".join(missing))
        else:  # the model left out what the text states: the rules' value (T7)
            requests[tool.name] = merged
    return read_as_no(replace(activation, requests=requests), node, details, INPUTS_MISSING)


def read_as_no(
    activation: Activation, node: TaskNode, details: Mapping[str, str], verdict: str
) -> tuple[Activation, list[LedgerEntry]]:
    """``activation`` with the yeses of ``details`` (name -> why) turned to no, one entry each."""
    if not details:
        return activation, []
    kept = tuple(
        replace(v, run=False, reason=details[v.tool]) if v.tool in details else v
        for v in activation.verdicts
    )
    left = {name: value for name, value in activation.requests.items() if name not in details}
    entries = [
        entry(node, name, LedgerKind.ROUTING, verdict, why) for name, why in sorted(details.items())
    ]
    return replace(activation, verdicts=kept, requests=left), entries


def resolve_yeses(
    node: TaskNode,
    candidates: Tools,
    verdicts: Sequence[RoutingVerdict],
    evidence: RoutingEvidence | None = None,
) -> tuple[set[str], list[LedgerEntry]]:
    """T5: a model's several yeses, resolved by confidence, the candidate it named best, rank."""
    yes = [v.tool for v in verdicts if v.run]
    best = [v.tool for v in verdicts if v.best and v.run]
    sure = {v.tool: v.confidence for v in verdicts if v.run and v.confidence is not None}
    if len(sure) < len(yes):  # P(yes) ranks only when every yes has one
        sure = {}
    if len(yes) < 2 or not (any(v.best for v in verdicts) or sure):
        return set(yes), []
    order = {tool.name: i for i, tool in enumerate(candidates)}
    ranked = sorted(yes, key=lambda n: (-sure.get(n, 0.0), n not in best, order.get(n, len(order))))
    evidence = evidence or RoutingEvidence(node.task.task_prompt, candidates)
    kept = [ranked[0]]
    covered = set(evidence.hits(kept[0]))
    for name in ranked[1:]:
        if evidence.justifies_another(name, covered):
            kept.append(name)
            covered.update(evidence.hits(name))
    dropped = sorted(set(yes) - set(kept))
    if not dropped:
        return set(kept), []
    why = (
        f"{len(yes)} yeses; kept {', '.join(kept)} (surest, named best or ranked "
        "first, or justified by words of their own)"
    )
    details = dict.fromkeys(dropped, "routed, not run: no evidence of its own (T5)")
    return set(kept), [entry(node, None, LedgerKind.ROUTING, NEAR_DUPLICATES, why, details=details)]


def without_unbacked_yeses(
    node: TaskNode, candidates: Tools, activation: Activation, *, scores: Scores
) -> tuple[Activation, list[LedgerEntry]]:
    """T5 with T7: a context tool's yes with no keyword score and no stated input is a no."""
    requests = activation.requests
    details: dict[str, str] = {}
    for verdict in activation.verdicts:
        tool = next((t for t in candidates if t.name == verdict.tool), None)
        if not verdict.run or tool is None or tool.returns_answer:
            continue
        request, model = requests.get(tool.name), tool.request_model
        if not model.model_fields or (request is None and tool.name not in activation.formless):
            continue  # no request: extracted when it runs (M2, an assistant that routes only)
        text = execution_text(node.task)
        stated = (request is not None and states_input(request, model, text)) or states_input(
            extract_request(text, model), model, text
        )
        if not stated and scores.get(tool.name, 0.0) <= 0:
            details[tool.name] = NOTHING_BEHIND_YES
    return read_as_no(activation, node, details, YES_UNBACKED)


@dataclass(frozen=True)
class GuardOutcome:
    """What the route node's guards make of the routing call's verdicts (:func:`guard`)."""

    activation: Activation
    """The verdicts and requests once the yeses are screened (T5 best fit, T13, T5 with T7)."""
    routed: set[str]
    """The tools that run (T5 several yeses resolved, A8)."""
    in_doubt: set[str]
    """Routed tools in doubt: run after the retrieval, answer as context, ask nothing (A9, Q1)."""
    screened: list[LedgerEntry]
    """The ledger entries of the screening, before the routing verdicts' own entries."""
    resolved: list[LedgerEntry]
    """The ledger entries of the resolution (T5, A8, Q1), after them."""


def guard(
    deps: Dependencies,
    node: TaskNode,
    candidates: Tools,
    activation: Activation,
    words: DomainWords,
    refused: Tools = (),
    said: str = "",
) -> GuardOutcome:
    """The route node's guards on one routing call's verdicts, in order (N1: ``words`` out).

    ``refused``: the domain's routable tools the gates refused for this request (T4, A9);
    ``said``: the person's words when the task borrows an earlier question's (A1, A9).
    """
    prompt = node.task.task_prompt
    scores = keyword_evidence(deps.candidate_index, prompt, candidates, words.terms)
    evidence = RoutingEvidence(words.without(prompt), candidates)
    activation, chosen = best_fit_yes(scores, node, candidates, activation)
    activation, unfilled = without_missing_inputs(deps, node, candidates, activation)
    activation, unbacked = without_unbacked_yeses(node, candidates, activation, scores=scores)
    plain = RoutingEvidence(prompt, candidates)  # T5 weighs the domain's words too
    routed, resolved = resolve_yeses(node, candidates, activation.verdicts, plain)
    routed, in_doubt, guarded = guard_terminal(scores, evidence, node, candidates, routed)
    own = " ".join(words.without(said).split())  # N1: the domain's stop words name no act
    routed, held = guard_acting(scores, evidence, node, candidates, routed, refused, own)
    asking, unsure = asking_in_doubt(deps, scores, evidence, node, candidates, routed)
    return GuardOutcome(
        activation=activation,
        routed=routed,
        in_doubt=in_doubt | asking,
        screened=chosen + unfilled + unbacked,
        resolved=resolved + guarded + held + unsure,
    )
