"""AI system tools for the W1-W6 tests: the seed's example tool, with a call log."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from toolweave import build_graph
from toolweave.state.serde import checkpoint_serde
from toolweave.testing import FunctionAssistant
from toolweave.tools.ai.base import AiTool, AiToolBuilder, AiToolScope
from toolweave.tools.ai.orchestration import as_chatbot_tools

EXAMPLE_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"exampleParam": {"type": "string", "description": "Example parameter"}},
        "required": ["exampleParam"],
    }
)

ENDS_IN_ED_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"exampleParam": {"type": "string", "pattern": "ed$"}},
        "required": ["exampleParam"],
    }
)
"""A schema the model's string can miss while filling it (W2: the JSON Schema check)."""


class ExampleTool(AiTool):
    """The seed's example tool, with a configurable id and scope and a log of its runs."""

    def __init__(
        self,
        scope: AiToolScope = AiToolScope.SERVER,
        tool_id: str = "example-tool",
        schema: str = EXAMPLE_SCHEMA,
    ):
        self.scope = scope
        self.tool_id = tool_id
        self.schema = schema
        self.ran: list[str] = []
        self.defined = 0

    def define(self, builder: AiToolBuilder) -> None:
        self.defined += 1
        builder.id(self.tool_id).name(f"{self.tool_id}-name").user_description(
            "example-tool-description-shown-to-user"
        ).ai_description("example-tool-description-shown-to-ai").input_json_schema(
            self.schema
        ).scope(self.scope)

    def execute(self, input: str) -> str:
        self.ran.append(input)
        return json.dumps(json.loads(input)["exampleParam"] + " answered")


def example_graph(
    *tools: AiTool,
    extract: Any = None,
    route: Any = None,
    checkpointer: Any = None,
    **limits: int,
) -> Any:
    """A graph routing every question to all given AI tools, in memory unless told otherwise."""
    names = [t for t in as_chatbot_tools(list(tools))]

    def default_extract(text: str, tool: Any) -> dict[str, Any]:
        return {"exampleParam": f"{tool.name} input"}

    assistant = FunctionAssistant(
        route=route or (lambda prompt, offered: [t.name for t in offered]),
        extract=extract or default_extract,
    )
    saver = checkpointer if checkpointer is not None else InMemorySaver(serde=checkpoint_serde())
    return build_graph("demo", names, assistant=assistant, checkpointer=saver, **limits)


def config(thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def client_payload(result: dict[str, Any]) -> dict[str, Any]:
    interrupts = result.get("__interrupt__") or []
    assert len(interrupts) == 1, interrupts
    value: dict[str, Any] = interrupts[0].value
    assert value["type"] == "client_tool_calls"
    return value


def results(*pairs: tuple[str, str], error: bool = False) -> dict[str, Any]:
    key = "error" if error else "output"
    return {
        "type": "client_tool_results",
        "results": [{"call_id": call_id, key: text} for call_id, text in pairs],
    }
