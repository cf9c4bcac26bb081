"""A test-only graph whose answer cites its sources in other words, for the page's tests (R9).

``langgraph dev`` loads it by path beside the probe graph. Each passage holds several
sentences and the one that supports the answer is not the first: the page's sources
box must quote the supporting one, as the check found it
(:func:`~toolweave.llm.citations.supporting_sentences`). One passage is the only page of
its document, the other a page of a document of several (:data:`PAGES`): only the second
is cited with its page. A question about the desk alone gets :data:`DESK_ANSWER`.
"""

from __future__ import annotations

from toolweave import ToolResult, ToolweaveGraph, build_graph
from toolweave.llm.port import AnswerRequest
from toolweave.state.documents import UniqueTextDocument
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.domain import Domain

PASSAGES = {
    "garage": (
        "Garage",
        "The garage is at the north gate. An hour of parking costs 500 Ft. "
        "A weekly pass costs 8000 Ft.",
    ),
    "desk": (
        "Front desk",
        "The front desk is in the main hall. It opens at 7:30 on weekdays.",
    ),
}
PAGES = {"garage": (1, 1), "desk": (2, 3)}
"""Each passage's ``(page, page_count)``: the garage's document has one page, the desk's three."""
ANSWER = (
    "Parking costs 500 Ft an hour. [1] A weekly pass costs 8000 Ft. [1]\n"
    "The desk opens at 7:30. [2]"
)
"""The assistant's answer, two lines: sentences in its own words and one that is a
passage's sentence word for word, each with its source's marker."""
ECHO = "A weekly pass costs 8000 Ft."
"""The answer's sentence that its passage holds word for word."""
SUPPORTING = ("An hour of parking costs 500 Ft.", "It opens at 7:30 on weekdays.")
"""The sentence of each passage that supports the answer's sentence citing it."""
DESK_ANSWER = "The front desk is open from 7:30 on weekdays. [2]"
"""The answer to a question about the desk alone (:data:`DESK_QUESTION`): one source."""
DESK_QUESTION = "And the desk alone?"


def answer(request: AnswerRequest) -> str:
    """:data:`DESK_ANSWER` to :data:`DESK_QUESTION`, else :data:`ANSWER`."""
    return DESK_ANSWER if request.question == DESK_QUESTION else ANSWER


class InfoTool(ChatbotTool[EmptyRequest]):
    """Both passages, whatever the question."""

    name = "info"
    description = "Parking and the front desk."
    executable_instruction = "info: true for every message"

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        docs = [
            UniqueTextDocument(
                document_id=key,
                document_name=name,
                page=PAGES[key][0],
                page_count=PAGES[key][1],
                sentence_number=1,
                text=text,
            )
            for key, (name, text) in PASSAGES.items()
        ]
        return ToolResult.as_context(self.name, docs)


graph: ToolweaveGraph = build_graph(
    Domain(name="cited"),
    [InfoTool()],
    assistant=FunctionAssistant(route=lambda text, tools: ["info"], answer=answer),
    name="cited_answer",
)
