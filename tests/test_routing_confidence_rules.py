"""Routing scored by the model's confidence (T5, issue 38 item 2): P(yes) per tool.

Neutral test tools (``alpha``, ``beta``); the model is the real ``ChatOpenAI`` against
the fake server (``tests/fake_openai.py``) or a scripted port.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument
from toolweave.cli import main
from toolweave.domains.calibration import ROUTING_FILE_ENV, store_threshold, stored_threshold
from toolweave.evaluation import CaseResult, EvalReport, GoldenCase, best_threshold, threshold_rows
from toolweave.graph.builder import build_graph
from toolweave.graph.candidates import NEAR_DUPLICATES, resolve_yeses
from toolweave.graph.route import ABSTAINED
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.confidence import routing_confidences
from toolweave.llm.env import default_assistant
from toolweave.llm.port import RoutingVerdict
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.state.ledger import LedgerKind
from toolweave.state.task import TaskInfo, TaskNode
from toolweave.testing import FunctionAssistant
from toolweave.tools.domain import Domain


def tool(name: str, question: str) -> Any:
    def execute(self: Any, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_context(name, [UniqueTextDocument(document_id=name, text=name)])

    body = {
        "name": name,
        "executable_instruction": f"{name}: true when {question}",
        "execute": execute,
    }
    return type(f"T_{name}", (ChatbotTool,), body)()


ALPHA = tool("alpha", "the user asks about the alpha service")
BETA = tool("beta", "the user asks about the beta service")


def p(yes: float, no: float) -> float:
    """P(yes) at one position from the two log-probabilities."""
    return math.exp(yes) / (math.exp(yes) + math.exp(no))


# alpha: an entry (" {" vs " null"), then run ": true" vs ": false" in one token;
# beta: "null" (vs "{"), written without a space, in a token with the colon before it
TOKENS = (
    ("```", -0.4, ()),
    ("{\n", -0.2, ()),
    (' "best_fit": "alpha",\n "alpha":', -0.1, ()),
    (' {"', -0.1, ((' {"', -0.1), (" null", -2.3))),
    ('reason": "asks", "run', -0.1, ()),
    ('": true', -0.2, (('": true', -0.2), ('": false', -1.7), ('": True', -5.0), ('":', -3))),
    ('},\n "beta', 0.0, ()),
    ('":null', -0.05, (('":null', -0.05), ('":{"', -3.0), ('": ', -4.0))),
    ("\n}", 0.0, ()),
)
ALPHA_YES = (
    p(-0.1, -2.3)
    * (math.exp(-0.2) + math.exp(-5.0))
    / (math.exp(-0.2) + math.exp(-5.0) + math.exp(-1.7))
)
BETA_YES = p(-3.0, -0.05)


def logprobs_message(tokens: Any = TOKENS) -> AIMessage:
    content = [
        {
            "token": token,
            "logprob": lp,
            "top_logprobs": [{"token": t, "logprob": a} for t, a in alternatives],
        }
        for token, lp, alternatives in tokens
    ]
    return AIMessage(content="", response_metadata={"logprobs": {"content": content}})


def test_T5_p_yes_is_read_at_each_tools_value_and_run_tokens():
    found = routing_confidences(logprobs_message(), ["alpha", "beta"])
    assert found["alpha"] == pytest.approx(ALPHA_YES)
    assert found["beta"] == pytest.approx(BETA_YES)
    assert found["alpha"] > 0.5 > found["beta"]


def test_T5_no_p_yes_without_logprobs_or_json():
    assert routing_confidences(AIMessage(content='{"alpha": null}'), ["alpha"]) == {}
    prose = (("I think", -0.1, ()), (" yes", -0.2, ((" yes", -0.2), (" no", -1.0))))
    assert routing_confidences(logprobs_message(prose), ["alpha"]) == {}
    unclosed = TOKENS[:-1]  # no closing brace: what was written whole is read
    assert set(routing_confidences(logprobs_message(unclosed), ["alpha", "beta"])) == {
        "alpha",
        "beta",
    }
    inside = TOKENS[:6]  # stopped inside alpha's entry: nothing whole
    assert routing_confidences(logprobs_message(inside), ["alpha", "beta"]) == {}


@pytest.fixture
def llm(fake_openai: Any) -> ChatModelAssistant:
    assistant = default_assistant(
        model="fake-model", api_key="test", base_url=fake_openai.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    assistant.policy = type(assistant.policy)(max_retries=0, initial_backoff=0)
    return assistant


@pytest.mark.network
def test_T5_routing_call_asks_for_logprobs_and_verdicts_carry_p_yes(fake_openai, llm):
    from fake_openai import Scored

    fake_openai.script(Scored(TOKENS[1:]))  # the content is the tokens: JSON alone
    found = {v.tool: v for v in llm.route("alpha?", [ALPHA, BETA])}
    (request,) = fake_openai.requests
    assert (request["logprobs"], request["top_logprobs"]) == (True, 5)
    assert (found["alpha"].run, found["beta"].run) == (True, False)
    assert found["alpha"].confidence == pytest.approx(ALPHA_YES)
    assert found["beta"].confidence == pytest.approx(BETA_YES)


@pytest.mark.network
def test_T5_T7_fused_activation_verdicts_carry_p_yes(fake_openai, llm):
    from fake_openai import Scored

    fake_openai.script(Scored(TOKENS[1:]))
    activation = llm.route_and_extract(
        "alpha?", "alpha?", [ALPHA, BETA], extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    assert activation.routed() == ["alpha"]
    assert [v.confidence for v in activation.verdicts] == [
        pytest.approx(ALPHA_YES),
        pytest.approx(BETA_YES),
    ]


def test_T5_eval_can_route_on_yes_no_alone():
    from langchain_openai import ChatOpenAI

    from toolweave.cli.eval import _assistant

    model = ChatOpenAI(model="m", api_key="t", base_url="http://127.0.0.1:9/v1")  # never called
    args = argparse.Namespace(no_routing_confidence=False, calibrate_routing=False)
    assert ChatModelAssistant(model).scores_routing()
    assert _assistant(args, ChatModelAssistant(model)).scores_routing()  # type: ignore[union-attr]
    args.no_routing_confidence = True
    assert not _assistant(args, ChatModelAssistant(model)).scores_routing()  # type: ignore[union-attr]


@pytest.mark.network
def test_T5_server_rejecting_logprobs_is_asked_again_without_and_never_again(fake_openai, llm):
    from fake_openai import FakeError

    reply = {"best_fit": "alpha", "alpha": {"reason": "asks", "run": True}, "beta": None}
    fake_openai.script(FakeError(400, "logprobs are not supported with this model"), reply, reply)
    first = llm.route("alpha?", [ALPHA, BETA])
    second = llm.route("alpha?", [ALPHA, BETA])
    asked = ["logprobs" in body for body in fake_openai.requests]
    assert asked == [True, False, False]
    assert first == second
    assert [(v.tool, v.run, v.confidence) for v in first] == [
        ("alpha", True, None),
        ("beta", False, None),
    ]
    assert not llm.scores_routing()


@pytest.mark.network
def test_T5_without_logprobs_routing_is_unchanged(fake_openai):
    reply = {"best_fit": "alpha", "alpha": {"reason": "asks", "run": True}, "beta": None}
    fake_openai.script(reply, reply)
    model = default_assistant(model="m", api_key="t", base_url=fake_openai.base_url, env={})
    assert isinstance(model, ChatModelAssistant)
    off = ChatModelAssistant(model.model, routing_logprobs=None)
    on = ChatModelAssistant(model.model)  # asked, but this server sends none
    plain, asked = off.route("alpha?", [ALPHA, BETA]), on.route("alpha?", [ALPHA, BETA])
    assert plain == asked
    assert [(v.tool, v.run, v.confidence) for v in plain] == [
        ("alpha", True, None),
        ("beta", False, None),
    ]
    assert ["logprobs" in body for body in fake_openai.requests] == [False, True]


def test_T5_tie_between_sibling_yeses_goes_to_the_higher_p_yes():
    node = TaskNode(task=TaskInfo(task_no="1", task_prompt="the alpha or beta service"))
    named = [
        RoutingVerdict("alpha", True, "r", best=True, confidence=0.55),
        RoutingVerdict("beta", True, "r", confidence=0.97),
    ]
    kept, entries = resolve_yeses(node, [ALPHA, BETA], named)
    assert kept == {"beta"}
    assert entries[0].verdict == NEAR_DUPLICATES
    # every yes scored and no best fit named: still resolved by P(yes)
    unnamed = [replace(v, best=False) for v in named]
    assert resolve_yeses(node, [ALPHA, BETA], unnamed)[0] == {"beta"}
    # without P(yes): today's rule (the best fit; no best fit, the yeses stand)
    plain = [replace(v, confidence=None) for v in named]
    assert resolve_yeses(node, [ALPHA, BETA], plain)[0] == {"alpha"}
    bare = [replace(v, confidence=None) for v in unnamed]
    assert resolve_yeses(node, [ALPHA, BETA], bare) == ({"alpha", "beta"}, [])


class Scoring(FunctionAssistant):
    """Says yes to the tools named in the question, with the P(yes) ``scores`` give."""

    def __init__(self, scores: dict[str, float | None]) -> None:
        super().__init__()
        self.scores = scores

    def scores_routing(self) -> bool:
        return True

    def route(self, task_prompt: str, tools: Any) -> list[RoutingVerdict]:
        return [
            RoutingVerdict(t.name, t.name in task_prompt, "r", confidence=self.scores.get(t.name))
            for t in tools
        ]


def routed(graph: Any, question: str) -> tuple[list[str], list[Any]]:
    out = graph.invoke({"messages": [HumanMessage(question)]})
    return [k.rpartition(":")[2] for k in out["activated"]], out["ledger"]


def test_T5_abstention_below_the_domains_threshold_routes_nothing():
    sure = Scoring({"alpha": 0.3})
    domain = Domain(name="d", routing_threshold=0.5)
    ran, ledger = routed(build_graph(domain, [ALPHA, BETA], assistant=sure), "alpha")
    assert ran == []
    (entry,) = [e for e in ledger if e.verdict == ABSTAINED]
    assert (entry.tool, entry.confidence) == ("alpha", pytest.approx(0.3))
    # the routed entry records the verdict's P(yes) (the ledger, issue 38)
    (yes,) = [e for e in ledger if e.kind == LedgerKind.ROUTING and e.verdict == "routed"]
    assert yes.confidence == pytest.approx(0.3)
    # above it, or with no threshold (the default), the tool runs
    assert routed(build_graph(domain, [ALPHA], assistant=Scoring({"alpha": 0.6})), "alpha")[0] == [
        "alpha"
    ]
    assert routed(build_graph("d", [ALPHA], assistant=sure), "alpha")[0] == ["alpha"]
    # the builder's threshold replaces the domain's
    lower = build_graph(domain, [ALPHA], assistant=sure, routing_threshold=0.2)
    assert routed(lower, "alpha")[0] == ["alpha"]


def test_T5_a_threshold_without_p_yes_changes_nothing():
    domain = Domain(name="d", routing_threshold=0.99)
    ran, ledger = routed(build_graph(domain, [ALPHA], assistant=Scoring({})), "alpha")
    assert ran == ["alpha"]
    assert not any(e.verdict == ABSTAINED for e in ledger)


# -- calibration (toolweave eval --calibrate-routing) ----------------------------------------


GOLDEN = [
    {"id": "d1", "question": "alpha", "expected_tools": ["alpha"]},
    {"id": "d2", "question": "beta hello", "expected_tools": "none"},
    {"id": "d3", "question": "beta", "expected_tools": ["beta"]},
    {"id": "h1", "question": "alpha again", "expected_tools": ["alpha"], "split": "heldout"},
]
"""P(yes) by question (:data:`SCORES`): d2's wrong yes is 0.3, d3's right one 0.6, so a
threshold in 0.4-0.6 gets the dev half right; h1's right yes is 0.2 (held out: unseen)."""
SCORES = {"alpha": 0.9, "beta hello": 0.3, "beta": 0.6, "alpha again": 0.2}


class ByQuestion(Scoring):
    def route(self, task_prompt: str, tools: Any) -> list[RoutingVerdict]:
        return [
            RoutingVerdict(t.name, t.name in task_prompt, "r", confidence=SCORES[task_prompt])
            for t in tools
        ]


def report_of(results: list[tuple[set[str], set[str], dict[str, float]]]) -> EvalReport:
    cases = [
        CaseResult(GoldenCase(str(i), "q", frozenset(want)), frozenset(got), confidence=p)
        for i, (want, got, p) in enumerate(results)
    ]
    return EvalReport(assistant="a", results=cases)


def test_T5_calibration_picks_most_exact_then_fewest_routes_nothing():
    report = report_of(
        [
            ({"alpha"}, {"alpha"}, {"alpha": 0.9}),
            (set(), {"beta"}, {"beta": 0.3}),
            ({"beta"}, {"beta"}, {"beta": 0.6}),
        ]
    )
    rows = {row.threshold: row for row in threshold_rows(report)}
    assert (rows[None].exact, rows[0.5].exact, rows[0.7].exact) == (2, 3, 2)
    assert rows[0.7].routes_nothing == 1
    assert best_threshold(list(rows.values())).threshold == 0.4  # the lowest of the best
    # equal exact counts: the lowest threshold (it also routes nothing least often)
    tied = report_of([({"alpha"}, {"alpha"}, {"alpha": 0.45}), (set(), {"beta"}, {"beta": 0.5})])
    rows = {row.threshold: row for row in threshold_rows(tied)}
    assert (rows[None].exact, rows[0.6].exact, rows[0.6].routes_nothing) == (1, 1, 1)
    assert best_threshold(list(rows.values())).threshold is None


@pytest.fixture
def calibrating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    golden = tmp_path / "g.jsonl"
    golden.write_text("\n".join(json.dumps(c) for c in GOLDEN) + "\n")
    monkeypatch.setattr(
        "toolweave.domains.load_domain", lambda *a, **k: (Domain(name="d"), [ALPHA, BETA])
    )
    return golden


def test_T5_calibration_sweeps_the_dev_half_and_stores_the_best(
    calibrating, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr("toolweave.llm.env.default_assistant", lambda **k: ByQuestion({}))
    where = tmp_path / "routing.json"
    code = main(["eval", str(calibrating), "--calibrate-routing", "--routing-file", str(where)])
    out = capsys.readouterr().out
    assert code == 0
    assert "| 0.4 | 3/3 | 0/3 |" in out  # h1 (held out) never ran: 3 cases
    assert "| none | 2/3 | 0/3 |" in out
    assert json.loads(where.read_text())["d"]["routing_threshold"] == 0.4
    assert stored_threshold("d", where) == 0.4


def test_T5_calibration_refuses_without_logprobs_and_writes_nothing(
    calibrating, tmp_path, monkeypatch, capsys
):
    where = tmp_path / "routing.json"
    monkeypatch.setattr("toolweave.llm.env.default_assistant", lambda **k: FunctionAssistant())
    code = main(["eval", str(calibrating), "--calibrate-routing", "--routing-file", str(where)])
    assert code == 3
    assert "needs the model's log-probabilities" in capsys.readouterr().err
    assert not where.exists()
    # a model that was asked but sent no P(yes) in the run: refused the same way
    monkeypatch.setattr("toolweave.llm.env.default_assistant", lambda **k: Scoring({}))
    assert (
        main(["eval", str(calibrating), "--calibrate-routing", "--routing-file", str(where)]) == 3
    )
    assert not where.exists()


def test_T5_load_domain_reads_the_stored_threshold(tmp_path, monkeypatch):
    from toolweave.domains import _calibrated

    where = tmp_path / "routing.json"
    monkeypatch.setenv(ROUTING_FILE_ENV, str(where))
    bundle = (Domain(name="d"), [ALPHA])
    assert _calibrated(bundle) is bundle  # no file: the domain as it is
    store_threshold("d", 0.7, about={"cases": 3})
    store_threshold("other", None, about={})
    assert _calibrated(bundle)[0].routing_threshold == 0.7
    assert set(json.loads(where.read_text())) == {"d", "other"}
