"""``toolweave tools`` says truly when each tool runs (A3, C2, D2, A5, F1).

A coordinator of the coordinator phase runs before routing on every task, routing
question or not; only a tool with neither a routing question nor a phase runs "only
when forced". Checked on a neutral domain and on an ingested documents domain, whose
every tool is named with the domain (issue 40 item 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from cli_support import run
from support import make_tool

from toolweave import AgentCoordinator, ChatbotTool, EmptyRequest, TaskInfo
from toolweave.cli.render import (
    COORDINATOR_PHASE,
    DEFAULT_RETRIEVAL,
    ONLY_FORCED,
    OUTSIDE_THE_PHASE,
    tools_table,
)
from toolweave.coordinators.deep_search import DeepSearchCoordinator

pytestmark = pytest.mark.usefixtures("offline_cli")


class Splitter(ChatbotTool[EmptyRequest], AgentCoordinator):
    name: ClassVar[str] = "splitter"
    domain: ClassVar[str | None] = "club"
    executable_instruction: ClassVar[str | None] = None

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        return task

    def execute(self, request: EmptyRequest, ctx: Any) -> None:
        return None


class RoutedSplitter(Splitter):
    name: ClassVar[str] = "routed_splitter"
    executable_instruction: ClassVar[str | None] = (
        "routed_splitter: true when the user asks two things at once."
    )


def _rows(lines: list[str]) -> dict[str, str]:
    return {line.split()[0]: line for line in lines[1:]}


def test_C2_a_coordinator_is_listed_as_running_before_routing_not_only_when_forced() -> None:
    tools: list[Any] = [
        Splitter(),
        RoutedSplitter(),
        DeepSearchCoordinator(),
        make_tool("lookup", routing=None),
        make_tool("rag", routing=None),
        make_tool("hours", routing="hours: true when the user asks when it is open."),
    ]
    rows = _rows(tools_table(tools, default_retrieval="rag", question_width=200))
    assert rows["splitter"].endswith(COORDINATOR_PHASE)
    assert rows["routed_splitter"].endswith(
        f"{COORDINATOR_PHASE} + routed: {RoutedSplitter.executable_instruction}"
    )
    assert rows["deep_search"].endswith(OUTSIDE_THE_PHASE)
    assert rows["lookup"].endswith(ONLY_FORCED)
    assert rows["rag"].endswith(DEFAULT_RETRIEVAL)
    assert rows["hours"].endswith("hours: true when the user asks when it is open.")
    assert "only when forced" not in rows["splitter"] + rows["routed_splitter"]


def test_C2_toolweave_tools_lists_an_ingested_domains_tools_under_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = tmp_path / "rooms.md"
    doc.write_text("# Reading rooms\n\nOpen from 9 to 17.\n", encoding="utf-8")
    assert run(capsys, "ingest", str(doc), "--domain", "club-docs")[0] == 0
    code, out, err = run(capsys, "tools", "--domain", "club-docs")
    assert code == 0, err
    rows = _rows(out.splitlines()[1:])
    assert set(rows) == {
        "club_docs_search",
        "club_docs_deep_search",
        "club_docs_neighbor_search",
        "club_docs_context_search",
    }
    assert all(row.split()[1] == "club-docs" for row in rows.values())  # none under "any"
    assert OUTSIDE_THE_PHASE in rows["club_docs_deep_search"]


class MembersOnly(ChatbotTool[EmptyRequest]):
    name: ClassVar[str] = "members_only"
    executable_instruction: ClassVar[str | None] = "members_only: true when a member books."
    returns_answer: ClassVar[bool] = True
    side_effects: ClassVar[bool] = True

    def is_eligible(self, user_data: Any) -> bool:
        return bool(user_data)

    def execute(self, request: EmptyRequest, ctx: Any) -> None:
        return None


def test_N1_tools_lists_each_tools_gate_finished_answer_and_side_effects() -> None:
    from toolweave.cli.render import tool_traits

    class Hours(ChatbotTool[EmptyRequest]):
        name: ClassVar[str] = "hours"
        executable_instruction: ClassVar[str | None] = "hours: true when asked."

        def execute(self, request: EmptyRequest, ctx: Any) -> None:
            return None

    tools: list[Any] = [MembersOnly(), Hours()]
    assert tool_traits(tools[0]) == "gated,answers,effects"
    assert tool_traits(tools[1]) == "-"
    rows = _rows(tools_table(tools, question_width=200))
    assert "gated,answers,effects" in rows["members_only"]
