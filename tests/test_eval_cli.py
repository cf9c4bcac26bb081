"""``toolweave eval``: routing evaluation on a golden file through the real graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument
from toolweave.cli import main
from toolweave.domains import golden_file as bundled_golden
from toolweave.evaluation import evaluate, load_golden, report_table
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.state.errors import InvalidRequestError
from toolweave.testing import ScriptedChatModel
from toolweave.tools.domain import Domain

SMALL = [
    {"id": "a", "question": "Mikor rendel a kardiológia?", "expected_tools": ["department_info"]},
    {"id": "b", "question": "What is the wifi password?", "expected_tools": "none",
     "expected_words": ["gyogyulas2024"]},
    {"id": "c", "question": "Can I take ibuprofen with warfarin?",
     "expected_tools": ["drug_interaction"]},
    {"id": "d", "question": "Mi a wifi jelszó?", "expected_tools": ["emergency_numbers"]},
    {"id": "e", "question": "And on Friday?", "history": ["When is cardiology open on Monday?"],
     "expected_tools": ["department_info"]},
]  # fmt: skip
"""Case d is wrong on purpose: exact-set accuracy is 4/5."""


def write(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n")
    return path


@pytest.fixture
def offline(monkeypatch):  # type: ignore[no-untyped-def]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLWEAVE_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_eval_offline_end_to_end_prints_table_and_writes_json(tmp_path, offline, capsys):
    golden = write(tmp_path / "g.jsonl", SMALL)
    report = tmp_path / "r.json"
    code = main(["eval", str(golden), "--json-out", str(report), "--failures"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| 5 | 80.0 % |" in out
    assert "| emergency_numbers | - | 0.0 % | 1 | 0 |" in out
    assert "- d: 'Mi a wifi jelszó?': expected emergency_numbers, routed none" in out
    data = json.loads(report.read_text())
    summary = data["summary"]
    assert summary["cases"] == 5
    assert summary["exact_set_accuracy"] == pytest.approx(0.8)
    assert summary["no_route_rate"] == pytest.approx(0.2)
    assert summary["answer_facts_accuracy"] == 1.0
    assert summary["crashes"] == 0
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["c"]["routed"] == ["drug_interaction"]
    assert by_id["c"]["terminal_tool"] == "drug_interaction"
    assert by_id["e"]["routed"] == ["department_info"]  # the follow-up, on one thread
    assert summary["tools"]["department_info"]["recall"] == 1.0


def test_eval_min_accuracy_gates_the_exit_code(tmp_path, offline, capsys):
    golden = write(tmp_path / "g.jsonl", SMALL)
    assert main(["eval", str(golden), "--min-accuracy", "0.8"]) == 0
    assert main(["eval", str(golden), "--min-accuracy", "0.81"]) == 1
    assert "below 81.0 %" in capsys.readouterr().err
    assert main(["eval", str(golden), "--min-accuracy", "2"]) == 2


def test_eval_sample_runs_a_subset(tmp_path, offline, capsys):
    golden = write(tmp_path / "g.jsonl", SMALL)
    assert main(["eval", str(golden), "--sample", "2"]) == 0
    assert "(2 cases)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not JSON"),
        ('{"question": "x"}', "'expected_tools' is required"),
        ('{"question": "", "expected_tools": "none"}', "'question' must be"),
        ('{"question": "x", "expected_tools": "none", "colour": 1}', "unknown key(s) colour"),
        ('{"question": "x", "expected_tools": [1]}', "must be a list of strings"),
    ],
)
def test_eval_bad_golden_file_is_a_clear_error(tmp_path, offline, capsys, line, message):
    golden = tmp_path / "bad.jsonl"
    golden.write_text(line + "\n")
    with pytest.raises(InvalidRequestError, match=r"bad\.jsonl:1"):
        load_golden(golden)
    assert main(["eval", str(golden)]) == 2
    assert message in capsys.readouterr().err


def test_eval_bundled_hospital_golden_file_has_100_cases_in_both_languages():
    path = bundled_golden("korhaz")
    assert path is not None
    cases = load_golden(path)
    assert len(cases) >= 100
    langs = [c.lang for c in cases]
    assert langs.count("hu") >= 40
    assert langs.count("en") >= 40
    assert sum(1 for c in cases if not c.expected_tools) >= 20  # questions no tool should take
    assert sum(1 for c in cases if c.history) >= 5  # follow-ups
    assert len({c.id for c in cases}) == len(cases)


class Hours(ChatbotTool[Any]):
    name = "hours"
    executable_instruction = "hours: true when the user asks when the shop is open."

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_context(self.name, [UniqueTextDocument(document_id="h", text="9-5")])


class Alarm(ChatbotTool[Any]):
    name = "alarm"
    returns_answer = True
    executable_instruction = "alarm: true when the user reports a fire."

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "Call 112.")


def normalized(question: str) -> dict[str, Any]:
    return {
        "question": question,
        "user_lang": "en",
        "important_words": [],
        "prompt_type": "factual",
    }


def verdicts(hours: bool, alarm: bool) -> dict[str, Any]:
    return {"hours": {"reason": "r", "run": hours}, "alarm": {"reason": "r", "run": alarm}}


def test_eval_with_a_scripted_chat_model_counts_calls_chars_and_wrong_finished_answers(tmp_path):
    golden = write(
        tmp_path / "g.jsonl",
        [
            {"id": "1", "question": "When are you open?", "expected_tools": ["hours"],
             "expected_words": ["9-5"]},
            {"id": "2", "question": "Is there a fire exit plan?", "expected_tools": "none"},
        ],
    )  # fmt: skip
    model = ScriptedChatModel(
        script=[
            normalized("When are you open?"),
            verdicts(True, False),
            "We are open 9-5.",
            normalized("Is there a fire exit plan?"),
            verdicts(False, True),  # a fire word: A8 lets the finished answer through
        ]
    )
    report = evaluate(
        Domain(name="shop"),
        [Hours(), Alarm()],
        load_golden(golden),
        assistant=ChatModelAssistant(model, initial_backoff=0),
    )
    first, second = report.results
    assert first.exact
    assert first.facts_ok is True
    assert first.model_calls == 3
    assert first.model_chars > len("When are you open?")
    assert second.routed == frozenset({"alarm"})
    assert second.wrong_finished_answer
    assert report.wrong_finished_rate == 0.5
    assert report.accuracy == 0.5
    assert report.over_route_rate == 0.5
    assert len(model.calls) == 5
    table = "\n".join(report_table(report))
    assert "| alarm | 0.0 % | - | 0 | 1 |" in table


def test_eval_counts_a_model_outage_as_an_error_and_goes_on(tmp_path):
    golden = write(
        tmp_path / "g.jsonl",
        [
            {"id": "1", "question": "When are you open?", "expected_tools": ["hours"]},
            {"id": "2", "question": "When are you open?", "expected_tools": ["hours"]},
        ],
    )
    outage = ConnectionError("server went away")
    model = ScriptedChatModel(
        script=[outage, outage, normalized("When are you open?"), verdicts(True, False), "9-5"]
    )
    report = evaluate(
        Domain(name="shop"),
        [Hours(), Alarm()],
        load_golden(golden),
        assistant=ChatModelAssistant(model, initial_backoff=0, max_retries=1),
    )
    assert report.errors == 1
    assert report.crashes == 0
    assert [r.exact for r in report.results] == [False, True]


def test_eval_no_deep_fallback_spends_fewer_calls_and_scores_routing_the_same(
    tmp_path, offline, capsys
):
    golden = write(
        tmp_path / "g.jsonl",
        [{"id": "p", "question": "Is there a swimming pool?", "expected_tools": "none"}],
    )
    full, lean = tmp_path / "full.json", tmp_path / "lean.json"
    assert main(["eval", str(golden), "--json-out", str(full)]) == 0
    assert main(["eval", str(golden), "--json-out", str(lean), "--no-deep-fallback"]) == 0
    full_case = json.loads(full.read_text())["cases"][0]
    lean_case = json.loads(lean.read_text())["cases"][0]
    assert lean_case["llm_calls"] < full_case["llm_calls"]
    assert lean_case["exact"]
    assert full_case["exact"]
    assert main(["eval", str(golden), "--timeout", "0"]) == 2
    assert "--timeout must be positive" in capsys.readouterr().err


def test_X5_eval_gives_each_question_a_run_deadline_and_counts_a_late_one_as_an_error(
    tmp_path, capsys
):
    from toolweave.graph.context import Limits

    golden = write(
        tmp_path / "g.jsonl",
        [{"id": "1", "question": "When are you open?", "expected_tools": ["hours"]}],
    )

    def run(limits: Limits | None) -> Any:
        model = ScriptedChatModel(script=[verdicts(True, False), "9-5"], latency=0.6)
        assistant = ChatModelAssistant(model, initial_backoff=0, max_retries=1)
        return evaluate(
            Domain(name="shop"),
            [Hours(), Alarm()],
            load_golden(golden),
            assistant=assistant,
            limits=limits,
        )

    late = run(Limits(run_deadline_s=0.5)).results[0]
    assert late.error is not None
    assert "RunDeadlineError" in late.error
    assert run(None).results[0].error is None  # the same run with no deadline finishes
    assert main(["eval", str(golden), "--run-timeout", "0"]) == 2
    assert "--run-timeout must be positive" in capsys.readouterr().err


SPLIT = [
    {"id": "s1", "question": "Mikor rendel a kardiológia?", "expected_tools": ["department_info"],
     "split": "dev"},
    {"id": "s2", "question": "What is the wifi password?", "expected_tools": "none",
     "split": "heldout"},
    {"id": "s3", "question": "Mikor van rendelés?", "expected_tools": ["department_info"],
     "expected_clarification": True, "split": "dev"},
    {"id": "s4", "question": "kardiológia", "history": ["Mikor van rendelés?"],
     "expected_tools": ["department_info"], "expected_words": ["9:00-13:00"], "split": "heldout"},
    {"id": "s5", "question": "Mikor rendel a kardiológia?", "expected_tools": ["department_info"],
     "expected_clarification": True, "split": "heldout"},
]  # fmt: skip
"""s5 expects a question back where the run answers: the one clarification miss."""


def test_G1_golden_split_defaults_to_dev_and_rejects_other_halves(tmp_path):
    cases = load_golden(write(tmp_path / "g.jsonl", [*SMALL[:1], *SPLIT]))
    assert [c.split for c in cases] == ["dev", "dev", "heldout", "dev", "heldout", "heldout"]
    assert [c.expects_clarification for c in cases] == [False, False, False, True, False, True]
    bad = write(tmp_path / "b.jsonl", [{**SPLIT[0], "split": "test"}])
    with pytest.raises(InvalidRequestError, match="'split' must be one of dev, heldout"):
        load_golden(bad)
    bad = write(tmp_path / "c.jsonl", [{**SPLIT[0], "expected_clarification": "yes"}])
    with pytest.raises(InvalidRequestError, match="'expected_clarification' must be true"):
        load_golden(bad)


def test_G1_Q1_eval_shows_the_halves_side_by_side_and_scores_clarifications(
    tmp_path, offline, capsys
):
    golden = write(tmp_path / "g.jsonl", SPLIT)
    report_path = tmp_path / "r.json"
    assert main(["eval", str(golden), "--domain", "korhaz", "--json-out", str(report_path)]) == 0
    out = capsys.readouterr().out
    assert "| split | cases | tools exact |" in out
    assert "| dev | 2 | 100.0 % |" in out
    assert "| heldout | 3 | 100.0 % |" in out
    by_id = {c["id"]: c for c in json.loads(report_path.read_text())["cases"]}
    assert by_id["s3"]["clarification_ok"] is True  # asked back, as expected
    assert by_id["s5"]["clarification_ok"] is False  # answered where a question was expected
    # the reply's run routes nothing itself: the routed set is the paused turn's (Q2)
    assert by_id["s4"]["routed"] == ["department_info"]
    assert by_id["s4"]["facts_ok"] is True
    assert by_id["s4"]["clarification_ok"] is True


def test_G1_eval_split_option_runs_one_half(tmp_path, offline, capsys):
    golden = write(tmp_path / "g.jsonl", SPLIT)
    assert main(["eval", str(golden), "--domain", "korhaz", "--split", "heldout"]) == 0
    out = capsys.readouterr().out
    assert "(3 cases)" in out
    assert "| heldout | 3 |" in out
    assert "| dev |" not in out
    only_dev = write(tmp_path / "d.jsonl", [SPLIT[0]])
    assert main(["eval", str(only_dev), "--domain", "korhaz", "--split", "heldout"]) == 2
    assert "has no heldout cases" in capsys.readouterr().err


@pytest.mark.parametrize(
    "answer",
    [
        "Wolny jest piątek 28 maja 2027.",
        "A szabadnap 2027. május 28., péntek.",
        "The day off is May 28, 2027.",
        "Dzień wolny: 28.05.2027.",
        "Free on 2027-05-28.",
        "Boże Ciało jest w 2027 roku w dniu 28 maja.",  # the year apart from day and month
        "A szabadnap május 28-án van.",  # the year left out, as the question gave it
    ],
)
def test_G1_eval_a_date_fact_is_held_by_the_same_date_written_another_way(answer: str):
    from toolweave.evaluation import holds_fact

    assert holds_fact(answer, "2027-05-28")


@pytest.mark.parametrize(
    "answer",
    [
        "Wolny jest 27 maja 2027.",
        "Free on 28 May 2026.",
        "Day 28, month 5.",
        "In 2026 it fell on 28 May.",  # another year named apart
        "Wolny jest 28 czerwca.",
    ],
)
def test_G1_eval_another_date_does_not_hold_a_date_fact(answer: str):
    from toolweave.evaluation import holds_fact

    assert not holds_fact(answer, "2027-05-28")
