"""N1 (thirteenth round): a home-insurance claims desk, from the README and the docs alone.

The domain is ``tests/newuser13_domain``: eight pages with a front matter ingested with
``ingest``; ``file_claim`` acts (one claim per call key in SQLite, every call counted),
has a pydantic request (policy number, date of loss, kind of damage) whose missing
fields the graph asks for (T13, Q1), and is for policyholders only (T4); an excess
calculator answers itself (R3); the claim status is guaranteed context (R5); a
coordinator splits "file a claim ... and tell me the deadline" (S6). The tests named
"Fixed" in the notes fail without this round's mends; the others pin what worked as the
docs said. What the round met is in ``docs/guides/new-user-notes.md`` ("A thirteenth
domain").
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_support import OFFLINE_UNSET, run
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from newuser13_domain.claims import (
    DOCS,
    PAGES,
    ClaimStore,
    claims_domain,
    claims_store_from_pages,
)
from newuser13_domain.plugin import GOLDEN, plugin

from toolweave import (
    DocumentStore,
    RunContext,
    ThreadStatusKind,
    build_graph,
    reply,
    resume_interrupted,
    thread_status,
)

HOLDER = RunContext(user_data={"customer_id": "C-1001"})
FULL = "I want to file a claim for water damage on policy HS-204518 on 2026-12-01."


@pytest.fixture(scope="module")
def store() -> DocumentStore:
    return claims_store_from_pages()


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def human(text: str, message_id: str | None = None) -> dict[str, Any]:
    return {"messages": [HumanMessage(text, id=message_id)]}


# --- Fixed: a side effect done twice ------------------------------------------------------


@pytest.mark.parametrize(
    "retyped",
    [
        FULL.lower(),  # typed again, without the capitals
        FULL.rstrip("."),  # without its full stop
        FULL.replace("claim for", "claim  for"),  # a doubled space
        FULL.upper().rstrip(".") + "!",
    ],
)
def test_S5_Q6_the_same_message_retyped_after_its_claim_was_filed_files_no_second_claim(
    store: DocumentStore, retyped: str
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    first = graph.invoke(human(FULL), thread("retyped"), context=HOLDER)
    assert first["answer"].startswith("Claim CL-0001 filed: water damage on 2026-12-01")
    again = graph.invoke(human(retyped), thread("retyped"), context=HOLDER)
    assert again["answer"] == first["answer"]
    assert claims.claims() == [("HS-204518", "2026-12-01", "water")]
    assert len(claims.calls()) == 1  # not called again: the sent-again rule, no new run


@pytest.mark.parametrize("stop_at", ["tool_progress", "answer_message"])
def test_Q5_S5_a_stream_the_client_stops_reading_after_the_claim_is_finished_not_filed_again(
    store: DocumentStore, stop_at: str
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    config = thread(f"cut-{stop_at}")
    for mode, data in graph.stream(
        human(FULL), config, context=HOLDER, stream_mode=["custom", "messages"]
    ):  # a web client that disconnects: the stream is closed mid-run
        if mode == "custom" and data.get("type") == "tool_progress" and stop_at == "tool_progress":
            break
        if mode == "messages" and stop_at == "answer_message":
            break
    assert len(claims.calls()) == 1  # the claim was filed before the client went
    status = thread_status(graph, config)
    assert status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN  # not "finished" (Q5)
    again = graph.invoke(human(FULL), config, context=HOLDER)  # the client sends it again
    assert again["answer"].startswith("Claim CL-0001 filed: water damage on 2026-12-01")
    assert len(claims.calls()) == 1
    assert len(claims.claims()) == 1
    assert thread_status(graph, config).kind is ThreadStatusKind.FINISHED


def test_Q5_S5_resume_interrupted_finishes_a_cut_stream_without_filing_again(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    config = thread("cut-resume")
    for data in graph.stream(human(FULL), config, context=HOLDER, stream_mode="custom"):
        if data.get("type") == "tool_progress":
            break
    out = resume_interrupted(graph, config, context=HOLDER)
    assert out["answer"].startswith("Claim CL-0001 filed")
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert len(claims.calls()) == 1


# --- Fixed: what a new user's request model met first --------------------------------------

ASK = "I want to file a claim for water damage."


def test_T6_T13_a_policy_number_of_a_set_form_and_a_written_date_are_filled_offline(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    said = "Please file a claim: storm damage, policy hs-777888, on 30 November 2026."
    out = graph.invoke(human(said), thread("filled"), context=HOLDER)
    assert "__interrupt__" not in out  # nothing asked: the text said all three
    assert claims.claims() == [("HS-777888", "2026-11-30", "storm")]
    assert out["answer"].startswith("Claim CL-0001 filed: storm damage on 2026-11-30")


def test_A9_a_number_the_request_states_does_not_put_the_acting_tools_intent_in_doubt(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    said = "Please file a claim: storm damage, policy HS-777888, on 2026-11-30."
    out = graph.invoke(human(said), thread("numbers"), context=HOLDER)
    assert out["activated"] == ["1:file_claim"]
    assert not [e for e in out["ledger"] if e.tool == "file_claim" and "A9" in str(e.details)]
    assert len(claims.claims()) == 1


def test_Q1_a_field_of_a_set_form_shows_its_example_and_offers_no_example_as_a_choice(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    paused = graph.invoke(human(ASK), thread("asked"), context=HOLDER)
    asked = paused["__interrupt__"][0].value
    assert asked["question"] == "Which policy number (for example HS-204518)?"
    assert asked["choices"] == []  # "1" must never file a claim on the docs' example policy
    assert claims.calls() == []


def test_Q2_a_reply_that_writes_the_date_out_fills_the_date_and_the_claim_is_filed_once(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    config = thread("replied")
    graph.invoke(human(ASK), config, context=HOLDER)
    asked = reply(graph, config, "It is HS-555123.", context=HOLDER)
    assert asked["__interrupt__"][0].value["question"] == "Which date of loss?"
    done = reply(graph, config, "on the 3rd of December 2026", context=HOLDER)
    assert done["answer"].startswith("Claim CL-0001 filed: water damage on 2026-12-03")
    assert claims.claims() == [("HS-555123", "2026-12-03", "water")]
    assert len(claims.calls()) == 1


@pytest.mark.parametrize(
    "said",
    [
        "Please file a claim for fire damage on policy HS-204519 on 2026-12-02.",
        "Please file a claim for fire damage on policy hs-204519 on 2026-12-02.",
    ],
)
def test_T6_a_policy_number_one_digit_from_the_fields_example_is_taken_as_written(
    store: DocumentStore, said: str
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    graph.invoke(human(said), thread("near"), context=HOLDER)
    assert claims.claims() == [("HS-204519", "2026-12-02", "fire")]  # never the example's


def test_Q2_a_reply_one_digit_from_the_example_files_on_the_policy_the_person_wrote(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    config = thread("near-reply")
    graph.invoke(human("Please file a claim for fire damage."), config, context=HOLDER)
    reply(graph, config, "hs-204519", context=HOLDER)
    reply(graph, config, "2 December 2026", context=HOLDER)
    assert claims.claims() == [("HS-204519", "2026-12-02", "fire")]


def test_R7_S5_a_filing_that_raised_says_it_was_not_done_and_the_retry_files_once(
    store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = ClaimStore()
    filed = claims.file

    def locked(key: str, policy: str, day: str, kind: str) -> int:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(claims, "file", locked)
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    failed = graph.invoke(human(FULL), thread("locked"), context=HOLDER)
    assert failed["answer"].startswith(
        "This was not done: file claim failed (OperationalError). Please ask again."
    )
    assert "locked" not in failed["answer"]  # the error's type only, never its message (X4)
    assert "file_claim" not in str(failed["activated"])  # no result all the same (R7)
    monkeypatch.setattr(claims, "file", filed)
    again = graph.invoke(human(FULL), thread("locked"), context=HOLDER)  # the person retries
    assert again["answer"].startswith("Claim CL-0001 filed")
    assert len(claims.claims()) == 1


# --- What worked as the docs said ----------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("Is damage from a burst pipe covered?", "burst pipe"),
        ("What is the claims desk phone number?", "0800 414 2020"),
        ("What excess do I pay for an escape of water claim?", "450 pounds"),
    ],
)
def test_N1_R2_R3_the_pages_and_the_calculator_answer_the_policyholders_questions(
    store: DocumentStore, question: str, fact: str
) -> None:
    out = build_graph(*claims_domain(store)).invoke(question)
    assert fact in out["answer"]


def test_T4_a_person_without_a_policyholder_id_files_nothing(store: DocumentStore) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    out = graph.invoke(human(FULL), thread("stranger"))
    assert "file_claim" not in str(out["activated"])
    assert claims.calls() == []


def test_S6_S3_F1_the_two_part_question_files_once_and_answers_the_deadline_too(
    store: DocumentStore,
) -> None:
    claims = ClaimStore()
    graph = build_graph(*claims_domain(store, claims), checkpointer=InMemorySaver())
    config = thread("two-parts")
    ask = "File a claim for storm damage and tell me the deadline for the receipts."
    paused = graph.invoke(human(ask), config, context=HOLDER)
    assert paused["__interrupt__"][0].value["task_no"] == "1.2"  # the finished answer last (S3)
    reply(graph, config, "HS-777888", context=HOLDER)
    done = reply(graph, config, "30 November 2026", context=HOLDER)
    assert "within 60 days of filing the claim" in done["answer"]
    assert "Claim CL-0001 filed: storm damage on 2026-11-30" in done["answer"]
    assert done["activated"] == ["1.1:claims_search", "1.2:file_claim"]
    assert len(claims.calls()) == 1


# --- The CLI: ask, a retyped reply, eval (N1, S5, G1) ---------------------------------------


class FakeEntryPoint:
    """The claims desk's entry point (``toolweave.plugins``), as if its package were installed."""

    name = "claims"
    value = "newuser13_domain.plugin:plugin"

    def load(self) -> Any:
        return plugin


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The claims desk's plugin installed alone, the offline model, a claims file; its data dir."""
    import toolweave.domains as domains

    for name in (*OFFLINE_UNSET, "TOOLWEAVE_MODEL", "TOOLWEAVE_DOMAIN", "TOOLWEAVE_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAIMS_DB", str(tmp_path / "claims.sqlite"))
    monkeypatch.setattr(domains, "entry_points", lambda *, group: [FakeEntryPoint()])
    return tmp_path / "data"


def test_N1_S5_the_cli_asks_twice_files_once_and_a_retyped_reply_files_nothing_more(
    installed: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    where = ["--data-dir", str(installed)]
    assert run(capsys, "ingest", str(PAGES), "--domain", DOCS, *where)[0] == 0
    me = ["--user-data", '{"customer_id": "C-7"}']
    ask = ["ask", "--thread", "cli", *where, "--domain", "claims", *me]
    code, out, err = run(capsys, *ask, "I want to file a claim for water damage.")
    assert code == 0, err
    assert "Which policy number (for example HS-204518)?" in out
    assert "  1. HS-204518" not in out  # no example offered as a choice
    assert "Which date of loss?" in run(capsys, *ask, "HS-555123")[1]
    code, out, err = run(capsys, *ask, "3 December 2026")
    assert "Claim CL-0001 filed: water damage on 2026-12-03, policy HS-555123." in out
    code, out, err = run(capsys, *ask, "3 december 2026.")  # typed again, unsure it went
    assert "Nothing was done a second time." in out
    assert ClaimStore(str(tmp_path / "claims.sqlite")).claims() == [
        ("HS-555123", "2026-12-03", "water")
    ]


def test_G1_toolweave_eval_scores_the_claims_desks_development_half(
    installed: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    where = ["--data-dir", str(installed)]
    assert run(capsys, "ingest", str(PAGES), "--domain", DOCS, *where)[0] == 0
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys, "eval", "--domain", "claims", *where, "--split", "dev",
        "--json-out", str(report), "--min-accuracy", "1.0",
    )  # fmt: skip
    assert code == 0, out + err
    assert f"golden file: {GOLDEN} (6 cases)" in out
    summary = json.loads(report.read_text())["summary"]
    assert summary["exact_set_accuracy"] == 1.0
    assert summary["clarification_rate"] == 1.0
