"""W3, A10, P4: a tool that runs only in the chat page, asked for where no page runs it.

On the command line (or any call that announces no client tools) a CLIENT-scope AI tool
is routed but cannot run. Before, the person read whatever the documents said near the
request ("Please fill in the booking form ..." answered with opening hours), after a
gatekeeper call and a deep search: nothing said that the form was not filled. Now the
answer says it can only be done in the chat page (in the person's language, or the
domain's own words).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from toolweave import (
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    Domain,
    as_chatbot_tools,
    build_graph,
)
from toolweave.coordinators.deep_search import DeepSearchCoordinator
from toolweave.graph.client_tools import NOT_ANNOUNCED
from toolweave.testing import FunctionAssistant
from toolweave.tools.search import (
    ContextSearchTool,
    NeighborPageSearchTool,
    RetrievalTool,
    SqliteDocumentStore,
)

QUESTION = "Please fill in the court booking form for Saturday."


class BookingForm(AiTool):
    """Fills the page's booking form: runs in the browser only."""

    def define(self, builder: AiToolBuilder) -> None:
        builder.id("booking-form").name("Court booking form")
        builder.user_description("Fills in the court booking form on the page.")
        builder.ai_description("fill the court booking form")
        builder.scope(AiToolScope.CLIENT)


def _graph(judged: list[str], texts: Any = None) -> Any:
    store = SqliteDocumentStore(embeddings=None)
    store.add_document(
        "hours", ["# Opening hours\nThe courts open at 8:00 on Saturday."], name="Hours", lang="en"
    )
    deep = DeepSearchCoordinator()
    domain = Domain(
        name="club",
        default_retrieval_tool="club_search",
        deep_fallback=lambda _: deep,
        texts=texts or {},
    )
    (form,) = as_chatbot_tools(AiToolRegistry([BookingForm()]))
    tools = [
        RetrievalTool("club_search", "club", store),
        deep,
        NeighborPageSearchTool("neighbor_search", "club", store),
        ContextSearchTool("context_search", "club", store),
        form,
    ]

    def judge(question: str, documents: Any, guaranteed: Any) -> bool:
        judged.append(question)
        return False

    assistant = FunctionAssistant(route=lambda text, offered: [form.name], judge=judge)
    return build_graph(domain, tools, assistant=assistant)


def _ask(graph: Any) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [HumanMessage(QUESTION)]}))


def test_W3_P4_a_page_only_tool_routed_on_the_command_line_says_it_was_not_done_here() -> None:
    judged: list[str] = []
    out = _ask(_graph(judged))
    assert "This can only be done in the chat page (Court booking form)" in out["answer"]
    assert [e.reason for e in out["ledger"] if e.kind == "tool_skipped"] == [NOT_ANNOUNCED]


def test_P4_W3_the_note_takes_the_domains_own_words() -> None:
    texts = {"client_only": {"en": "Open the club's chat page to use the {tool}."}}
    out = _ask(_graph([], texts))
    assert "Open the club's chat page to use the Court booking form." in out["answer"]
