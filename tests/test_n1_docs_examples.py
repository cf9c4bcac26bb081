"""N1: the tools, results and coordinators pages teach what a new domain needs, and their code runs.

Every ``python`` block of those pages runs as it is with the offline model (each
block in a namespace of its own, as a reader would paste it); the tools page's
attribute table names every attribute and method a ``ChatbotTool`` has, so a new
attribute cannot go undocumented.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONCEPTS = ROOT / "docs" / "concepts"
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
PAGES = ("tools.md", "results.md", "coordinators.md")
LIFECYCLE = {"execute", "aexecute", "is_eligible", "request_schema", "result_text"}


def _blocks(page: str) -> list[str]:
    return PYTHON_BLOCK.findall((CONCEPTS / page).read_text(encoding="utf-8"))


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize(
    ("page", "index"),
    [(page, index) for page in PAGES for index in range(len(_blocks(page)))],
)
def test_N1_every_code_example_of_the_concept_pages_runs(page: str, index: int) -> None:
    code = _blocks(page)[index]
    namespace: dict[str, Any] = {"__name__": f"docs_{page.removesuffix('.md')}_{index}"}
    exec(compile(code, f"docs/concepts/{page}#{index}", "exec"), namespace)


def _attribute_rows() -> set[str]:
    text = (CONCEPTS / "tools.md").read_text(encoding="utf-8")
    table = text[text.index("## Every attribute") : text.index("## A tool that acts")]
    return set(re.findall(r"^\| `(\w+)", table, flags=re.MULTILINE))


def test_N1_the_tools_page_documents_every_attribute_a_tool_may_declare() -> None:
    from toolweave import ChatbotTool

    declared = set(typing.get_type_hints(ChatbotTool)) | LIFECYCLE
    assert declared <= _attribute_rows(), sorted(declared - _attribute_rows())
    for name in ("description", "routing_examples", "not_for", "returns_answer", "side_effects"):
        assert name in _attribute_rows()  # issue 40 item 7: once only on a change log's page


def test_N1_the_results_page_builds_every_result_kind() -> None:
    from toolweave import ResultMode

    text = (CONCEPTS / "results.md").read_text(encoding="utf-8")
    example = text[text.index("## One result of each kind") :]
    for mode in ResultMode:
        assert f'"{mode.value}"' in example, mode


def test_N1_the_coordinators_page_has_a_consumer_coordinator_not_only_the_example_domain() -> None:
    [worked] = [b for b in _blocks("coordinators.md") if "execute_with_prior_context" in b]
    assert "AgentCoordinator" in worked
    assert "required_tool_names" in worked
    assert "prior_context" in worked
