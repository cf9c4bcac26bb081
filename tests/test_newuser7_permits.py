"""N1 (seventh round): a permits office written async-first from the README and the docs.

The domain is ``tests/newuser7_domain``: seven pages with a front matter, ingested into
SQLite and PostgreSQL; every tool defines ``aexecute`` only (a fee table, the inspection
rules, a streamed answer gated on the applicant, R4/T4), a coordinator of its own splits
"how much ... and does it need an inspection?" into a forced and a conditional subtask
(F1, K1-K4), and a CLIENT AI tool fills the page's form (W3). The tests named after a
rule with a finding fail without the round's mends; the others pin what the round drove,
so the notes' "worked as documented" stays true. What the round met is in
``docs/guides/new-user-notes.md`` ("A seventh domain").
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest
from cli_support import OFFLINE_UNSET, run
from durable import postgres_url
from langchain_core.tools import tool
from newuser7_domain.office import DOCS, PAGES, office_domain
from newuser7_domain.plugin import plugin

from toolweave import (
    AiTool,
    AiToolBuilder,
    AiToolRegistry,
    AiToolScope,
    ChatbotTool,
    Domain,
    EmptyRequest,
    RunContext,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    as_chatbot_tools,
    as_langchain_tools,
    build_graph,
    ingest,
)
from toolweave.adapters.langchain import from_langchain_tool

ROOT = Path(__file__).resolve().parents[1]
APPLICANT = RunContext(user_data={"applicant_id": "A-1001"})


class FakeEntryPoint:
    """The office's entry point (``toolweave.plugins``), as if its package were installed."""

    name = "permits"
    value = "newuser7_domain.plugin:plugin"

    def load(self) -> Any:
        return plugin


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The office's plugin installed alone, the offline model, an empty data directory."""
    import toolweave.domains as domains

    for name in (*OFFLINE_UNSET, "TOOLWEAVE_MODEL", "TOOLWEAVE_DOMAIN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(domains, "entry_points", lambda *, group: [FakeEntryPoint()])
    folder = tmp_path / "default-data"
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def graph() -> Any:
    """The office over its pages in SQLite, built as the guide's step 2 and 4 say."""
    store = SqliteDocumentStore(":memory:")
    ingest([str(PAGES)], store, domain=DOCS)
    return build_graph(*office_domain(store))


def ask(graph: Any, question: str, **options: Any) -> dict[str, Any]:
    return dict(graph.invoke({"messages": [("human", question)]}, **options))


# --- async-first tools under a sync ``invoke`` (T9, the tools page's "Async tools") ---


class LoopBoundClient:
    """Stands in for an ``httpx.AsyncClient``: bound to the event loop it first ran on."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None

    async def get(self) -> str:
        running = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = running
        if running is not self.loop:  # what httpx, asyncpg or aiohttp raise, in short
            raise RuntimeError("bound to a different event loop (the first one is closed)")
        await asyncio.sleep(0)
        return "The counter is open from 8:30."


class CounterHours(ChatbotTool[EmptyRequest]):
    """An async-first tool keeping one client for all its calls, as httpx advises."""

    name = "counter_hours"
    domain = "permits"
    executable_instruction = "counter_hours: true when the user asks when the counter is open."

    def __init__(self) -> None:
        self.client = LoopBoundClient()

    async def aexecute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_guaranteed_context(self.name, await self.client.get())


def test_T9_an_async_tool_keeping_a_client_works_on_every_sync_invoke() -> None:
    """Every ``invoke`` runs an async-only tool on one event loop, so its client still works.

    Before, each call got a fresh loop (``asyncio.run``): the first ``invoke`` answered,
    every later one failed inside the tool ("Event loop is closed"), which R7 turned
    into "I found no information" with a warning no script shows.
    """
    graph = build_graph(Domain(name="permits"), [CounterHours()])
    for _ in range(3):
        out = ask(graph, "When is the counter open?")
        assert out["activated"] == ["1:counter_hours"]
        assert out["answer"] == "The counter is open from 8:30."


def test_T9_a_sync_invoke_inside_a_running_loop_uses_the_same_loop_as_a_script() -> None:
    """A notebook cell (a running loop) calling ``invoke`` reaches the same client too."""
    graph = build_graph(Domain(name="permits"), [CounterHours()])
    assert ask(graph, "When is the counter open?")["activated"] == ["1:counter_hours"]

    async def cell() -> dict[str, Any]:
        return ask(graph, "When is the counter open?")  # sync, while this loop runs

    assert asyncio.run(cell())["activated"] == ["1:counter_hours"]


def test_T9_R4_the_offices_async_tools_answer_under_invoke_stream_and_ainvoke(graph: Any) -> None:
    """Fee table, inspection rules and the streamed status: one class for every entry point."""
    out = ask(graph, "How much does a fence permit cost?")
    assert out["answer"] == "A fence permit costs 45 euros."
    status = ask(graph, "What is the status of my application?", context=APPLICANT)
    assert status["activated"] == ["1:application_status"]
    assert status["answer"].startswith("Application BP-2231")
    chunks = [
        chunk[0].content
        for mode, chunk in graph.stream(
            {"messages": [("human", "What is the status of my application?")]},
            stream_mode=["custom", "messages"],
            context=APPLICANT,
        )
        if mode == "messages" and "toolweave:answer" in (chunk[1].get("tags") or [])
    ]
    assert next(c for c in chunks if c).startswith("Application BP-2231")  # line by line
    awaited = asyncio.run(
        graph.ainvoke(
            {"messages": [("human", "What is the status of my application?")]},
            context=APPLICANT,
        )
    )
    assert awaited["answer"] == status["answer"]
    assert "application_status" not in str(ask(graph, "What is my status?")["activated"])  # T4


# --- the plugin's ingested documents and the command line's options (N1) ---


def test_N1_a_plugins_ingested_store_reads_the_data_dir_load_domain_was_given(
    installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolweave ask --data-dir D`` reaches the loader's ``ingested_store(NAME)``.

    Before, a plugin's loader was told neither ``--data-dir`` nor ``--database-url``: the
    pages ingested with the same options were not found, and the error said to ingest
    them again (sixth round's gap).
    """
    elsewhere = tmp_path / "elsewhere"
    code, _, err = run(capsys, "ingest", str(PAGES), "--domain", DOCS, "--data-dir", str(elsewhere))
    assert code == 0, err
    code, out, err = run(
        capsys, "ask", "--data-dir", str(elsewhere), "--domain", "permits",
        "How much does a fence permit cost?",
    )  # fmt: skip
    assert code == 0, err
    assert "A fence permit costs 45 euros." in out
    assert not installed.exists()  # nothing looked for, nor made, in the default one


def test_N1_ingested_store_without_documents_names_both_places_and_options(
    installed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error names the data directory and the database options, not only the file."""
    code, _, err = run(capsys, "ask", "--domain", "permits", "How much is a fence permit?")
    assert code == 2
    assert "--data-dir" in err
    assert "--database-url" in err


def test_N1_a_plugins_ingested_store_reads_the_database_the_cli_ingested_into(
    installed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--database-url`` (or ``TOOLWEAVE_DATABASE_URL``) is where both commands look.

    Before, ``toolweave ingest --database-url URL`` stored the pages in PostgreSQL and
    ``toolweave ask --database-url URL --domain permits`` failed: the loader's
    ``ingested_store`` looked in SQLite only and said to ingest them (again).
    """
    url = postgres_url()
    collection = "permits-docs-nu7"
    from toolweave.tools.search.postgres_store import PostgresDocumentStore

    store = PostgresDocumentStore(url, collection=collection)
    store.clear()  # a collection of this test's own, emptied first
    store.close()
    monkeypatch.setattr("newuser7_domain.office.DOCS", collection)
    code, out, err = run(
        capsys, "ingest", str(PAGES), "--domain", collection, "--database-url", url
    )
    assert code == 0, err
    assert f'ask: toolweave ask --database-url URL --domain {collection} "..."' in out
    assert url not in out  # the URL's password is never printed
    question = "How much does a fence permit cost?"
    code, out, err = run(capsys, "ask", "--database-url", url, "--domain", "permits", question)
    assert code == 0, err
    assert "A fence permit costs 45 euros." in out
    monkeypatch.setenv("TOOLWEAVE_DATABASE_URL", url)  # the variable, as `ingest` reads it
    code, out, err = run(capsys, "ask", "--domain", "permits", question)
    assert code == 0, err
    assert "45 euros" in out


# --- a coordinator of one's own: a forced and a conditional subtask (F1, K1-K4) ---


def test_K3_the_coordinator_runs_the_inspection_part_only_for_a_permit_that_has_one(
    graph: Any,
) -> None:
    """The fee subtask is forced; the inspection subtask runs when the fee names such a permit."""
    events = [
        chunk
        for chunk in graph.stream(
            {
                "messages": [
                    ("human", "How much is a building permit and does it need an inspection?")
                ]
            },
            stream_mode="custom",
        )
    ]
    decisions = [e["decision"] for e in events if e["type"] == "conditional"]
    assert decisions == ["run"]
    out = ask(graph, "How much is a building permit and does it need an inspection?")
    assert out["activated"][:2] == ["1.1:permit_fees", "1.2:inspection_rules"]
    assert "320 euros" in out["answer"]
    assert "foundations are laid" in out["answer"]
    fence = [
        e["decision"]
        for e in graph.stream(
            {
                "messages": [
                    ("human", "What does a fence permit cost and does it need an inspection?")
                ]
            },
            stream_mode="custom",
        )
        if e["type"] == "conditional"
    ]
    assert fence == ["skip"]


def test_R9_R5_a_sentence_of_the_guaranteed_context_cites_no_passage_that_shares_a_number(
    graph: Any,
) -> None:
    """A sentence the guaranteed context says word for word rests on it, not on a passage.

    Before, "The works of a building permit are inspected 2 times: ..." (the inspection
    tool's guaranteed context) was cited [1], the fee table's passage, because that
    passage holds a "2" ("2 euros for every square metre"): the page showed a citation
    whose quote says nothing of inspections.
    """
    out = ask(graph, "How much is a building permit and does it need an inspection?")
    by_text = {s.text: s for s in out["answer_sentences"]}
    inspected = next(t for t in by_text if t.startswith("The works of a building permit"))
    assert by_text[inspected].sources == ()
    assert by_text[inspected].supported
    fee = next(t for t in by_text if t.startswith("A building permit costs 320 euros"))
    assert by_text[fee].documents == ("fees-building",)  # a quoted passage is still cited


# --- the CLIENT tool on the command line (W3) ---


@pytest.fixture
def ingested(installed: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The pages ingested as the guide's step 2 says, into the default data directory."""
    code, _, err = run(capsys, "ingest", str(PAGES), "--domain", DOCS)
    assert code == 0, err
    return installed


FILL = "Please fill in the permit application form for a fence at 5 Elm Road."


def test_W3_toolweave_ask_verbose_says_a_routed_client_tool_is_not_run_there(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-v`` names the CLIENT tool routed but never run by the CLI, and where it runs.

    Before, the routed line named ``fill_permit_form`` and nothing more: the answer was
    "no information" after a deep search, and only ``toolweave explain`` of a thread
    ``ask`` had not kept said it was skipped.
    """
    code, out, err = run(capsys, "-v", "ask", "--domain", "permits", FILL)
    assert code == 0, err
    routed = next(line for line in out.splitlines() if " routed: " in line)
    assert "fill_permit_form" in routed
    assert "not run here: fill_permit_form" in routed
    assert "W3" in routed
    code, out, err = run(capsys, "-v", "ask", "--domain", "permits", "How much is a fence permit?")
    assert "not run here" not in out  # a question no client tool is routed for


def test_W3_toolweave_tools_marks_a_client_tool(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``TRAITS`` column says ``client`` for a tool only a client runs, nothing else."""
    code, out, err = run(capsys, "tools", "--domain", "permits")
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert " client " in rows["fill_permit_form"]
    assert "client" not in rows["permit_fees"]


# --- a slow model on the command line (X5) ---


def test_X5_a_model_retry_shows_the_person_a_line_while_the_run_waits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without ``-v``, each retry of a model call is one line for the person, not the error.

    Before, ``toolweave ask`` logged errors only: with a slow model a request timed out
    after 60 s and was asked again, and the person saw no line for minutes (measured on
    the shared 1.5B model: "Split the question into 2 parts", then 60 s of nothing).
    """
    import io
    import logging

    from toolweave.cli.session import retries_shown
    from toolweave.llm import retries
    from toolweave.llm.failures import Failure

    out = io.StringIO()
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # what `toolweave ask` sets without -v
    try:
        with retries_shown(out, "en"):
            retries._after_failure(  # what a timed-out call does before its retry
                TimeoutError("Request timed out."),
                Failure.TRANSIENT,
                0,
                retries.LlmRetryPolicy(max_retries=2, initial_backoff=0.0),
                "cited_answer",
            )
    finally:
        root.setLevel(level)
    assert out.getvalue() == "· The model did not answer; trying again\n"
    assert "timed out" not in capsys.readouterr().err  # the error's text stays with -v
    assert retries.logger.propagate
    assert retries.logger.level == logging.NOTSET  # the command's setting is undone


def test_L1_toolweave_ask_verbose_names_the_candidates_the_routing_declined_and_why(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-v`` says what the routing said of each tool it did not choose.

    Before, a question that reached the wrong tool showed only "routed: permits_search":
    what was said of the right one was in the ledger only, and ``toolweave explain`` has
    no thread to read after a one-off ``toolweave ask``.
    """
    question = "When is the permits office open on Friday?"
    code, out, err = run(capsys, "-v", "ask", "--domain", "permits", question)
    assert code == 0, err
    declined = [line for line in out.splitlines() if " declined: " in line]
    assert len(declined) == 1, out
    assert declined[0].startswith("· 1 declined: permit_fees (")  # with what was said of it
    assert "fill_permit_form (" in declined[0]
    code, out, err = run(capsys, "ask", "--domain", "permits", question)
    assert "declined" not in out  # the person's view stays as it was


def test_K3_a_skipped_conditional_subtask_leaves_the_parents_routing_as_documented(
    graph: Any,
) -> None:
    """``SKIP`` skips the subtask only: the parent is routed on the whole question after it.

    The coordinators page says so (a new user expected the skipped subtask's tool to stay
    out of the run); the fence's "needs no inspection" comes from the parent's routing.
    """
    out = ask(graph, "What does a fence permit cost and does it need an inspection?")
    assert out["activated"][0] == "1.1:permit_fees"
    assert not any(a.startswith("1.2:") for a in out["activated"])  # skipped (K3)
    assert "1:inspection_rules" in out["activated"]  # routed on the parent
    assert "A fence permit needs no inspection." in out["answer"]


# --- the notebook (sync entry points, a cell that shows the graph) ---


def test_N1_the_graph_shows_itself_in_a_notebook_without_the_network(
    graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell ending in ``graph`` gets Mermaid text, never a PNG fetched from a web service.

    Before, Jupyter's display called LangGraph's ``draw_mermaid_png()``, which asks
    mermaid.ink: offline the cell waited, then failed with a ``ValueError``.
    """
    from langchain_core.runnables.graph import Graph

    def no_network(*args: Any, **kwargs: Any) -> bytes:
        raise AssertionError("draw_mermaid_png() calls a web service")

    monkeypatch.setattr(Graph, "draw_mermaid_png", no_network)
    shown = graph._repr_mimebundle_()
    assert "image/png" not in shown
    assert shown["text/markdown"].startswith("```mermaid\n")
    assert "route" in shown["text/markdown"]


def test_R4_a_streamed_answer_ending_in_a_line_break_is_followed_by_no_blank_line(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The status tool streams whole lines ("...\\n"); the CLI ends the answer once.

    Before, the answer's last streamed line break was followed by another one: a blank
    line under every streamed answer whose chunks end their lines.
    """
    applicant = '{"applicant_id": "A-1001"}'
    question = "What is the status of my application?"
    code, out, err = run(capsys, "ask", "--domain", "permits", "--user-data", applicant, question)
    assert code == 0, err
    assert out.endswith("A decision is expected by 20 January.\n"), repr(out[-80:])


def test_N1_ingests_ask_hint_names_the_data_dir_it_was_given(
    installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``ask:`` line after ``ingest --data-dir D`` is a command that finds the pages.

    Before, it read ``toolweave ask --domain NAME "..."``, which looked in the default data
    directory and answered "unknown domain" (and so after ``--database-url URL``).
    """
    elsewhere = tmp_path / "other data"
    code, out, err = run(
        capsys, "ingest", str(PAGES), "--domain", "permits-x", "--data-dir", str(elsewhere)
    )
    assert code == 0, err
    hint = next(line for line in out.splitlines() if line.startswith("ask: "))
    import shlex

    argv = shlex.split(hint.removeprefix("ask: toolweave "))
    argv[-1] = "How much does a fence permit cost?"
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "45 euros" in out


class InspectionSlots(AiTool):
    """A SERVER AI tool written async-first: ``aexecute`` only, as the AI tools page allows."""

    def define(self, builder: AiToolBuilder) -> None:
        (
            builder.id("inspection_slots")
            .name("Inspection slots")
            .user_description("The free inspection slots of a day.")
            .ai_description("true when the user asks for free inspection slots")
            .input_json_schema(
                '{"type": "object", "properties": '
                '{"day": {"type": "string", "enum": ["tuesday", "thursday"]}}}'
            )
            .scope(AiToolScope.SERVER)
        )

    async def aexecute(self, input: str) -> str:
        await asyncio.sleep(0)
        return "Free inspection slots on Tuesday: 9:00 and 10:30."


def test_T9_W6_an_async_only_ai_tool_answers_under_a_sync_invoke_and_by_function_calling() -> None:
    """An AI system tool with only ``aexecute`` runs under ``invoke`` as under ``ainvoke``.

    Before, the sync path called the default ``execute``: "Slots must implement
    execute()", a warning, and "I found no information" (R7), while ``ainvoke`` answered.
    """
    registry = AiToolRegistry()
    registry.register(InspectionSlots())
    graph = build_graph(Domain(name="permits"), as_chatbot_tools(registry, domain="permits"))
    question = {"messages": [("human", "Which free inspection slots are there on tuesday?")]}
    out = graph.invoke(question)
    assert out["activated"] == ["1:inspection_slots"]
    assert out["answer"] == "Free inspection slots on Tuesday: 9:00 and 10:30."
    assert asyncio.run(graph.ainvoke(question))["answer"] == out["answer"]
    (tool,) = as_langchain_tools(registry)
    assert tool.invoke({"day": "tuesday"}) == out["answer"]  # by function calling, sync


def test_T9_T14_an_async_langchain_tool_keeping_a_client_works_on_every_sync_invoke() -> None:
    """An async-only LangChain (or MCP) tool gets the sync callers' loop too, not a new one.

    Before, the adapter ran it with ``asyncio.run``: a client it kept failed from the
    second ``invoke`` on, and a notebook cell (a running loop) could not run it at all.
    """
    client = LoopBoundClient()

    @tool
    async def counter_hours(office: Literal["permits", "records"]) -> str:
        """When the counter of an office of the town hall is open."""
        return f"{office}: {await client.get()}"

    graph = build_graph(
        Domain(name="permits"), [from_langchain_tool(counter_hours, domain="permits")]
    )
    question = "When is the permits counter open?"

    async def cell() -> dict[str, Any]:
        return ask(graph, question)  # sync, while this loop runs

    for out in (ask(graph, question), ask(graph, question), asyncio.run(cell())):
        assert out["activated"] == ["1:counter_hours"]
        assert out["answer"] == "permits: The counter is open from 8:30."
