"""A test-only graph whose answer streams citation markers alone ("[1]"), for the page's tests.

``langgraph dev`` loads it by path beside the probe graph. Its assistant routes every
question to one context tool and answers "[1]", as the 1.5B model answered "Which phone
number do I call to book a CT scan?" with "[3]": the answer node replaces such an
answer with the passage it cites (R9), and the page must show that stored answer, not
the markers that streamed.
"""

from __future__ import annotations

from toolweave import ToolResult, ToolweaveGraph, build_graph
from toolweave.state.documents import UniqueTextDocument
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.domain import Domain

PASSAGE = "Parking costs 500 Ft an hour."


class ParkingTool(ChatbotTool[EmptyRequest]):
    """One context passage, whatever the question."""

    name = "parking"
    description = "Parking prices."
    executable_instruction = "parking: true when the message is about parking"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        passage = UniqueTextDocument(
            document_id="parking", document_name="Parking", page=1, sentence_number=1, text=PASSAGE
        )
        return ToolResult.as_context(self.name, [passage])


graph: ToolweaveGraph = build_graph(
    Domain(name="markers"),
    [ParkingTool()],
    assistant=FunctionAssistant(route=lambda text, tools: ["parking"], answer=lambda r: "[1]"),
    name="markers_answer",
)
