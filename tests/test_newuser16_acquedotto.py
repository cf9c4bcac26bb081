"""The sixteenth new user: an Italian water utility, written from the README and docs alone.

``tests/newuser16_domain`` is the domain (seven Italian pages, Italian ``texts=``) with a
context tool and a meter-reading tool that both talk to an HTTP server started here on
127.0.0.1; the server counts every POST. The point of the round: the reading is sent
once whatever way a new user sends it twice (S5, Q6).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from urllib.request import Request, urlopen

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from newuser16_domain import TEXTS, acquedotto_domain_and_tools
from newuser16_domain.tools import Autolettura, AutoletturaRequest

from toolweave import (
    ClientToolRegistry,
    InvalidContextError,
    InvalidRequestError,
    NothingPendingError,
    RunContext,
    SqliteDocumentStore,
    ToolCallContext,
    ToolResult,
    build_graph,
    ingest,
    pending_clarification,
    reply,
    resume_interrupted,
    run_with_client_tools,
    thread_status,
)

pytestmark = pytest.mark.network

HERE = Path(__file__).resolve().parent
PAGES = HERE / "newuser16_domain" / "pages"
CUSTOMER = RunContext(user_data={"codice_cliente": "AC-123456"})
READING = "Vorrei comunicare l'autolettura: il contatore segna 1234, codice cliente AC-123456."

INTERRUPTIONS = [
    {
        "via": "via Garibaldi",
        "giorno": "12 dicembre",
        "dalle": "8:00",
        "alle": "14:00",
        "motivo": "sostituzione della condotta",
    },
]


class Backend:
    """The utility's back end: planned interruptions (GET), meter readings (POST).

    Every POST is counted in ``posts`` (key, body); a reading is recorded once per
    ``Idempotency-Key`` in ``readings``, as the docs ask of a tool that acts (Q6).
    """

    def __init__(self) -> None:
        self.posts: list[tuple[str | None, dict[str, Any]]] = []
        self.readings: dict[str, dict[str, Any]] = {}
        self.delay = 0.0
        self.lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                via = (parse_qs(urlparse(self.path).query).get("via") or [""])[0]
                self._send([r for r in INTERRUPTIONS if r["via"].lower() == via.lower()])

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = self.headers.get("Idempotency-Key")
                with backend.lock:
                    backend.posts.append((key, body))
                if backend.delay:
                    time.sleep(backend.delay)
                with backend.lock:
                    number = len(backend.readings) + 1
                    stored = backend.readings.setdefault(
                        key or f"none-{len(backend.posts)}",
                        {**body, "protocollo": f"AL-{number:04d}"},
                    )
                self._send({"protocollo": stored["protocollo"]})

            def _send(self, value: object) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def keys(self) -> set[str | None]:
        return {key for key, _ in self.posts}


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture(scope="module")
def store() -> SqliteDocumentStore:
    from newuser16_domain import STOPWORDS

    built = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    ingest([PAGES], built, domain="acquedotto")
    return built


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLWEAVE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def graph_for(backend: Backend, pages: SqliteDocumentStore, **kwargs: Any) -> Any:
    domain, tools = acquedotto_domain_and_tools(backend.url, store=pages)
    kwargs.setdefault("checkpointer", InMemorySaver())
    return build_graph(domain, tools, **kwargs)


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def ask(graph: Any, text: str | HumanMessage, config: dict[str, Any], **kw: Any) -> Any:
    return graph.invoke({"messages": [text]}, config, context=CUSTOMER, **kw)


# --- the tools, as documented --------------------------------------------------------------


def test_R2_interruptions_by_street_come_from_the_server_with_their_source(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    out = ask(graph, "Ci sono interruzioni dell'acqua in via Garibaldi?", thread("r2"))
    assert "1:interruzioni_programmate" in out["activated"]
    assert "12 dicembre" in out["answer"]
    assert [s.name for s in out["sources"]] == ["Interruzioni programmate"]


def test_R3_the_emergency_number_is_a_finished_answer(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    out = ask(graph, "C'è una perdita d'acqua in strada, chi chiamo?", thread("r3"))
    assert out["activated"] == ["1:numero_guasti"]
    assert "800 112 233" in out["answer"]
    assert out["sources"][0].url.endswith("/pronto-intervento")


def test_T4_a_payment_plan_only_for_a_logged_in_customer(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    question = {"messages": [("human", "Posso pagare la bolletta a rate?")]}
    mine = graph.invoke(question, thread("t4a"), context=CUSTOMER)
    assert "1:rateizzazione" in mine["activated"]
    assert "12 rate da 35,00 euro" in mine["answer"]
    anyone = graph.invoke(question, thread("t4b"))
    assert "rateizzazione" not in str(anyone["activated"])
    assert "35,00" not in anyone["answer"]
    gates = [e for e in anyone["ledger"] if e.kind == "gate"]
    assert [e.tool for e in gates] == ["rateizzazione"]


def test_T10_P4_an_unanswerable_italian_question_gets_the_domains_italian_sentence(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    out = ask(graph, "Il comune ha una piscina coperta?", thread("t10"))
    assert out["answer"] == TEXTS["no_information"]["it"]


def test_R2_a_tariff_question_is_answered_from_the_pages_with_sources(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    out = ask(graph, "Quanto costa l'acqua al metro cubo fino a 80 metri cubi?", thread("tar"))
    assert "0,95 euro" in out["answer"]
    assert [s.name for s in out["sources"]] == ["Tariffe del servizio idrico"]
    assert backend.posts == []


# --- the reading is sent once (S5, Q6) -----------------------------------------------------


def test_S5_the_same_question_sent_again_on_the_thread_posts_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    first = ask(graph, READING, thread("again"))
    assert first["answer"].startswith("Autolettura registrata: 1234 metri cubi")
    events = list(
        graph.stream(
            {"messages": [READING.lower().rstrip(".")]},
            thread("again"),
            context=CUSTOMER,
            stream_mode="custom",
        )
    )
    assert [e["type"] for e in events] == ["sent_again"]
    assert events[0]["phrase"] == TEXTS["sent_again"]["it"]
    assert len(backend.posts) == 1


def test_S5_a_message_resent_with_its_id_posts_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    message = HumanMessage(READING, id="msg-1")
    ask(graph, message, thread("id"))
    out = ask(graph, HumanMessage(READING, id="msg-1"), thread("id"))
    assert out["answer"].startswith("Autolettura registrata")
    assert len(backend.posts) == 1


def test_Q1_S5_the_missing_customer_code_is_asked_and_the_reading_posted_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    config = thread("q1")
    ask(graph, "Vorrei comunicare l'autolettura del contatore: 1234.", config)
    asked = pending_clarification(graph, config)
    assert asked is not None
    assert asked["question"] == "Quale codice cliente (per esempio AC-123456)?"
    assert backend.posts == []
    out = reply(graph, config, "AC-123456", context=CUSTOMER)
    assert out["answer"].startswith("Autolettura registrata: 1234 metri cubi per il cliente AC-")
    # the reply sent again: as a reply (nothing waits), then as the next message
    with pytest.raises(NothingPendingError):
        reply(graph, config, "AC-123456", context=CUSTOMER)
    again = ask(graph, "AC-123456", config)
    assert again["answer"] == out["answer"]
    assert len(backend.posts) == 1


def test_Q1_S5_both_inputs_asked_one_after_the_other_then_one_post(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    config = thread("q1b")
    ask(graph, "Vorrei comunicare l'autolettura del contatore.", config)
    first = pending_clarification(graph, config)
    assert first is not None
    reply(graph, config, "AC-654321", context=CUSTOMER)
    second = pending_clarification(graph, config)
    assert second is not None
    assert second["question"].startswith("Quale lettura del contatore")
    out = reply(graph, config, "987", context=CUSTOMER)
    assert "987 metri cubi per il cliente AC-654321" in out["answer"]
    assert [body for _, body in backend.posts] == [{"codice_cliente": "AC-654321", "lettura": 987}]


def test_Q2_S5_the_question_sent_again_while_its_code_is_asked_posts_nothing_yet(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    config = thread("q2")
    question = "Vorrei comunicare l'autolettura del contatore: 1234."
    ask(graph, question, config)
    ask(graph, question, config)  # the person unsure it went through
    assert pending_clarification(graph, config) is not None
    out = reply(graph, config, "AC-123456", context=CUSTOMER)
    assert out["answer"].startswith("Autolettura registrata")
    assert len(backend.posts) == 1


class CrashAfterPost(Autolettura):
    """The reading tool, killed right after its POST the first time (a process crash)."""

    crashed = False

    def execute(self, request: AutoletturaRequest, ctx: ToolCallContext) -> ToolResult | None:
        result = super().execute(request, ctx)
        if not CrashAfterPost.crashed:
            CrashAfterPost.crashed = True
            raise KeyboardInterrupt("the process dies after the POST")
        return result


def crashing_graph(backend: Backend, store: SqliteDocumentStore) -> Any:
    domain, tools = acquedotto_domain_and_tools(backend.url, store=store)
    tools = [CrashAfterPost(backend.url) if t.name == "autolettura" else t for t in tools]
    CrashAfterPost.crashed = False
    return build_graph(domain, tools, checkpointer=InMemorySaver())


def test_Q6_a_crash_after_the_post_then_resume_posts_again_under_the_same_key(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = crashing_graph(backend, store)
    config = thread("crash")
    with pytest.raises(KeyboardInterrupt):
        ask(graph, READING, config)
    assert thread_status(graph, config).kind == "interrupted_mid_run"
    out = resume_interrupted(graph, config, context=CUSTOMER)
    assert out["answer"].startswith("Autolettura registrata")
    # at least once across crashes, one key: the server's dedupe keeps one reading (Q6)
    assert len(backend.posts) == 2
    assert len(backend.keys()) == 1
    assert len(backend.readings) == 1


def test_S5_Q6_a_retry_of_the_run_after_a_crash_is_the_same_call(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = crashing_graph(backend, store)
    config = thread("retry")
    with pytest.raises(KeyboardInterrupt):
        ask(graph, READING, config)
    out = ask(graph, READING, config)  # the caller retries the same message
    assert out["answer"].startswith("Autolettura registrata")
    assert len(backend.keys()) == 1
    assert len(backend.readings) == 1
    # and once more: the message was answered, and acted on, already
    ask(graph, READING, config)
    assert len(backend.posts) == 2


def test_R7_a_failing_server_is_said_in_italian_and_not_posted_again_by_itself(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    backend.server.server_close()  # the back end is down: the POST raises
    out = ask(graph, READING, thread("down"))
    # R7: the connection was cut after the request went out (ConnectionResetError): the
    # library cannot know whether the server acted, so it says so (unsure_effect)
    assert out["answer"].startswith("Non so se questo è stato fatto: autolettura non ha")


def test_S5_two_concurrent_runs_on_one_thread_post_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    backend.delay = 1.0  # a slow server: the second run arrives during the POST
    outs: list[Any] = []

    def run() -> None:
        outs.append(ask(graph, READING, thread("twice")))

    runners = [threading.Thread(target=run) for _ in range(2)]
    for runner in runners:
        runner.start()
        time.sleep(0.3)
    for runner in runners:
        runner.join(timeout=60)
    assert len(outs) == 2
    assert all(o["answer"].startswith("Autolettura registrata") for o in outs)
    assert len(backend.posts) == 1


def test_S5_Q6_a_run_cancelled_during_a_slow_post_then_sent_again_posts_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    backend.delay = 1.5

    async def scenario() -> Any:
        run = graph.ainvoke({"messages": [READING]}, thread("cancel"), context=CUSTOMER)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(run, timeout=0.6)  # cancelled inside the POST
        assert len(backend.posts) == 1
        return await graph.ainvoke({"messages": [READING]}, thread("cancel"), context=CUSTOMER)

    out = asyncio.run(scenario())
    assert out["answer"].startswith("Autolettura registrata: 1234 metri cubi")
    assert len(backend.posts) == 1


def test_S5_Q6_a_run_cancelled_then_resumed_in_a_new_graph_over_the_store_posts_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    saver, journal = InMemorySaver(), InMemoryStore()
    first = graph_for(backend, store, checkpointer=saver, store=journal)
    backend.delay = 1.5

    async def scenario() -> Any:
        run = first.ainvoke({"messages": [READING]}, thread("moved"), context=CUSTOMER)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(run, timeout=0.6)
        second = graph_for(backend, store, checkpointer=saver, store=journal)  # another worker
        return await second.ainvoke({"messages": [READING]}, thread("moved"), context=CUSTOMER)

    out = asyncio.run(scenario())
    assert out["answer"].startswith("Autolettura registrata")
    assert len(backend.posts) == 1


def test_S5_the_sync_and_the_async_entry_points_on_one_thread_post_once(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    config = thread("sync-async")
    graph.invoke({"messages": [READING]}, config, context=CUSTOMER)

    async def again() -> list[Any]:
        await graph.ainvoke({"messages": [READING]}, config, context=CUSTOMER)
        return [
            chunk
            async for chunk in graph.astream(
                {"messages": [READING]}, config, context=CUSTOMER, stream_mode="custom"
            )
        ]

    events = asyncio.run(again())
    assert [e["type"] for e in events] == ["sent_again"]
    assert len(backend.posts) == 1


def test_S5_a_new_reading_in_other_words_is_a_new_request(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    config = thread("new")
    ask(graph, READING, config)
    ask(graph, "Registra la mia lettura del contatore 1250, codice cliente AC-123456.", config)
    assert [body["lettura"] for _, body in backend.posts] == [1234, 1250]


# --- what the person reads, and bad input ---------------------------------------------------


def test_W3_the_connection_form_runs_in_the_page_only(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    graph = graph_for(backend, store)
    question = "Vorrei compilare il modulo A1 per un nuovo allacciamento domestico."
    here = ask(graph, question, thread("w3a"))
    assert TEXTS["client_only"]["it"].format(tool="Modulo A1 di allacciamento") in here["answer"]
    page = ClientToolRegistry()
    page.register(
        "compila_modulo_allacciamento",
        lambda _input: "Il modulo A1 è compilato: controllatelo e inviatelo.",
    )
    out = run_with_client_tools(graph, {"messages": [question]}, thread("w3b"), page)
    assert "Il modulo A1 è compilato" in out["answer"]


def test_X1_bad_input_gets_a_clear_error(backend: Backend, store: SqliteDocumentStore) -> None:
    graph = graph_for(backend, store)
    with pytest.raises(InvalidRequestError, match="empty"):
        graph.invoke({"messages": ["   "]}, thread("x1"))
    with pytest.raises(InvalidContextError, match="user_dat"):
        graph.invoke({"messages": [READING]}, thread("x1"), context={"user_dat": {}})
    ask(graph, "Ci sono interruzioni in via Roma?", thread("x1b"))
    with pytest.raises(NothingPendingError, match="not waiting"):
        reply(graph, thread("x1b"), "AC-123456")
    assert backend.posts == []


# --- the command line, through an entry point ----------------------------------------------


def test_W5_the_cli_asks_the_domain_through_its_entry_point(
    backend: Backend, tmp_path: Path
) -> None:
    info = tmp_path / "site" / "toolweave_acquedotto-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toolweave-acquedotto\n")
    (info / "entry_points.txt").write_text(
        "[toolweave.plugins]\nacquedotto = newuser16_domain:plugin\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLWEAVE_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(info.parent), str(HERE)]),
        ACQUEDOTTO_URL=backend.url,
        TOOLWEAVE_DATA_DIR=str(tmp_path / "data"),
    )
    cli = [sys.executable, "-m", "toolweave"]
    listed = subprocess.run([*cli, "domains"], env=env, capture_output=True, text=True)
    assert "acquedotto" in listed.stdout, listed.stderr
    asked = subprocess.run(
        [*cli, "ask", "--domain", "acquedotto", "Ci sono interruzioni in via Garibaldi?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert asked.returncode == 0, asked.stderr
    lines = asked.stdout.splitlines()
    assert lines[0] == TEXTS["offline"]["it"]
    assert "· Controllo le interruzioni programmate" in lines
    assert "· Cerco nelle pagine dell'acquedotto" in lines  # the domain's P4 phrases
    assert "12 dicembre" in asked.stdout
    assert "Fonti:" in lines


# --- found by this round --------------------------------------------------------------------


def test_S5_Q2_the_same_reply_sent_twice_at_once_waits_and_reads_the_finished_run(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    """A double click on the reply: the second waits for the first's run (a slow POST).

    Before, ``reply`` read the thread while the first reply's run was still in its POST, saw
    a step not saved yet and said "its last run stopped mid-way (finish it with
    toolweave.resume_interrupted)": advice to finish a run that was still going.
    """
    graph = graph_for(backend, store)
    config = thread("double-click")
    ask(graph, "Vorrei comunicare l'autolettura del contatore: 1234.", config)
    backend.delay = 1.0
    outcomes: list[Any] = []

    def send() -> None:
        try:
            outcomes.append(reply(graph, config, "AC-123456", context=CUSTOMER)["answer"])
        except NothingPendingError as error:
            outcomes.append(error)

    first = threading.Thread(target=send)
    first.start()
    time.sleep(0.4)  # the first reply's POST is in flight
    send()
    first.join(timeout=60)
    answers = [o for o in outcomes if isinstance(o, str)]
    refused = [o for o in outcomes if isinstance(o, NothingPendingError)]
    assert len(answers) == 1
    assert answers[0].startswith("Autolettura registrata")
    assert [str(e) for e in refused] == [
        "thread 'double-click' is not waiting for a reply: its last run finished"
    ]
    assert len(backend.posts) == 1


class TimesOut(Autolettura):
    """The reading tool with a short client timeout: the server finishes what it gave up on."""

    def execute(self, request: AutoletturaRequest, ctx: ToolCallContext) -> ToolResult | None:
        post = Request(
            f"{self.base_url}/autoletture",
            data=json.dumps(self._body(request)).encode(),
            headers={"Content-Type": "application/json", "Idempotency-Key": ctx.idempotency_key},
            method="POST",
        )
        with urlopen(post, timeout=0.3) as response:
            return self._answer(request, json.loads(response.read()))


def test_S5_Q6_the_reading_asked_again_after_a_timed_out_post_keeps_its_key(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    domain, tools = acquedotto_domain_and_tools(backend.url, store=store)
    tools = [TimesOut(backend.url) if t.name == "autolettura" else t for t in tools]
    graph = build_graph(domain, tools, checkpointer=InMemorySaver())
    backend.delay = 0.8
    config = thread("timeout")
    first = ask(graph, READING, config)
    assert first["answer"].startswith("Non so se questo è stato fatto")  # R7: maybe done
    time.sleep(1.0)  # the server finished the first POST meanwhile
    ask(graph, READING, config)  # the person does as told: asks again
    time.sleep(1.0)
    assert len(backend.readings) == 1


class MeterInEnglish(Autolettura):
    """The reading tool with its routing question in English, as the guide's tools are."""

    executable_instruction = (
        "autolettura: true when the user wants to send (comunicare, inviare) a meter "
        "reading (autolettura, lettura del contatore) for their account."
    )
    not_for = ("Come si legge il contatore?",)


@pytest.mark.xfail(
    strict=True,
    reason="Gap (A9, T12): the English 'meter' of a routing question matches the Italian "
    "'metro'/'metri' (a prefix match across languages), a word no other tool has: the "
    "acting tool's declared intent, so a tariff question submits a reading of 80",
)
def test_A9_a_tariff_question_never_submits_a_meter_reading(
    backend: Backend, store: SqliteDocumentStore
) -> None:
    domain, tools = acquedotto_domain_and_tools(backend.url, store=store)
    tools = [MeterInEnglish(backend.url) if t.name == "autolettura" else t for t in tools]
    graph = build_graph(domain, tools, checkpointer=InMemorySaver())
    config = thread("tariff")
    ask(graph, "Quanto costa l'acqua al metro cubo fino a 80 metri cubi?", config)
    if pending_clarification(graph, config) is not None:  # "Quale codice cliente?"
        reply(graph, config, "AC-123456", context=CUSTOMER)
    assert backend.posts == []
