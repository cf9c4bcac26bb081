"""``leave_planner``: a coordinator that splits "how many days, and do I have them?" (C1, K1).

For a question naming a period of leave it plans two subtasks (C1):

1. forced ``holiday_calendar`` (F1): the period's days off and working days;
2. conditional, forced ``leave_balance`` (K1), decided just before it would start
   (K3): it runs only when the period has working days, that is when the leave
   costs days at all ("24-26 grudnia" is all holidays: nothing to check).

and forces itself on the question (F1), so that after the subtasks it runs as a
consumer (B2) and writes the answer from both results (R3). ``leave_balance`` is
gated on the user data (T4): for a user who is not logged in the second subtask runs
no tool and the answer gives the calendar only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolweave import (
    AgentCoordinator,
    CompletedSoFar,
    ContextConsumerTool,
    EmptyRequest,
    PriorContext,
    PromptAndContext,
    SubtaskDecision,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    fold,
    words,
)
from toolweave_pomoc.corpus import DOMAIN_NAME
from toolweave_pomoc.dates import date_range
from toolweave_pomoc.language import user_language
from toolweave_pomoc.tools import WORKING_DAYS_LINE, employee_id, leave_accounts

CALENDAR = "holiday_calendar"
BALANCE = "leave_balance"

LEAVE_WORDS = frozenset(
    {"urlop", "urlopu", "urlopem", "wolne", "wolnego", "leave", "vacation", "holiday", "off"}
)
"""Words that make a period a period of leave (folded)."""

FORM_WORDS = ("wypeln", "uzupeln", "fill")
"""Beginnings of the words that ask to fill a form (folded): that is the form tool's."""

_WORKING_DAYS = re.compile(re.escape(fold(WORKING_DAYS_LINE)) + r"\s*(\d+)")


def _entries(completed: CompletedSoFar, tool: str, under: str = "") -> Iterator[PromptAndContext]:
    """The buffer entries of ``tool`` in tasks below ``under`` (every task for ``""``)."""
    for key, entries in completed.items():
        task_no, _, name = key.partition(":")
        if name == tool and task_no.startswith(under):
            yield from entries


def working_days_found(completed: CompletedSoFar, under: str = "") -> int | None:
    """The working days the calendar subtask reported, or ``None`` if it reported none."""
    for entry in _entries(completed, CALENDAR, under):
        match = _WORKING_DAYS.search(fold(entry.context))
        if match:
            return int(match.group(1))
    return None


class LeavePlannerCoordinator(ContextConsumerTool[EmptyRequest], AgentCoordinator):
    """C1, F1, K1, K3, B2: calendar first (forced), the balance if the leave costs days."""

    name = "leave_planner"
    domain = DOMAIN_NAME
    returns_answer = True
    description = (
        "Planowanie urlopu w okresie dat: dni robocze do wzięcia i saldo urlopu. "
        "Planning leave over a period of dates: working days it takes, enough leave left."
    )
    executable_instruction = (
        "leave_planner: true when the user plans leave (urlop) from one date to another "
        "(od 8 do 12 listopada, from 24 to 31 December) and asks whether their leave "
        "suffices (wystarczy, starczy, enough)."
    )

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        """Two subtasks for a period of leave, itself forced on the task; else unchanged (C1)."""
        period = date_range(task.task_prompt)
        said = {fold(w) for w in words(task.task_prompt)}
        asks_form = any(w.startswith(FORM_WORDS) for w in said)
        if period is None or not said & LEAVE_WORDS or asks_form or task.sub_tasks:
            return task
        first, last = (day.isoformat() for day in period)
        task.sub_tasks = [
            TaskInfo(
                task_no="",
                task_prompt=f"Dni wolne i robocze od {first} do {last}",
                required_tool_names=[CALENDAR],
            ),
            TaskInfo(
                task_no="",
                task_prompt="Ile dni urlopu mi zostało?",
                required_tool_names=[BALANCE],
                conditional=True,
            ),
        ]
        task.required_tool_names = [self.name]
        return task

    def decide_conditional_subtask(
        self, parent_task: TaskInfo, next_subtask: TaskInfo, completed_so_far: CompletedSoFar
    ) -> SubtaskDecision:
        """K3: check the balance only when the period has working days (or none were counted)."""
        days = working_days_found(completed_so_far, parent_task.task_no + ".")
        return SubtaskDecision.SKIP if days == 0 else SubtaskDecision.RUN

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """B2: the answer from the subtasks' results; nothing from them is not mine (R1)."""
        under = ctx.task_no + "."
        calendar = [e.context for e in _entries(prior_context, CALENDAR, under)]
        if not calendar:
            return None
        lines = [*calendar, *(e.context for e in _entries(prior_context, BALANCE, under))]
        lines.append(self._verdict(working_days_found(prior_context, under), ctx))
        return ToolResult.as_answer(self.name, "\n".join(line for line in lines if line))

    @staticmethod
    def _verdict(days: int | None, ctx: ToolCallContext) -> str:
        """Whether the balance covers the period, when both are known."""
        account = leave_accounts().get(employee_id(ctx.user_data) or "")
        en = user_language(ctx) == "en"
        if days == 0:
            return (
                "No leave days are needed." if en else "Nie trzeba brać urlopu: to same dni wolne."
            )
        if account is None or days is None:
            return ""
        left = account.remaining - days
        if left >= 0:
            return (
                f"Enough: {left} days will be left."
                if en
                else f"Wystarczy: zostanie {left} dni urlopu."
            )
        return (
            f"Not enough: {-left} days are missing."
            if en
            else f"Nie wystarczy: brakuje {-left} dni urlopu."
        )


__all__ = ["LEAVE_WORDS", "LeavePlannerCoordinator", "working_days_found"]
