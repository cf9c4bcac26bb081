"""CLI papercuts (issue 12 item 7): what a person notices in the first minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run

from toolweave import cli
from toolweave.cli.render import progress_line, source_lines
from toolweave.state.documents import UniqueTextDocument, sources_of
from toolweave_korhaz.examples import EXAMPLE_QUESTIONS

ROOT = Path(__file__).resolve().parents[1]
CARDIOLOGY = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)
HOURS = "When are consultation hours?"
CARDIOLOGY_HOURS_EN = "Consultation hours of Cardiology: Monday-Thursday 9:00-13:00."


pytestmark = pytest.mark.usefixtures("offline_cli")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLWEAVE_"))}
    env["TOOLWEAVE_DATA_DIR"] = str(tmp_path / "data")
    env["TOOLWEAVE_DOMAIN"] = "korhaz"  # whatever other domains are installed (N2, N4)
    return env


# --- Q2: clarification choices are numbered, and a one-off question names its thread ---------


def test_Q2_choices_are_numbered_and_a_one_off_question_names_the_thread_to_reply_on(capsys):
    code, out, err = run(capsys, "ask", HOURS)
    assert code == 0, err
    lines = out.splitlines()
    asked = lines.index("Which department? Type its name or its number in the list.")
    assert lines[asked + 1 : asked + 3] == ["  1. Internal Medicine", "  2. Cardiology"]
    hint = next(line for line in lines if line.startswith("(reply with: toolweave ask --thread "))
    thread = hint.split("--thread ", 1)[1].split(" ", 1)[0]
    assert len(thread) == 32  # a fresh uuid4 hex
    # the thread was kept although the question had no --thread: replying by number works
    code, out, err = run(capsys, "ask", "--thread", thread, "--json", "2")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["pending_question"] is None
    assert CARDIOLOGY_HOURS_EN in payload["answer"]


def test_Q2_json_gives_the_question_and_its_choices_apart_and_keeps_the_thread(capsys):
    code, out, _ = run(capsys, "ask", "--json", HOURS)
    assert code == 0
    payload = json.loads(out)
    assert payload["pending_question"] == (
        "Which department? Type its name or its number in the list."
    )
    assert payload["pending_choices"][:2] == ["Internal Medicine", "Cardiology"]
    code, out, _ = run(capsys, "ask", "--thread", payload["thread_id"], "--json", "Cardiology")
    assert code == 0
    assert CARDIOLOGY_HOURS_EN in json.loads(out)["answer"]


def test_a_one_off_answer_still_keeps_no_thread(capsys, tmp_path):
    code, out, _ = run(capsys, "ask", "--json", CARDIOLOGY.question)
    assert code == 0
    assert json.loads(out)["pending_question"] is None
    assert not (tmp_path / "data" / "toolweave.db").exists()


# --- sources: once, in the user's language, only the documents the answer used --------------


def test_sources_are_printed_once_in_the_users_language_and_only_the_used_ones(capsys):
    # a question the search answers from a paged document (the offline answer quotes
    # only the sentences that answer it: A7)
    question = "Mikor van vérvétel a laborban?"
    code, out, err = run(capsys, "ask", "--json", question)
    assert code == 0, err
    payload = json.loads(out)
    answer = payload["answer"]
    assert "Források" not in answer  # the offline answer does not embed its sources
    code, out, _ = run(capsys, "ask", question)
    lines = out.splitlines()
    assert lines.count("Források:") == 1
    assert "Sources:" not in lines
    listed = [line for line in lines[lines.index("Források:") + 1 :] if line.startswith("  [")]
    assert listed  # numbered (R9); the sentences each backs are quoted under it
    assert len(listed) == len({line.split(" — ")[0] for line in listed})  # a document once
    assert len(listed) < 8  # the run retrieved 8 documents; the answer quoted fewer
    # R9: a page, in Hungarian, only of a document of several; the lab's page is its only one
    assert {(row["name"], row["page_count"]) for row in payload["sources"]} >= {
        ("Vérvétel és laborvizsgálatok", 1)
    }
    assert not any("oldal" in line for line in listed)
    # the JSON rows are the same used documents
    assert {row["name"] for row in payload["sources"]} == {
        line.split("] ", 1)[1].split(", ")[0].split(" — ")[0] for line in listed
    }


def test_an_answer_no_document_backs_lists_no_sources(capsys):
    code, out, _ = run(capsys, "ask", "Can I take ibuprofen with warfarin?")
    assert code == 0
    assert "ibuprofen and warfarin: major interaction" in out
    assert "Sources:" not in out
    assert "(none)" not in out


def test_english_questions_get_an_english_sources_heading(capsys):
    code, out, _ = run(capsys, "ask", "What does a copy of medical records cost?")
    assert code == 0
    lines = out.splitlines()
    assert lines.count("Sources:") == 1
    assert "Források:" not in lines
    listed = [line for line in lines[lines.index("Sources:") + 1 :] if line.startswith("  [")]
    assert listed
    # R9: the page of a document of two (patient rights), none of one of one page (discharge)
    assert [(line.split("] ")[1].split(" — ")[0]) for line in listed] == [
        "Patient rights and complaints, p. 1",
        "Discharge and discharge summary",
    ]


def _doc(doc_id: str, name: str, text: str, page: int | None = 1) -> UniqueTextDocument:
    return UniqueTextDocument(document_id=doc_id, document_name=name, text=text, page=page)


def test_source_lines_merge_the_pages_of_a_document_in_the_users_language():
    rows = sources_of(
        [
            _doc("v", "Visiting rules", "a", page=2),
            _doc("v", "Visiting rules", "b", page=5),
            _doc("d", "Departments: Cardiology", "c", page=None),
        ]
    )
    assert source_lines(rows, "en") == [
        "Sources:",
        "  - Visiting rules, p. 2, 5",
        "  - Departments: Cardiology",
    ]
    assert source_lines(rows, "hu")[:2] == ["Források:", "  - Visiting rules, 2, 5. oldal"]
    assert source_lines([], "hu") == []  # nothing backs the answer: no empty heading
    assert source_lines(rows, "de")[0] == "Sources:"  # other languages: English


# --- C5: "coordinated by" only when a coordinator changed the task ---------------------------


def test_C5_coordinated_line_only_when_a_coordinator_changed_the_task(capsys):
    unchanged = {
        "type": "coordinated",
        "task_no": "1",
        "coordinators": ["drug_interaction", "doctor_finder"],
        "changed": [],
        "subtasks": [],
    }
    assert progress_line(unchanged) is None
    assert progress_line({**unchanged, "changed": ["doctor_finder"]}) == (
        "· 1 coordinated by doctor_finder"
    )
    code, out, _ = run(capsys, "ask", CARDIOLOGY.question)
    assert code == 0
    assert "coordinated by" not in out  # both korhaz coordinators ran and changed nothing


# --- pipes and --help -------------------------------------------------------------------------


def test_piping_into_head_ends_quietly_with_the_sigpipe_exit_code(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolweave", "ask", CARDIOLOGY.question],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    first = proc.stdout.readline()  # like `| head -1`: read one line, then close the pipe
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=120)
    assert first.startswith("a válaszokat".encode())  # the first line: who answers
    assert err == ""  # no BrokenPipeError, no traceback, no "Exception ignored"
    assert code == cli.EXIT_BROKEN_PIPE == 141


def test_help_loads_neither_langgraph_nor_langchain(tmp_path):
    probe = (
        "import sys\n"
        "from toolweave.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "main(['ask', '--help'])\n"
        "main(['ingest', '--help'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langgraph', 'langchain_core', 'langchain', 'pydantic', 'psycopg'))\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert "usage: toolweave" in done.stdout
    assert "--database-url" in done.stdout
    assert done.stdout.splitlines()[-1] == "HEAVY []"


def test_the_public_api_still_loads_on_first_use():
    import toolweave

    assert toolweave.build_graph.__name__ == "build_graph"
    assert set(toolweave.__all__) <= set(dir(toolweave))
    with pytest.raises(AttributeError):
        _ = toolweave.no_such_name


# --- ingest: storing nothing creates no domain ------------------------------------------------


def test_an_ingest_that_stored_nothing_creates_no_domain(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(empty), "--domain", "nothing")
    assert code == 1  # the file was skipped
    assert "skipped" in err
    assert "ingested 0 document(s)" in out
    assert "ask: toolweave ask" not in out
    folder = tmp_path / "data" / "documents"
    assert not folder.exists() or not any(folder.iterdir())
    code, out, _ = run(capsys, "domains")
    assert "nothing" not in out.split()
    code, _, err = run(capsys, "ask", "--domain", "nothing", "hello")
    assert code == 2
    assert "unknown domain 'nothing'" in err


def test_an_empty_reingest_keeps_an_existing_domain(capsys, tmp_path):
    page = tmp_path / "page.txt"
    page.write_text("Parking costs 500 Ft.", encoding="utf-8")
    assert run(capsys, "ingest", str(page), "--domain", "kept")[0] == 0
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert run(capsys, "ingest", str(empty), "--domain", "kept")[0] == 1
    assert (tmp_path / "data" / "documents" / "kept.sqlite").is_file()
    code, out, _ = run(capsys, "ask", "--domain", "kept", "How much is parking?")
    assert code == 0
    assert "500 Ft" in out
