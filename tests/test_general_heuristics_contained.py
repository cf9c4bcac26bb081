"""G1 (issue 36 item 4): the route node's guards are one call, through one interface each.

The route node calls the guards once (``candidates.guard``); the guards read the
offline rule's routing evidence through one object (``RoutingEvidence``), built once
per routing, not by calling back into the offline model's modules function by function.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from tests.test_routing_decision_rules import tool
from toolweave import build_graph
from toolweave.llm import offline_routing
from toolweave.llm.offline import OfflineAssistant
from toolweave.tools.domain import Domain

ROOT = Path(__file__).resolve().parents[1]


def imported_names(path: Path) -> dict[str, set[str]]:
    """``module -> names`` of every ``from module import names`` in ``path``."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.setdefault(node.module, set()).update(a.name for a in node.names)
    return found


def test_G1_route_node_calls_the_guards_through_one_function() -> None:
    imports = imported_names(ROOT / "graph" / "route.py")
    assert not [m for m in imports if m.startswith("toolweave.llm.offline")]
    guards = imports["toolweave.graph.candidates"]
    assert "guard" in guards
    assert not guards & {"guard_terminal", "asking_in_doubt", "resolve_yeses", "best_fit_yes"}


def test_G1_guards_read_the_offline_rule_through_one_interface() -> None:
    imports = imported_names(ROOT / "graph" / "candidates.py")
    assert imports["toolweave.llm.offline_routing"] == {"RoutingEvidence"}


def test_G1_guards_score_the_task_once_per_routing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = offline_routing._matching  # one call per scoring of a task (score_tools)

    def counting(query: Any, vocabularies: Any) -> Any:
        calls.append(query)
        return real(query, vocabularies)

    monkeypatch.setattr(offline_routing, "_matching", counting)
    tools = [
        tool(
            "card_renewal",
            "the user wants to renew an expired library card",
            terminal=True,
            not_for=("Can I pay the late fee by card?",),
        ),
        tool("opening_hours", "the user asks when a branch is open"),
    ]
    graph = build_graph(Domain(name="d"), tools, assistant=OfflineAssistant())
    out = graph.invoke({"messages": [HumanMessage("How do I renew my expired library card?")]})
    assert [key.rpartition(":")[2] for key in out["activated"]] == ["card_renewal"]
    # the offline model's own routing once, the guards' evidence (A8, A9) once
    assert len(calls) == 2
