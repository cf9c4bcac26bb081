"""N1 (fourteenth round): a German citizens' office (Bürgeramt Musterstadt), from the docs only.

Written from the README and docs/ alone; what it met is in docs/guides/new-user-notes.md
("A fourteenth domain"). The xfail tests name gaps that are still open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from newuser14_domain import GOLDEN_FILE, buergeramt_domain_and_tools
from newuser14_domain import tools as bt

from toolweave import RunContext, build_graph, pending_clarification, reply
from toolweave.testing import FunctionAssistant

ROOT = Path(__file__).resolve().parents[1]
TOOLWEAVE = ROOT / ".venv" / "bin" / "toolweave"
ME = RunContext(user_data={"einwohner_id": "E-4711"})
SPLIT_Q = "Ich brauche einen neuen Reisepass: buche einen Termin und sag mir, was er kostet"

NO_INFO_PL = "Nie znaleziono informacji"
NO_INFO_HU = "Nem találtam"


@pytest.fixture(autouse=True)
def fresh_bookings() -> None:
    bt.BOOKINGS.clear()
    bt.BOOKING_DELAY_S[0] = 0.05


def graph(**kwargs):  # type: ignore[no-untyped-def]
    domain, tools = buergeramt_domain_and_tools()
    kwargs.setdefault("checkpointer", InMemorySaver())
    return build_graph(domain, tools, **kwargs)


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


# ---------------------------------------------------------------- offline answers


def test_offline_document_question_in_german() -> None:
    out = graph().invoke(
        {"messages": [("human", "Wann hat das Bürgeramt am Freitag geöffnet?")]}, cfg("t")
    )
    assert "8:00 bis 12:00" in out["answer"]
    assert out["activated"] == ["1:buergeramt_search"]


def test_R3_fee_calculator_gives_a_finished_answer() -> None:
    out = graph().invoke({"messages": [("human", "Was kostet ein Express-Reisepass?")]}, cfg("t"))
    assert out["activated"] == ["1:gebuehren_rechner"]
    assert (
        out["answer"] == "Gebühr: Reisepass: 70,00 €; Expressgebühr: 32,00 €. Zusammen: 102,00 €."
    )


def test_R2_documents_tool_gives_context() -> None:
    q = "Welche Unterlagen brauche ich für einen Personalausweis?"
    out = graph().invoke({"messages": [("human", q)]}, cfg("t"))
    assert "1:unterlagen" in out["activated"]
    assert "Passfoto" in out["answer"]


def test_ingest_reads_front_matter_title_and_url_and_long_page_is_paged() -> None:
    out = graph().invoke(
        {"messages": [("human", "Wie lange dauert ein Express-Reisepass?")]}, cfg("t")
    )
    assert "drei Werktagen" in out["answer"]
    names = [s.name for s in out["sources"]]
    assert any(n.startswith("Reisepass beantragen") for n in names), names
    src = next(s for s in out["sources"] if s.name.startswith("Reisepass beantragen"))
    assert src.url == "https://www.musterstadt.example/buergeramt/reisepass"


def test_T10_P4_no_information_answer_in_the_domains_own_german_text() -> None:
    out = graph().invoke({"messages": [("human", "Gibt es ein Schwimmbad?")]}, cfg("t"))
    assert out["answer"].startswith("Dazu habe ich in den verfügbaren Quellen nichts"), out[
        "answer"
    ]


def test_T10_a_german_question_is_not_answered_in_polish() -> None:
    out = graph().invoke({"messages": [("human", "Gibt es im Rathaus ein Schwimmbad?")]}, cfg("t"))
    assert not out["answer"].startswith(NO_INFO_PL), out["answer"]


# ---------------------------------------------------------------- gate, clarification


def test_T4_booking_is_for_residents_only() -> None:
    g = graph()
    out = g.invoke(
        {"messages": [("human", "Bitte buchen Sie mir einen Termin für einen Reisepass.")]},
        cfg("t"),
    )
    assert not any("termin_buchen" in a for a in out["activated"])
    assert bt.BOOKINGS == []
    refused = [e for e in out["ledger"] if e.kind == "gate" and e.tool == "termin_buchen"]
    assert refused


def test_Q1_Q2_clarification_round_asks_which_service_then_books() -> None:
    g = graph()
    g.invoke({"messages": [("human", "Ich möchte einen Termin buchen.")]}, cfg("c"), context=ME)
    pending = pending_clarification(g, cfg("c"))
    assert pending["question"] == "Für welche Dienstleistung möchten Sie einen Termin?"
    assert pending["choices"] == ["Reisepass", "Personalausweis", "Anmeldung", "Führungszeugnis"]
    out = reply(g, cfg("c"), "2", context=ME)
    assert "Personalausweis ist gebucht" in out["answer"]
    assert [b["dienst"] for b in bt.BOOKINGS] == ["Personalausweis"]


def test_Q2_german_ordinal_reply_picks_the_choice() -> None:
    """clarification.md: ordinals in English, Hungarian or Polish only: "den zweiten" is text."""
    g = graph()
    g.invoke({"messages": [("human", "Ich möchte einen Termin buchen.")]}, cfg("c"), context=ME)
    out = reply(g, cfg("c"), "den zweiten, bitte", context=ME)
    # the tool gets the text as it is, finds no service in it and asks again
    assert out.get("answer") is None
    assert pending_clarification(g, cfg("c")) is not None
    assert bt.BOOKINGS == []


# ---------------------------------------------------------------- the split question


def test_S6_coordinator_splits_booking_and_fee() -> None:
    out = graph().invoke({"messages": [("human", SPLIT_Q)]}, cfg("s"), context=ME)
    assert out["activated"] == ["1.1:termin_buchen", "1.2:gebuehren_rechner"]
    assert "Reisepass ist gebucht" in out["answer"]
    assert "70,00 €" in out["answer"]
    assert len(bt.BOOKINGS) == 1


def test_F4_split_without_user_data_books_nothing_and_still_gives_the_fee() -> None:
    out = graph().invoke({"messages": [("human", SPLIT_Q)]}, cfg("s"))
    assert bt.BOOKINGS == []
    assert "70,00 €" in out["answer"]


def test_function_assistant_double_routes_and_answers() -> None:
    assistant = FunctionAssistant(route=lambda text, tools: ["gebuehren_rechner"])
    out = graph(assistant=assistant).invoke(
        {"messages": [("human", "Was kostet der Reisepass?")]}, cfg("f")
    )
    assert out["activated"] == ["1:gebuehren_rechner"]
    assert out["answer"] == "Gebühr: Reisepass: 70,00 €. Zusammen: 70,00 €."


@pytest.mark.xfail(
    reason="a scripted route yes for a finished-answer tool is demoted to context (A9: no shared "
    "word for 'teuer'/'Pass'), and then the tool's own text is dropped by the citation check (R9): "
    "the person reads passport production times, not the fee the tool computed",
    strict=True,
)
def test_function_assistant_routed_fee_reaches_the_answer_for_a_paraphrase() -> None:
    assistant = FunctionAssistant(route=lambda text, tools: ["gebuehren_rechner"])
    out = graph(assistant=assistant).invoke(
        {"messages": [("human", "Wie teuer ist der Pass?")]}, cfg("f")
    )
    assert "1:gebuehren_rechner" in out["activated"]
    assert "70,00 €" in out["answer"], out["answer"]


# ---------------------------------------------------------------- async: ainvoke and astream


def test_T9_ainvoke_awaits_the_async_booking() -> None:
    g = graph()
    q = {"messages": [("human", "Bitte buchen Sie mir einen Termin für einen Reisepass.")]}
    out = asyncio.run(g.ainvoke(q, cfg("a"), context=ME))
    assert out["activated"][0] == "1:termin_buchen"
    assert len(bt.BOOKINGS) == 1


def test_P4_T10_astream_custom_progress_lines_in_german() -> None:
    g = graph()
    q = {"messages": [("human", "Bitte buchen Sie mir einen Termin für einen Reisepass.")]}

    async def run() -> list[dict]:
        return [e async for e in g.astream(q, cfg("p"), stream_mode="custom", context=ME)]

    events = asyncio.run(run())
    progress = [e for e in events if e["type"] == "tool_progress"]
    texts = [e["text"] for e in progress]
    assert "TOOL_PROGRESS:TERMIN_BUCHEN:BOOKING" in texts
    phrases = {e["event"]: e["phrase"] for e in progress}
    assert phrases["BOOKING"] == "Ich buche Ihren Termin"
    assert phrases["BOOKED"] == "Termin gebucht"
    assert not phrases["FOUND"].startswith("Talált"), phrases["FOUND"]


def test_P1_astream_custom_progress_events_arrive() -> None:
    g = graph()
    q = {"messages": [("human", "Bitte buchen Sie mir einen Termin für einen Reisepass.")]}

    async def run() -> list[dict]:
        return [e async for e in g.astream(q, cfg("p"), stream_mode="custom", context=ME)]

    texts = [e.get("text") for e in asyncio.run(run()) if e["type"] == "tool_progress"]
    assert texts[:2] == [
        "TOOL_PROGRESS:TERMIN_BUCHEN:BOOKING",
        "TOOL_PROGRESS:TERMIN_BUCHEN:BOOKED",
    ]


def test_S5_Q6_stream_closed_mid_tool_then_same_message_books_once() -> None:
    bt.BOOKING_DELAY_S[0] = 0.3
    g = graph()
    msg = "Bitte buchen Sie mir einen Termin für einen Reisepass."

    async def run() -> dict:
        async with contextlib.aclosing(
            g.astream({"messages": [HumanMessage(msg)]}, cfg("x"), stream_mode="custom", context=ME)
        ) as stream:
            async for event in stream:
                if event["type"] == "tool_progress" and event["event"] == "BOOKING":
                    break  # the reader goes away inside the tool's call
        return await g.ainvoke({"messages": [HumanMessage(msg)]}, cfg("x"), context=ME)

    out = asyncio.run(run())
    assert len(bt.BOOKINGS) == 1, bt.BOOKINGS
    assert "gebucht" in out["answer"]


def test_S5_same_message_sent_again_after_booking_does_not_book_again() -> None:
    g = graph()
    msg = "Bitte buchen Sie mir einen Termin für einen Reisepass."
    g.invoke({"messages": [HumanMessage(msg)]}, cfg("r"), context=ME)
    events = list(
        g.stream({"messages": [HumanMessage(msg)]}, cfg("r"), stream_mode="custom", context=ME)
    )
    assert len(bt.BOOKINGS) == 1
    assert events
    assert events[0]["type"] == "sent_again"


def test_T10_P4_the_sent_again_phrase_of_a_german_message_is_the_domains_german() -> None:
    """A language the library has no texts for takes the domain's own (P4), never another kit's."""
    g = graph()
    msg = "Bitte buchen Sie mir einen Termin für einen Reisepass."
    g.invoke({"messages": [HumanMessage(msg)]}, cfg("r"), context=ME)
    events = list(
        g.stream({"messages": [HumanMessage(msg)]}, cfg("r"), stream_mode="custom", context=ME)
    )
    phrase = events[0]["phrase"]
    assert "üzenetre" not in phrase, phrase
    assert phrase.startswith("Diese Nachricht wurde schon beantwortet"), phrase


# ---------------------------------------------------------------- the CLI, through a plugin


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """Register the package as a `toolweave.plugins` entry point: a dist-info on PYTHONPATH."""
    dist = tmp_path / "site" / "toolweave_newuser14-0.0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolweave-newuser14\nVersion: 0.0.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[toolweave.plugins]\nbuergeramt = newuser14_domain:plugin\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TOOLWEAVE_MODEL", "TOOLWEAVE_DOMAIN")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(ROOT / "tests")])
    env["TOOLWEAVE_DATA_DIR"] = str(tmp_path / "data")
    return env


def tw(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOOLWEAVE), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_ask_domain_plugin(cli_env: dict[str, str]) -> None:
    done = tw(cli_env, "ask", "--domain", "buergeramt", "Was kostet ein Führungszeugnis?")
    assert done.returncode == 0, done.stderr
    assert "13,00 €" in done.stdout


def test_cli_ask_clarification_and_reply(cli_env: dict[str, str]) -> None:
    user = json.dumps({"einwohner_id": "E-1"})
    done = tw(
        cli_env,
        "ask",
        "--domain",
        "buergeramt",
        "--user-data",
        user,
        "Ich möchte einen Termin buchen.",
    )
    assert done.returncode == 0, done.stderr
    assert "Für welche Dienstleistung möchten Sie einen Termin?" in done.stdout
    thread = done.stdout.split("--thread ", 1)[1].split()[0]
    again = tw(
        cli_env, "ask", "--thread", thread, "--domain", "buergeramt", "--user-data", user, "1"
    )
    assert again.returncode == 0, again.stderr
    assert "Reisepass ist gebucht" in again.stdout


def test_T10_P4_cli_own_lines_in_the_domains_own_german_text(cli_env: dict[str, str]) -> None:
    user = json.dumps({"einwohner_id": "E-1"})
    done = tw(
        cli_env,
        "ask",
        "--domain",
        "buergeramt",
        "--user-data",
        user,
        "Ich möchte einen Termin buchen.",
    )
    assert done.stdout.startswith("Antworten gibt das Offline-Modell"), done.stdout
    assert "(antworten Sie mit: toolweave ask --thread" in done.stdout
    assert "reply with:" not in done.stdout


def test_cli_eval_golden_file_split(cli_env: dict[str, str], tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = tw(
        cli_env, "eval", "--domain", "buergeramt", "--split", "dev", "--json-out", str(report)
    )
    assert done.returncode == 0, done.stderr + done.stdout
    data = json.loads(report.read_text())
    assert len(data["cases"]) == 5
    both = tw(cli_env, "eval", "--domain", "buergeramt")
    assert both.returncode == 0, both.stderr
    assert "heldout" in both.stdout or "held-out" in both.stdout


def test_golden_file_split_rule_odd_dev_even_heldout() -> None:
    lines = [json.loads(line) for line in GOLDEN_FILE.read_text().splitlines() if line.strip()]
    assert len(lines) == 10
    assert [c["split"] for c in lines] == ["dev", "heldout"] * 5


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
