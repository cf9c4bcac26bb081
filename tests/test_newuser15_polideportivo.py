"""N1 (fifteenth round): a Spanish municipal sports centre, from the README and docs only.

Polideportivo Municipal de Villaejemplo: six Spanish pages, a court booking that acts
through a real HTTP server on 127.0.0.1 (which does not dedupe on the key), a price and
the court hours. Its two xfail tests pass since the sixteenth round (N1: the store's
stop words reach the offline routing and reading).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from newuser15_domain import GOLDEN_FILE, TEXTS, polideportivo_domain_and_tools
from newuser15_domain import tools as pt

from toolweave import Limits, RunContext, build_graph, pending_clarification, reply

ROOT = Path(__file__).resolve().parents[1]
TOOLWEAVE = ROOT / ".venv" / "bin" / "toolweave"
SOCIO = RunContext(user_data={"socio_id": "S-0042"})
RESERVA = "Quiero reservar una pista de tenis para el sábado."
CONFIRMADA = "Reserva confirmada: pista de tenis, número R-1."
LIMITS = Limits(thread_wait_s=4.0, acting_call_lease_s=3.0)


def es(key: str) -> str:
    return TEXTS[key]["es"]


# ---------------------------------------------------------------- the booking backend


class Backend:
    """Counts every booking it gets; never dedupes on the Idempotency-Key header."""

    def __init__(self) -> None:
        self.bookings: list[dict[str, Any]] = []
        self.delay_s = 0.0
        self.lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                body["key"] = self.headers.get("Idempotency-Key")
                with backend.lock:
                    backend.bookings.append(body)
                    numero = len(backend.bookings)
                time.sleep(backend.delay_s)
                payload = json.dumps({"numero": numero}).encode()
                self.send_response(201)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    async def wait_for(self, count: int, timeout_s: float = 5.0) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.bookings) < count:
            assert time.monotonic() < deadline, f"backend got {len(self.bookings)} booking(s)"
            await asyncio.sleep(0.01)


@pytest.fixture
def backend() -> Iterator[Backend]:
    server = Backend()
    server.thread.start()
    pt.BACKEND["url"] = server.url
    try:
        yield server
    finally:
        pt.BACKEND.clear()
        server.server.shutdown()
        server.server.server_close()


def graph(**kwargs: Any) -> Any:
    domain, tools = polideportivo_domain_and_tools()
    kwargs.setdefault("checkpointer", InMemorySaver())
    kwargs.setdefault("limits", LIMITS)
    return build_graph(domain, tools, **kwargs)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


# ---------------------------------------------------------------- answers in Spanish


def test_N1_plugin_builds_the_domain_with_its_tools() -> None:
    domain, tools = polideportivo_domain_and_tools()
    assert domain.name == "polideportivo"
    names = [t.name for t in tools]
    assert {"reservar_pista", "tarifas", "horarios", "polideportivo_search"} <= set(names)


def test_N1_front_matter_names_the_source_and_the_page_marker_pages_it(backend: Backend) -> None:
    out = graph().invoke(ask("¿Cuántos metros mide la piscina?"), cfg("t"))
    assert out["answer"] == "La piscina cubierta mide 25 metros y tiene seis calles."
    (src,) = out["sources"]
    assert (src.name, src.url) == (
        "Guía de instalaciones",
        "https://deportes.villaejemplo.example/instalaciones",
    )
    assert (src.pages, src.page_count) == ((3,), 3)


def test_R3_tarifas_computes_a_finished_answer() -> None:
    out = graph().invoke(ask("¿Qué precio tienen 2 horas de tenis para un socio?"), cfg("t"))
    assert out["activated"] == ["1:tarifas"]
    assert out["answer"] == "Precio: tenis, 2 horas, tarifa de socio: 12,00 €."


def test_R2_horarios_context_reaches_the_answer() -> None:
    out = graph().invoke(ask("¿A qué hora cierran las pistas?"), cfg("t"))
    assert "1:horarios" in out["activated"]
    assert "Los domingos las pistas cierran a las 14:00." in out["answer"]


def test_R2_horarios_line_for_the_pavilion_is_answered() -> None:
    out = graph().invoke(ask("¿Cuál es el horario de las pistas del pabellón?"), cfg("t"))
    assert "1:horarios" in out["activated"]
    assert "21:00" in out["answer"]


def test_T10_P4_no_information_is_the_domains_spanish_sentence() -> None:
    out = graph().invoke(ask("¿Tienen sauna para socios?"), cfg("t"))
    assert out["answer"] == es("no_information")


def test_T10_a_spanish_question_with_de_and_an_accent_is_spanish() -> None:
    for q in ("¿Cuál es el horario de las pistas?", "Quiero reservar una pista de pádel."):
        out = graph().invoke(ask(q), cfg("t"))
        normalized = next(e for e in out["ledger"] if e.kind == "normalized")
        assert normalized.verdict == "es", (q, normalized.reason)


# ---------------------------------------------------------------- gate and clarification


def test_T4_the_booking_is_for_socios_only(backend: Backend) -> None:
    out = graph().invoke(ask(RESERVA), cfg("t"))
    assert not any("reservar_pista" in a for a in out["activated"])
    assert backend.bookings == []
    refused = [e for e in out["ledger"] if e.kind == "gate" and e.tool == "reservar_pista"]
    assert refused
    assert refused[0].verdict == "refused: eligibility"


def test_Q1_Q2_asks_for_the_sport_then_books_once(backend: Backend) -> None:
    g = graph()
    first = g.invoke(ask("Quiero reservar una pista."), cfg("c"), context=SOCIO)
    assert first.get("answer") is None
    pending = pending_clarification(g, cfg("c"))
    assert pending["question"] == "¿Para qué deporte quiere reservar la pista?"
    assert pending["choices"] == ["pádel", "tenis", "baloncesto", "fútbol sala"]
    out = reply(g, cfg("c"), "2", context=SOCIO)  # the second choice: tenis
    assert out["answer"] == CONFIRMADA
    assert [(b["socio"], b["deporte"]) for b in backend.bookings] == [("S-0042", "tenis")]
    assert backend.bookings[0]["key"].startswith("tw1-")


def test_T4_a_reply_without_the_socio_data_does_not_book(backend: Backend) -> None:
    g = graph()
    g.invoke(ask("Quiero reservar una pista."), cfg("c"), context=SOCIO)
    out = reply(g, cfg("c"), "tenis")
    assert backend.bookings == []
    assert "Reserva confirmada" not in (out.get("answer") or "")


def test_Q2_the_reply_as_the_next_message_books(backend: Backend) -> None:
    g = graph()
    g.invoke(ask("Quiero reservar una pista."), cfg("c"), context=SOCIO)
    out = g.invoke(ask("baloncesto"), cfg("c"), context=SOCIO)
    assert out["answer"] == "Reserva confirmada: pista de baloncesto, número R-1."
    assert len(backend.bookings) == 1


# ---------------------------------------------------------------- invoke / ainvoke / astream


def test_S5_ainvoke_books_once_through_the_async_tool(backend: Backend) -> None:
    out = asyncio.run(graph().ainvoke(ask(RESERVA), cfg("a"), context=SOCIO))
    assert out["activated"] == ["1:reservar_pista"]
    assert out["answer"] == CONFIRMADA
    assert len(backend.bookings) == 1


def test_P4_astream_says_the_progress_in_spanish(backend: Backend) -> None:
    async def run() -> list[dict[str, Any]]:
        events = []
        async for mode, chunk in graph().astream(
            ask(RESERVA), cfg("s"), context=SOCIO, stream_mode=["custom", "messages"]
        ):
            if mode == "custom":
                events.append(chunk)
        return events

    events = asyncio.run(run())
    progress = [e for e in events if e["type"] == "tool_progress" and e["tool"] == "reservar_pista"]
    assert progress[0]["text"] == "TOOL_PROGRESS:RESERVAR_PISTA:RESERVANDO"
    assert progress[0]["phrase"] == "Reservando la pista"
    assert len(backend.bookings) == 1


# ---------------------------------------------------------------- side effects: exactly once


def test_S5_Q6_a_the_same_message_sent_twice_books_once(backend: Backend) -> None:
    g = graph()
    first = g.invoke(ask(RESERVA), cfg("twice"), context=SOCIO)
    assert first["answer"] == CONFIRMADA
    events = [
        chunk
        for mode, chunk in g.stream(
            ask(RESERVA), cfg("twice"), context=SOCIO, stream_mode=["custom", "values"]
        )
        if mode == "custom"
    ]
    assert len(backend.bookings) == 1
    assert g.get_state(cfg("twice")).values["answer"] == CONFIRMADA
    sent_again = [e for e in events if e["type"] == "sent_again"]
    assert sent_again
    assert sent_again[0]["phrase"] == es("sent_again")


def test_S5_Q5_b_a_stream_closed_by_the_client_mid_call_books_once(backend: Backend) -> None:
    backend.delay_s = 0.5

    async def run() -> dict[str, Any]:
        g = graph(store=InMemoryStore())
        stream = g.astream(ask(RESERVA), cfg("closed"), context=SOCIO, stream_mode="custom")
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if event.get("type") == "tool_progress" and event["tool"] == "reservar_pista":
                    break  # the client goes away while the booking is in flight
        await backend.wait_for(1)
        return await g.ainvoke(ask(RESERVA), cfg("closed"), context=SOCIO)

    out = asyncio.run(run())
    assert len(backend.bookings) == 1, backend.bookings
    assert out["answer"] == CONFIRMADA


def test_S5_Q6_c_a_run_cancelled_mid_call_then_sent_again_books_once(backend: Backend) -> None:
    backend.delay_s = 0.5

    async def run() -> dict[str, Any]:
        g = graph(store=InMemoryStore())
        task = asyncio.create_task(g.ainvoke(ask(RESERVA), cfg("cancel"), context=SOCIO))
        await backend.wait_for(1)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return await g.ainvoke(ask(RESERVA), cfg("cancel"), context=SOCIO)

    out = asyncio.run(run())
    assert len(backend.bookings) == 1, backend.bookings
    assert out["answer"] == CONFIRMADA


def test_S5_Q6_d_two_workers_over_one_checkpointer_and_store_book_once(backend: Backend) -> None:
    backend.delay_s = 1.0
    saver, store = InMemorySaver(), InMemoryStore()

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        worker1 = graph(checkpointer=saver, store=store)
        worker2 = graph(checkpointer=saver, store=store)
        first = asyncio.create_task(worker1.ainvoke(ask(RESERVA), cfg("two"), context=SOCIO))
        await backend.wait_for(1)
        second = await worker2.ainvoke(ask(RESERVA), cfg("two"), context=SOCIO)
        return await first, second

    first, second = asyncio.run(run())
    assert len(backend.bookings) == 1, backend.bookings
    assert first["answer"] == CONFIRMADA
    assert second["answer"] in (CONFIRMADA, es("still_running").format(tool="reservar pista"))


# ---------------------------------------------------------------- the console script


@pytest.fixture
def cli_env(tmp_path: Path, backend: Backend) -> dict[str, str]:
    """Register the package as a `toolweave.plugins` entry point: a dist-info on PYTHONPATH."""
    dist = tmp_path / "site" / "toolweave_newuser15-0.0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolweave-newuser15\nVersion: 0.0.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[toolweave.plugins]\npolideportivo = newuser15_domain:plugin\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TOOLWEAVE_MODEL", "TOOLWEAVE_DOMAIN")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(ROOT / "tests")])
    env["TOOLWEAVE_DATA_DIR"] = str(tmp_path / "data")
    env["POLIDEPORTIVO_RESERVAS_URL"] = backend.url
    env["NO_PROXY"] = "127.0.0.1"
    return env


def tw(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOOLWEAVE), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_T10_P4_cli_lines_and_sources_heading_in_spanish(cli_env: dict[str, str]) -> None:
    done = tw(cli_env, "ask", "--domain", "polideportivo", "¿Cuántos metros mide la piscina?")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == es("offline"), done.stdout
    assert "La piscina cubierta mide 25 metros" in done.stdout
    assert es("sources") in lines, done.stdout
    assert "Guía de instalaciones, pág. 3" in done.stdout, done.stdout


def test_Q1_cli_clarification_reply_hint_in_spanish_then_books_once(
    cli_env: dict[str, str], backend: Backend
) -> None:
    user = json.dumps({"socio_id": "S-7"})
    asked = tw(
        cli_env,
        "ask",
        "--domain",
        "polideportivo",
        "--user-data",
        user,
        "Quiero reservar una pista.",
    )
    assert asked.returncode == 0, asked.stderr
    assert "¿Para qué deporte quiere reservar la pista?" in asked.stdout
    assert "(responda con: toolweave ask --thread" in asked.stdout, asked.stdout
    thread = asked.stdout.split("--thread ", 1)[1].split()[0]
    booked = tw(
        cli_env, "ask", "--thread", thread, "--domain", "polideportivo", "--user-data", user, "1"
    )
    assert booked.returncode == 0, booked.stderr
    assert "Reserva confirmada: pista de pádel, número R-1." in booked.stdout
    again = tw(
        cli_env, "ask", "--thread", thread, "--domain", "polideportivo", "--user-data", user, "1"
    )
    assert again.returncode == 0, again.stderr
    assert len(backend.bookings) == 1, (backend.bookings, again.stdout)


def test_G1_cli_eval_reads_the_golden_file_and_its_halves(
    cli_env: dict[str, str], backend: Backend
) -> None:
    lines = GOLDEN_FILE.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10
    splits = [json.loads(line)["split"] for line in lines]
    assert splits == ["dev", "heldout"] * 5
    done = tw(cli_env, "eval", str(GOLDEN_FILE), "--domain", "polideportivo", "--split", "dev")
    assert done.returncode == 0, done.stderr
    assert "dev" in done.stdout
    both = tw(cli_env, "eval", "--domain", "polideportivo", "--failures")
    assert both.returncode == 0, both.stderr
    assert "heldout" in both.stdout, both.stdout
    assert backend.bookings == []  # the booking cases stop at the clarification


def test_T12_a_store_stop_word_is_no_routing_evidence() -> None:
    domain, tools = polideportivo_domain_and_tools()

    class TarifasConTiene(pt.Tarifas):
        routing_examples = (*pt.Tarifas.routing_examples, "¿Qué precio tiene la pista de tenis?")

    tools = [TarifasConTiene() if t.name == "tarifas" else t for t in tools]
    out = build_graph(domain, tools, checkpointer=InMemorySaver()).invoke(
        ask("¿Tienen sauna?"), cfg("t")
    )
    routed = [e.tool for e in out["ledger"] if e.kind == "routing" and e.verdict == "routed"]
    assert routed == [], routed
