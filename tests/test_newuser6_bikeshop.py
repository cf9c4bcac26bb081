"""N1 (sixth round): a bicycle repair shop written from the README and the docs alone.

The domain is ``tests/newuser6_domain``: six pages ingested with ``toolweave ingest``,
a parts search (context), a quote filled from the question through a pydantic request
(T6, a finished answer), and a booking that acts (``side_effects``, one slot per
``ctx.idempotency_key``) and asks which day (Q1). It runs on the command line, in an
LCEL chain, as an agent's tool and under ``toolweave eval``. The tests named ``N1_*``
fail without the round's mends; the others pin the paths the round drove, so the
notes' "worked as documented" stays true. What the round met is in
``docs/guides/new-user-notes.md`` ("A sixth domain").
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from cli_support import OFFLINE_UNSET, run
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from newuser6_domain.shop import BOOKINGS, DOCS, PAGES, Bookings, shop_domain
from pydantic import BaseModel

from toolweave import (
    ChatbotTool,
    ConfigurationError,
    Domain,
    OfflineAssistant,
    ToolCallContext,
    ToolResult,
    build_graph,
    pending_clarification,
    reply,
)
from toolweave.adapters.langchain import as_agent_tool
from toolweave.domains import ingested_store
from toolweave.evaluation import evaluate, load_golden
from toolweave.state.errors import UnknownDomainError
from toolweave.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "newuser6_domain" / "golden.jsonl"


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty data directory for the command line, and the offline model."""
    for name in (*OFFLINE_UNSET, "TOOLWEAVE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "data"
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def ingested(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The shop's pages, ingested as the CLI page says: ``toolweave ingest PATH --domain``."""
    code, out, _ = run(capsys, "ingest", str(PAGES), "--domain", DOCS)
    assert code == 0, out
    assert "ingested 6 document(s)" in out
    return data_dir


def test_N1_a_domain_package_builds_on_the_documents_toolweave_ingest_stored(
    ingested: Path,
) -> None:
    """``ingested_store`` opens what ``toolweave ingest`` stored, for a plugin's own tools.

    Before, nothing public led from ``toolweave ingest --domain NAME`` to a store a
    package could give ``documents_domain`` with its tools: a plugin of the same name
    hid the ingested documents, and the data directory's layout was nowhere public.
    """
    store = ingested_store(DOCS)
    graph = build_graph(*shop_domain(store))
    out = graph.invoke("Do you take cheques?")
    assert "we do not take cheques" in out["answer"]
    assert [s.url for s in out["sources"]] == ["https://chainline.example/visit/collection"]
    out = graph.invoke("Do you have brake pads in stock?")  # a tool of the package, beside it
    assert "1:parts_stock" in out["activated"]
    assert "18 euros a pair" in out["answer"]


def test_N1_ingested_store_takes_the_domains_own_stopwords(ingested: Path) -> None:
    """The guide's ``stopwords=`` (words every page holds) reach the ingested store too."""
    assert tuple(ingested_store(DOCS, stopwords=["bike"]).stopwords) == ("bike",)
    assert tuple(ingested_store(DOCS).stopwords) == ()


def test_N1_ingested_store_without_an_ingest_names_the_file_and_the_command(
    data_dir: Path,
) -> None:
    """Nothing ingested under the name: a typed error saying what to run, not an empty store."""
    with pytest.raises(UnknownDomainError) as caught:
        ingested_store(DOCS)
    message = str(caught.value)
    assert str(data_dir / "documents" / f"{DOCS}.sqlite") in message
    assert f"toolweave ingest PATH... --domain {DOCS}" in message
    assert not (data_dir / "documents").exists()  # looking created nothing


def test_N1_ingest_into_a_plugins_domain_says_how_to_build_on_the_documents(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused as before (the plugin would never read them), with the way that works."""
    code, _, err = run(capsys, "ingest", str(PAGES), "--domain", "korhaz")
    assert code == 2
    assert "ingest into another name (`--domain korhaz-docs`)" in err
    assert "toolweave.domains.ingested_store('korhaz-docs')" in err
    assert not (data_dir / "documents").exists()


def test_N1_loading_the_bundled_embedding_model_leaves_the_applications_root_logger_alone() -> None:
    """An app that embeds toolweave keeps its own logging: no handler, no INFO level added.

    ``wordllama`` (the ``embeddings`` extra) calls ``logging.basicConfig(level=INFO)``
    when imported, so building a documents domain gave the host application a stderr
    handler and every library's INFO lines. A fresh interpreter, since the import
    happens once per process.
    """
    pytest.importorskip("wordllama")
    code = (
        "import logging\n"
        "from toolweave.tools.embeddings import StaticEmbeddings\n"
        "StaticEmbeddings(cache_dir=None).embed_query('chain wear')\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), root.level)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["0", str(logging.WARNING)]


def test_N1_eval_failures_lists_a_case_whose_facts_were_not_found(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--failures`` names every case that missed, not only the wrongly routed ones.

    The guide says to fix tools from the development half's failures; a fact the
    answer missed showed in "facts found" only, and no line said which case it was.
    """
    golden = ingested / "golden.jsonl"
    cases = [
        {"id": "f1", "question": "Do you take cheques?", "expected_tools": "none",
         "expected_facts": ["we do not take cheques"]},
        {"id": "f2", "question": "How much is a storage fee?", "expected_tools": "none",
         "expected_facts": ["3 euros per day"]},
    ]  # fmt: skip
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases))
    code, out, _ = run(capsys, "eval", str(golden), "--domain", DOCS, "--failures")
    assert code == 0
    listed = [line for line in out.splitlines() if line.startswith("- ")]
    assert len(listed) == 1
    assert listed[0].startswith("- f2: 'How much is a storage fee?': facts not found: '3 euros")
    assert "2 euros per day" in listed[0]  # what the answer said instead


class _SlotRequest(BaseModel):
    day: Literal["tuesday", "friday"]  # no default: the slip


class _SlotTool(ChatbotTool[_SlotRequest]):
    name = "slot"
    domain = "shop"
    request_model = _SlotRequest
    executable_instruction = "slot: true when the user asks to book a slot."

    def execute(self, request: _SlotRequest, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, f"Booked for {request.day}.")


def test_N1_T6_a_request_field_without_a_default_is_refused_when_the_graph_is_built() -> None:
    """A required field made every question without it an invalid request, silently.

    The offline model left the tool uncalled ("no information", no log line); the
    error now names the field and the two ways to write it (T6 default, T13).
    """
    with pytest.raises(ConfigurationError) as caught:
        build_graph(Domain(name="shop"), [_SlotTool()])
    message = str(caught.value)
    assert "_SlotRequest field(s) 'day' have no default" in message
    assert "`day: ... | None = None`" in message
    assert "required_inputs" in message


# The paths the round drove, pinned (they worked as the docs say).


def test_T6_R3_the_quote_is_filled_from_the_question_through_its_request_model(
    ingested: Path,
) -> None:
    """A ``Literal`` field of the request is filled offline from the question's words."""
    graph = build_graph(*shop_domain(ingested_store(DOCS)))
    out = graph.invoke("What would a full service on my e-bike cost?")
    assert out["activated"] == ["1:repair_quote"]
    assert out["answer"].startswith("A full service on an e-bike costs 129 euros")


def test_Q1_Q6_the_booking_asks_the_day_and_books_once_per_idempotency_key(
    ingested: Path,
) -> None:
    """Asked "Which day?", replied "5", the reply sent twice: one slot."""
    before = BOOKINGS.count()
    graph = build_graph(*shop_domain(ingested_store(DOCS)), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "b1"}}
    graph.invoke("Please book a repair slot for my bike.", config)
    question = pending_clarification(graph, config)
    assert question is not None
    assert question["choices"][-1] == "Saturday"
    out = reply(graph, config, "5")
    assert out["answer"].startswith("Booked: a repair slot on Saturday")
    assert BOOKINGS.count() == before + 1


def test_Q1_X3_a_reply_the_tool_cannot_use_asks_again_when_it_returns_the_clarification(
    ingested: Path,
) -> None:
    """The guide's advice: "Sunday" (closed) is asked again, then "Friday" books once."""
    before = BOOKINGS.count()
    graph = build_graph(*shop_domain(ingested_store(DOCS)), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "b2"}}
    graph.invoke("Please book a repair slot for my bike.", config)
    out = graph.invoke({"messages": [("human", "Sunday")]}, config)
    assert out.get("answer") is None
    again = pending_clarification(graph, config)
    assert again is not None
    assert again["question"] == "Which day would you like to bring the bike in?"
    assert BOOKINGS.count() == before
    out = reply(graph, config, "Friday")
    assert out["answer"].startswith("Booked: a repair slot on Friday")
    assert BOOKINGS.count() == before + 1


def test_Q6_a_booking_repeated_under_one_key_returns_the_first_reference() -> None:
    """The tool's own dedupe, as the guide's ticket tool: the key, in one transaction."""
    bookings = Bookings(":memory:")
    first = bookings.book("k1", "friday")
    assert bookings.book("k1", "friday") == first
    assert bookings.book("k2", "friday") != first
    assert bookings.count() == 2


def test_X1_the_shop_answers_in_an_lcel_chain_and_as_an_agents_tool(ingested: Path) -> None:
    """The README's chain, and ``as_agent_tool`` inside ``create_agent`` continuing a question."""
    graph = build_graph(*shop_domain(ingested_store(DOCS)), checkpointer=InMemorySaver())
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = prompt | graph | RunnableLambda(lambda state: state["answer"])
    thread = {"configurable": {"thread_id": "c1"}}  # the graph keeps threads: name one
    assert chain.invoke({"question": "How much does wheel truing cost?"}, thread).startswith(
        "A wheel truing costs 20 euros"
    )
    shop = as_agent_tool(graph, name="ask_bikeshop", description="The shop", thread="agent")
    call = {"name": "ask_bikeshop", "id": "c1"}
    model = ScriptedChatModel(
        script=[
            AIMessage(
                "", tool_calls=[{**call, "args": {"question": "Please book a repair slot."}}]
            ),
            "Which day?",
            AIMessage("", tool_calls=[{**call, "id": "c2", "args": {"question": "Friday"}}]),
            "Done.",
        ]
    )
    agent = create_agent(model, [shop], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "a1"}}
    first = agent.invoke({"messages": [("human", "book my bike in")]}, config)
    assert "Which day would you like to bring the bike in?" in first["messages"][-2].content
    second = agent.invoke({"messages": [("human", "friday")]}, config)
    assert second["messages"][-2].content.startswith("Booked: a repair slot on Friday")


def test_N1_the_golden_file_runs_offline_on_the_ingested_domain(ingested: Path) -> None:
    """The shop's golden file through ``evaluate``: every case runs, each tool is reached."""
    report = evaluate(
        *shop_domain(ingested_store(DOCS)), load_golden(GOLDEN), assistant=OfflineAssistant()
    )
    assert len(report.results) == 12
    assert not [r.case.id for r in report.results if r.error or r.crashed]
    routed = set().union(*(r.routed for r in report.results))
    assert {"parts_stock", "repair_quote", "book_repair"} <= routed
