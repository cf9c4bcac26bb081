"""Adapted tools fail safe (T13) and names from outside map one way (T14): issue 18 items 1, 3.

Real components: langchain-core's ``@tool``, a FastMCP server over stdio
(``tests/servers/mcp_wards.py``), the offline model, the AI tool registry.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

import toolweave
from toolweave import ConfigurationError, LedgerKind, build_graph, to_tool_name, tool_names
from toolweave.adapters.langchain import from_langchain_tool
from toolweave.adapters.mcp import load_mcp_tools
from toolweave.graph.candidates import INPUTS_MISSING
from toolweave.testing import FunctionAssistant
from toolweave.tools.ai.base import AiTool, AiToolBuilder, AiToolScope
from toolweave.tools.ai.orchestration import as_chatbot_tools
from toolweave.tools.ai.registry import AiToolRegistry

ROOT = Path(__file__).parents[1]
QUESTION = "How many free beds does cardiology have?"
WARDS = Path(__file__).parent / "servers" / "mcp_wards.py"
STDIO = {"wards": {"transport": "stdio", "command": sys.executable, "args": [str(WARDS)]}}
CALLS: list[str] = []


@tool
def free_beds(department: str) -> str:
    """How many free beds a hospital department has right now."""
    CALLS.append(department)
    return f"{department}: 3 free beds"


@tool
def free_beds_literal(department: Literal["cardiology", "surgery"]) -> str:
    """How many free beds a hospital department has right now."""
    return f"{department}: 3 free beds"


@tool
def free_beds_examples(
    department: Annotated[str, Field(examples=["cardiology", "surgery"])],
) -> str:
    """How many free beds a hospital department has right now."""
    return f"{department}: 3 free beds"


class WardArgs(BaseModel):
    department: str = Field(description="The ward", examples=["cardiology", "surgery"])


@tool(args_schema=WardArgs)
def free_beds_schema(department: str) -> str:
    """How many free beds a hospital department has right now."""
    return f"{department}: 3 free beds"


def ask(graph: Any, text: str = QUESTION, config: dict[str, Any] | None = None) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(content=text)]}, config))


def tool_entries(out: dict[str, Any], name: str) -> list[Any]:
    return [e for e in out["ledger"] if e.tool == name]


# --- T13: called only with every required input filled -----------------------------


@pytest.mark.parametrize("lc_tool", [free_beds_literal, free_beds_examples, free_beds_schema])
def test_T13_argument_that_says_what_it_accepts_is_filled_offline(lc_tool: Any) -> None:
    """Observation 1: a Literal, or examples in the schema, and the offline model answers."""
    graph = build_graph("korhaz", [from_langchain_tool(lc_tool, domain="korhaz")])
    out = ask(graph)
    assert out["activated"] == [f"1:{lc_tool.name}"]
    assert "cardiology: 3 free beds" in out["answer"]


def test_T13_plain_str_it_cannot_fill_declines_with_a_ledger_line_naming_it(caplog) -> None:
    """Observation 1: the tool is not called, no traceback, the ledger names the input."""
    CALLS.clear()
    graph = build_graph("korhaz", [from_langchain_tool(free_beds, domain="korhaz")])
    with caplog.at_level(logging.DEBUG, logger="toolweave"):
        out = ask(graph)
    assert CALLS == []
    assert out["activated"] == []
    (declined,) = [e for e in tool_entries(out, "free_beds") if e.verdict == INPUTS_MISSING]
    assert declined.kind is LedgerKind.ROUTING  # read as no when routed, never queued
    assert "department" in declined.reason
    assert not [r for r in caplog.records if r.exc_info]


def test_T13_README_adapter_example_answers_and_its_plain_str_twin_declines(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    (block,) = [b for b in blocks if "from_langchain_tool" in b]
    namespace: dict[str, Any] = {"__name__": "readme_adapter", "build_graph": build_graph}
    exec(compile(block, "README.md", "exec"), namespace)
    assert "cardiology: 3 free beds" in namespace["beds"].invoke(QUESTION)["answer"]
    plain = exec_plain_twin(block)
    out = plain.invoke(QUESTION)
    assert out["activated"] == []
    assert any("department" in e.reason for e in tool_entries(out, "free_beds"))


def exec_plain_twin(block: str) -> Any:
    """The README's block with ``department: str``: what a new user writes first."""
    plain = block.replace('Literal["cardiology", "surgery"]', "str")
    assert plain != block
    namespace: dict[str, Any] = {"__name__": "readme_plain", "build_graph": build_graph}
    exec(compile(plain, "README.md", "exec"), namespace)
    return namespace["beds"]


def test_T13_Q1_ask_policy_asks_for_the_input_and_runs_with_the_reply_by_number() -> None:
    graph = build_graph(
        "korhaz",
        [from_langchain_tool(free_beds_examples, domain="korhaz", ask_for_missing_inputs=True)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "ask-1"}}
    out = ask(graph, "How many free beds are there?", config)
    (interrupt,) = out["__interrupt__"]
    assert interrupt.value["question"] == "Which department?"
    assert interrupt.value["choices"] == ["cardiology", "surgery"]
    out = dict(graph.invoke(Command(resume="2"), config))
    assert "surgery: 3 free beds" in out["answer"]
    assert out["activated"] == ["1:free_beds_examples"]


def test_T13_Q1_ask_policy_takes_a_free_text_reply_for_a_plain_str() -> None:
    CALLS.clear()
    graph = build_graph(
        "korhaz",
        [from_langchain_tool(free_beds, domain="korhaz", ask_for_missing_inputs=True)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "ask-2"}}
    out = ask(graph, config=config)
    assert out["__interrupt__"][0].value["choices"] == []
    out = dict(graph.invoke(Command(resume="oncology"), config))
    assert CALLS == ["oncology"]
    assert "oncology: 3 free beds" in out["answer"]


def test_T13_R7_mcp_error_result_is_a_failure_not_context(caplog) -> None:
    """Observation 2: the MCP error text is neither the answer nor context, nor activated."""
    tools = load_mcp_tools(STDIO, domain="korhaz")
    assistant = FunctionAssistant(
        route=lambda text, tools: ["free_beds"],
        extract=lambda text, t: {"department": "oncology"},
        answer=lambda request: " | ".join(d.text for d in request.documents) or "no context",
    )
    with caplog.at_level(logging.WARNING, logger="toolweave"):
        out = ask(build_graph("korhaz", tools, assistant=assistant))
    assert out["activated"] == []
    assert "Error executing tool" not in out["answer"]
    assert not any("no ward" in d.text for d in out["documents"])
    (failed,) = [e for e in tool_entries(out, "free_beds") if e.kind is LedgerKind.TOOL_ERROR]
    assert failed.verdict == "failed"
    (logged,) = [r for r in caplog.records if "free_beds" in r.getMessage()]
    assert not logged.exc_info  # one line, no traceback
    assert "no ward called 'oncology'" in logged.getMessage()


def test_T13_mcp_tool_with_examples_in_its_schema_answers_offline() -> None:
    (beds,) = load_mcp_tools(STDIO, domain="korhaz")
    assert beds.required_inputs == ("department",)
    out = ask(build_graph("korhaz", [beds]))
    assert out["activated"] == ["1:free_beds"]
    assert "cardiology: 3 free beds" in out["answer"]


def _refuse(query: str) -> str:
    """Look something up in a backend that reports errors as ToolException."""
    raise ToolException(f"backend refused {query}")


def test_T13_R7_a_handled_tool_error_string_is_a_failure_not_context(caplog) -> None:
    """A LangChain tool whose handler turns errors into content still fails (R7)."""
    # with handle_tool_error LangChain would return the error text as the tool's output
    refusing = StructuredTool.from_function(_refuse, name="refusing", handle_tool_error=True)
    assistant = FunctionAssistant(
        route=lambda text, tools: ["refusing"],
        extract=lambda text, t: {"query": "x"},
        answer=lambda request: " | ".join(d.text for d in request.documents) or "no context",
    )
    with caplog.at_level(logging.WARNING, logger="toolweave"):
        out = ask(build_graph("shop", [from_langchain_tool(refusing)], assistant=assistant))
    assert out["answer"] == "no context"
    assert out["activated"] == []
    (logged,) = [r for r in caplog.records if "refusing" in r.getMessage()]
    assert not logged.exc_info
    assert refusing.handle_tool_error is True  # the application's tool is left as it was
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="toolweave"):  # the application asks
        ask(build_graph("shop", [from_langchain_tool(refusing)], assistant=assistant))
    (logged,) = [r for r in caplog.records if "refusing" in r.getMessage()]
    assert logged.exc_info


def test_T13_an_ai_tool_in_orchestration_declines_without_its_required_input() -> None:
    class Beds(AiTool):
        def define(self, builder: AiToolBuilder) -> None:
            builder.id("free-beds").name("Free beds").user_description("Free beds").ai_description(
                "How many free beds a department has"
            ).input_json_schema(
                '{"type": "object", "properties": {"department": {"type": "string"}},'
                ' "required": ["department"]}'
            ).scope(AiToolScope.SERVER)

        def execute(self, input: str) -> str:
            raise AssertionError("never called without its input")

    graph = build_graph("korhaz", as_chatbot_tools(AiToolRegistry([Beds()])))
    out = ask(graph, "How many free beds are there?")
    assert out["activated"] == []
    (declined,) = [e for e in tool_entries(out, "free_beds") if e.verdict == INPUTS_MISSING]
    assert "department" in declined.reason


# --- T14: names from outside ----------------------------------------------------------


def test_T14_the_mapping_helper_is_public() -> None:
    """Observation 6: the helper that maps outside names is exported from toolweave."""
    assert "to_tool_name" in toolweave.__all__
    assert "tool_names" in toolweave.__all__
    assert to_tool_name("math.factorial") == "math_factorial"
    assert to_tool_name("Flights_4_SearchOnewayFlight") == "flights_4_search_oneway_flight"
    assert tool_names(["math.factorial", "getWeather"]) == {
        "math.factorial": "math_factorial",
        "getWeather": "get_weather",
    }


def test_T14_a_catalogue_whose_names_collide_after_mapping_is_refused_naming_both() -> None:
    with pytest.raises(ConfigurationError) as caught:
        tool_names(["getWeather", "lookup", "get_weather", "math.pow", "math_pow"])
    message = str(caught.value)
    assert message.startswith("2 name clash(es)")  # every clash of the catalogue at once
    assert "'getWeather' and 'get_weather'" in message
    assert "'math.pow' and 'math_pow'" in message


def test_T14_build_graph_refuses_an_outside_name_and_points_at_the_helper() -> None:
    class Factorial(toolweave.ChatbotTool[BaseModel]):
        name = "math.factorial"

        def execute(self, request: BaseModel, ctx: Any) -> None:
            return None

    with pytest.raises(ConfigurationError, match=r"to_tool_name.*'math_factorial'"):
        build_graph("calc", [Factorial()])


class _Form(AiTool):
    tool_id = "fill-form"

    def define(self, builder: AiToolBuilder) -> None:
        builder.id(self.tool_id).name(self.tool_id).user_description("Fills a form.")
        builder.ai_description("Fills the form.").scope(AiToolScope.SERVER)

    def execute(self, input: str) -> str:
        return "filled"


class _FormUnderscore(_Form):
    tool_id = "fill_form"


def test_T14_two_ai_tool_ids_that_map_to_one_name_are_refused_naming_both() -> None:
    """Observation 6: ``fill-form`` and ``fill_form`` no longer drop one silently."""
    with pytest.raises(ConfigurationError) as caught:
        AiToolRegistry([_Form(), _FormUnderscore()])
    assert "'fill-form'" in str(caught.value)
    assert "'fill_form'" in str(caught.value)


def test_T14_two_langchain_tools_that_map_to_one_name_are_refused_by_build_graph() -> None:
    @tool("getWeather")
    def camel(city: str) -> str:
        """Weather in a city."""
        return city

    @tool("get_weather")
    def snake(city: str) -> str:
        """Weather in a city."""
        return city

    with pytest.raises(ConfigurationError) as caught:
        build_graph("shop", [from_langchain_tool(camel), from_langchain_tool(snake)])
    assert "'getWeather'" in str(caught.value)
    assert "'get_weather'" in str(caught.value)


def test_T14_T1_the_same_name_again_keeps_last_wins_with_a_warning_naming_both(caplog) -> None:
    first, second = from_langchain_tool(free_beds), from_langchain_tool(free_beds)
    with caplog.at_level(logging.WARNING, logger="toolweave"):
        graph = build_graph("korhaz", [first, second])
    assert graph is not None
    (warning,) = [r.getMessage() for r in caplog.records if "last loaded wins" in r.getMessage()]
    assert warning.count("'free_beds'") >= 2  # the name, and the outside name of each tool
    with caplog.at_level(logging.WARNING, logger="toolweave"):
        AiToolRegistry([_Form(), _Form()])
    assert any("fill-form" in r.getMessage() for r in caplog.records)


class DepartmentRequest(BaseModel):
    department: Literal["cardiology", "surgery"] | None = None


class Beds(toolweave.ChatbotTool[DepartmentRequest]):
    """A native tool that declares its required input (T13 is not only for adapters)."""

    name = "beds"
    request_model = DepartmentRequest
    required_inputs = ("department",)
    executable_instruction = "beds: true when the user asks how many free beds there are."

    def execute(self, request: DepartmentRequest, ctx: Any) -> toolweave.ToolResult | None:
        assert request.department is not None, "never called without its input"
        doc = toolweave.UniqueTextDocument(document_id="beds", text=f"{request.department}: 2")
        return toolweave.ToolResult.as_context(self.name, [doc])


def test_T13_Q1_the_domain_says_ask_and_a_native_tool_with_required_inputs_asks() -> None:
    always = FunctionAssistant(
        route=lambda text, tools: ["beds"],
        extract=lambda text, t: {},
        answer=lambda request: " | ".join(d.text for d in request.documents) or "no context",
    )
    declining = build_graph("ward", [Beds()], assistant=always)
    out = ask(declining, "Free beds?")
    assert out["answer"] == "no context"
    assert any(e.verdict == INPUTS_MISSING for e in tool_entries(out, "beds"))
    asking = build_graph(
        toolweave.Domain(name="ward", ask_for_missing_inputs=True),
        [Beds()],
        assistant=always,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "domain-ask"}}
    out = ask(asking, "Free beds?", config)
    assert out["__interrupt__"][0].value["choices"] == ["cardiology", "surgery"]
    out = dict(asking.invoke({"messages": [HumanMessage(content="1")]}, config))
    assert out["answer"] == "cardiology: 2"
    assert out["activated"] == ["1:beds"]
