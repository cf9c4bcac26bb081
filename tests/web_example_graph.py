"""The seed's example AI system tool (seed 002), alone in a domain, for the page's tests.

``langgraph dev`` loads it by path beside the probe graph; with no model key the
offline model answers: it routes the question to the tool, fills ``exampleParam``
(the request's only text field: the user's text) and answers from its result.
"""

from __future__ import annotations

import json

from toolweave import (
    AiTool,
    AiToolBuilder,
    AiToolScope,
    ToolweaveGraph,
    as_chatbot_tools,
    build_graph,
)
from toolweave.tools.domain import Domain

INPUT_JSON_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"exampleParam": {"type": "string", "description": "Example parameter"}},
        "required": ["exampleParam"],
    }
)


class ExampleAiTool(AiTool):
    """The seed's ``ExampleAiTool``, as written there."""

    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("example-tool")
            .name("example-tool-name")
            .user_description("example-tool-description-shown-to-user")
            .ai_description("example-tool-description-shown-to-ai")
            .input_json_schema(INPUT_JSON_SCHEMA)
            .scope(AiToolScope.SERVER)
        )

    def execute(self, input: str) -> str:
        return json.dumps(json.loads(input)["exampleParam"] + " answered")


graph: ToolweaveGraph = build_graph(
    Domain(name="example"), as_chatbot_tools([ExampleAiTool()]), name="example_tool"
)
