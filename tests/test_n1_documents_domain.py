"""N1: ``documents_domain(...)`` takes one's own tools and system prompt, and names its tools.

Every tool of a documents domain is named with the domain and belongs to it (no tool
listed under ``any``); the deep-search coordinator forces its own, domain-named
searches (F3 resolves them, D3 runs them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import ask, make_tool

from toolweave import ContextVerdict, ToolResult, build_graph
from toolweave.domains.documents import documents_domain
from toolweave.state.errors import ConfigurationError
from toolweave.testing import FunctionAssistant
from toolweave.tools.domain import DEFAULT_SYSTEM_PROMPT
from toolweave.tools.search import SqliteDocumentStore

FEES = "Membership costs 20 EUR a year."
PROMPT = "You answer questions about the club's documents, briefly."


def _store(tmp_path: Path) -> SqliteDocumentStore:
    store = SqliteDocumentStore(tmp_path / "club-docs.sqlite")
    store.add_document(
        "rooms",
        ["# Reading rooms\nThe reading rooms are on the first floor. Their hours:", "open 9-17."],
        name="Reading rooms",
        lang="en",
    )
    return store


def test_N1_documents_domain_tools_are_named_with_the_domain_and_belong_to_it(
    tmp_path: Path,
) -> None:
    domain, tools = documents_domain("club-docs", _store(tmp_path))
    assert [tool.name for tool in tools] == [
        "club_docs_search",
        "club_docs_deep_search",
        "club_docs_neighbor_search",
        "club_docs_context_search",
    ]
    assert {tool.domain for tool in tools} == {"club-docs"}
    deep = domain.deep_fallback_tool("question")
    assert deep is tools[1]
    assert (deep.neighbor_search_tool, deep.search_tool) == (  # type: ignore[attr-defined]
        "club_docs_neighbor_search",
        "club_docs_context_search",
    )
    assert domain.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert documents_domain("other", _store(tmp_path))[1][1].domain == "other"  # per domain


def test_N1_D3_the_deep_search_forces_the_domain_named_searches(tmp_path: Path) -> None:
    question = "When are the reading rooms open?"
    domain, tools = documents_domain("club-docs", _store(tmp_path))
    assistant = FunctionAssistant(
        judge=lambda q, d, g: ContextVerdict(sufficient=bool(g), missing=(question,)),
        read=lambda q, passage: "open 9-17." if "open 9-17" in passage else None,
        answer=lambda request: " | ".join(request.guaranteed),
    )
    # no passage gives a price, so the gatekeeper is asked (A10)
    asked = "How much do the reading rooms on the first floor cost today?"
    graph = build_graph(domain, tools, assistant=assistant, deep_fallback_llm_calls=6)  # reads (D7)
    out = ask(graph, asked)
    forced = [e.tool for e in out["ledger"] if e.kind == "forced" and e.task_no == "1.1"]
    # the two pages are both in the context, so the neighbour search (named for the
    # domain) is skipped and the full search runs at once (A10, D6)
    assert forced == ["club_docs_context_search"]  # F3 resolved the forced name
    skipped = [e.tool for e in out["ledger"] if e.verdict == "skipped"]
    assert skipped == ["club_docs_neighbor_search"]
    assert not [e for e in out["ledger"] if e.kind == "forced_unknown"]
    assert "open 9-17." in out["answer"]


def test_N1_documents_domain_takes_own_tools_and_system_prompt(tmp_path: Path) -> None:
    fees = make_tool(
        "membership_fees",
        domain="club-docs",
        routing="membership_fees: true when the user asks what the membership costs.",
        result=lambda name, ctx: ToolResult.as_answer(name, FEES),
    )
    domain, tools = documents_domain(
        "club-docs", _store(tmp_path), tools=[fees], system_prompt=PROMPT
    )
    assert domain.system_prompt == PROMPT
    assert [tool.name for tool in tools][-1] == "membership_fees"
    out = ask(build_graph(domain, tools), "What does the membership cost?")
    assert out["answer"] == FEES
    assert "1:membership_fees" in out["activated"]


def test_N1_a_tool_of_another_domain_is_a_configuration_error(tmp_path: Path) -> None:
    stray: Any = make_tool("stray", domain="elsewhere")
    with pytest.raises(ConfigurationError, match=r"tool 'stray' belongs to domain 'elsewhere'"):
        documents_domain("club-docs", _store(tmp_path), tools=[stray])
