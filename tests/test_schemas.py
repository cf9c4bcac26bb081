"""Python 3.11: the compiled graph publishes its input and output JSON schemas.

pydantic builds no schema from ``typing.TypedDict`` before Python 3.12, so a state
declared with it leaves Studio without an input form and ``graph.as_tool()``
failing; the state's TypedDicts come from ``typing_extensions``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from toolweave import build_graph
from toolweave.llm.offline import OfflineAssistant
from toolweave_korhaz import korhaz_domain, korhaz_tools

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("state", "tools", "llm", "coordinators", "graph", "toolweave")
TYPING_TYPEDDICT = re.compile(
    r"^\s*from typing import [^\n]*\bTypedDict\b|^\s*class \w+\(typing\.TypedDict", re.M
)


def _graph():
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())


def test_py311_graph_publishes_its_input_json_schema():
    schema = _graph().get_input_jsonschema()
    assert {"messages", "systems", "user_data"} <= set(schema["properties"])
    assert schema["required"] == ["messages"]
    assert schema["properties"]["systems"]["type"] == "array"


def test_py311_graph_publishes_its_output_json_schema():
    schema = _graph().get_output_jsonschema()
    assert {"answer", "messages", "documents", "ledger", "activated"} <= set(schema["properties"])


def test_py311_graph_works_as_a_langchain_tool():
    tool = _graph().as_tool(name="toolweave", description="Answer a hospital question")
    assert tool.name == "toolweave"
    assert "question" in tool.args  # the agent tool (issue 18 item 2)
    assert "messages" in _graph().get_input_jsonschema()["properties"]


def test_py311_no_library_typeddict_comes_from_typing():
    offenders = [
        str(path.relative_to(ROOT))
        for folder in LIBRARY
        for path in sorted((ROOT / folder).rglob("*.py"))
        if TYPING_TYPEDDICT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_py311_this_run_is_on_the_declared_minimum_or_later():
    assert sys.version_info >= (3, 11)
