"""Clarification rounds in the korhaz domain, on the real graph with the offline model (Q1-Q4, S3).

``department_info`` asks which department when a consultation-hours question
names none; ``substance_lookup`` asks which medicine an ambiguous name means
inside a ``drug_interaction`` subtask. Every tool, coordinator and model call
is recorded, so the tests can assert that nothing runs twice across rounds (Q4).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import (
    NothingPendingError,
    ToolResult,
    build_graph,
    checkpoint_serde,
    pending_clarification,
    reply,
)
from toolweave.llm.offline import OfflineAssistant
from toolweave.state.results import ResultMode
from toolweave.state.task import TaskInfo
from toolweave.tools.base import ToolCallContext
from toolweave_korhaz import (
    DepartmentInfoRequest,
    DepartmentInfoTool,
    korhaz_domain,
    korhaz_tools,
)
from toolweave_korhaz.departments import departments
from toolweave_korhaz.examples import CLARIFICATION_EXAMPLES, ClarificationExample

HU_CHOICES = [d.name_hu for d in departments()]
EN_CHOICES = [d.name_en for d in departments()]
HU_QUESTION = "Melyik osztály? Írja be az osztály nevét vagy a sorszámát."
EN_QUESTION = "Which department? Type its name or its number in the list."
CARDIOLOGY_HU = "A Kardiológia rendelési ideje: hétfő-csütörtök 9:00-13:00."
CARDIOLOGY_EN = "Consultation hours of Cardiology: Monday-Thursday 9:00-13:00."
LIMIT_TEXT = "I still need more information to answer, but I have asked too many questions"
LIMIT_TEXT_HU = "A válaszhoz még több információ kellene, de már túl sok kérdést tettem fel"

TOOL_METHODS = (
    "execute",
    "execute_with_clarification",
    "execute_with_prior_context",
    "execute_with_clarification_and_prior_context",
    "decompose_into_subtasks",
    "decompose_from",
    "decide_conditional_subtask",
)
MODEL_METHODS = (
    "normalize",
    "route",
    "route_and_extract",
    "extract_decompositions",
    "generate_tool_request",
    "judge_context",
    "read_passage",
    "answer",
)


def _record(calls: list[str], label: str, method: Any, depth: list[int]) -> Any:
    """``method`` wrapped to append ``label`` (with its task number) to ``calls``.

    Only the outermost call of one object counts: ``route_and_extract`` calling
    ``route`` inside is one model call.
    """

    @functools.wraps(method)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if not depth:
            task_no = next((a.task_no for a in args if hasattr(a, "task_no")), None)
            calls.append(label if task_no is None else f"{label}@{task_no}")
        depth.append(1)
        try:
            return method(*args, **kwargs)
        finally:
            depth.pop()

    return recorded


def _counting(obj: Any, label: str, methods: tuple[str, ...], calls: list[str]) -> Any:
    depth: list[int] = []
    for method in methods:
        if callable(getattr(obj, method, None)):
            wrapped = _record(calls, f"{label}.{method}", getattr(obj, method), depth)
            setattr(obj, method, wrapped)
    return obj


def _graph(calls: list[str] | None = None, rounds: int = 3) -> Any:
    """The korhaz graph with an in-memory checkpointer; every call recorded into ``calls``."""
    calls = [] if calls is None else calls
    tools = [_counting(t, t.name, TOOL_METHODS, calls) for t in korhaz_tools()]
    model = _counting(OfflineAssistant(), "model", MODEL_METHODS, calls)
    saver = InMemorySaver(serde=checkpoint_serde())
    return build_graph(
        korhaz_domain(),
        tools,
        assistant=model,
        checkpointer=saver,
        max_clarification_rounds=rounds,
    )


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def _send(graph: Any, text: str, thread: str) -> dict[str, Any]:
    return graph.invoke({"messages": [HumanMessage(text)]}, _config(thread))  # type: ignore[no-any-return]


def _resume(graph: Any, text: str, thread: str) -> dict[str, Any]:
    return graph.invoke(Command(resume=text), _config(thread))  # type: ignore[no-any-return]


def _payload(out: dict[str, Any]) -> dict[str, Any]:
    (pending,) = out["__interrupt__"]
    return pending.value  # type: ignore[no-any-return]


# --- Q1: the question, its payload and its choices -------------------------------------------


@pytest.mark.parametrize(
    ("question", "text", "choices"),
    [
        ("Mikor van rendelés?", HU_QUESTION, HU_CHOICES),
        ("When are consultation hours?", EN_QUESTION, EN_CHOICES),
    ],
)
def test_Q1_department_question_pauses_with_the_documented_payload(question, text, choices):
    graph = _graph()
    out = _send(graph, question, "q1")
    payload = _payload(out)
    assert payload == {
        "type": "clarification",
        "question": text,
        "choices": choices,
        "tool": "department_info",
        "task_no": "1",
    }
    assert json.loads(json.dumps(payload)) == payload
    assert pending_clarification(graph, _config("q1")) == payload
    assert out["activated"] == []
    assert "1:department_info" not in out["context_buffer"]
    assert "Kardiológia" in HU_CHOICES
    assert "Cardiology" in EN_CHOICES
    routing = [(e.tool, e.verdict) for e in out["ledger"] if e.kind == "routing"]
    assert ("department_info", "routed") in routing  # the offline model routes it (A4)


@pytest.mark.parametrize(
    "question",
    [
        "Hol lehet parkolni a kórháznál?",
        "What is the wifi password?",
        "Hol rendel dr. Kovács Anna?",
    ],
)
def test_Q1_questions_not_about_a_department_do_not_ask(question):
    out = _send(_graph(), question, "none")
    assert "__interrupt__" not in out
    assert out["answer"]


# --- Q2: the reply finishes the answer, by Command(resume=...) or as the next message ----------


@pytest.mark.parametrize("example", CLARIFICATION_EXAMPLES, ids=lambda e: e.question)
@pytest.mark.parametrize("path", ["command", "next_message"])
def test_Q2_examples_answer_after_the_reply(example: ClarificationExample, path: str):
    graph = _graph()
    out = _send(graph, example.question, "ex")
    payload = _payload(out)
    task_no, tool = example.asked_by.split(":")
    assert (payload["task_no"], payload["tool"]) == (task_no, tool)
    out = (_resume if path == "command" else _send)(graph, example.reply, "ex")
    assert "__interrupt__" not in out
    assert out["activated"] == list(example.expected_tools)
    assert all(s in out["answer"] for s in example.expected_substrings), out["answer"]
    assert pending_clarification(graph, _config("ex")) is None


@pytest.mark.parametrize(
    "answer_reply",
    [
        "kardiológia",
        "kardiológián",
        "a kardiológiára gondoltam",
        "Kardiológiai osztály",
        "KARDIOLOGIA",
        "2",
        "2.",
        "Cardiology",
        "szívgyógyászat",
    ],
)
def test_Q2_every_form_of_the_reply_gives_the_same_context_as_naming_the_department(
    answer_reply,
):
    graph = _graph()
    named = _send(graph, "Mikor van rendelés a kardiológián?", "named")
    assert "__interrupt__" not in named
    _send(graph, "Mikor van rendelés?", "asked")
    out = _resume(graph, answer_reply, "asked")
    assert CARDIOLOGY_HU in out["answer"]
    buffer, expected = out["context_buffer"], named["context_buffer"]
    assert buffer["1:department_info"][0].context == expected["1:department_info"][0].context
    assert buffer["1:department_info"][0].documents == expected["1:department_info"][0].documents


def test_Q2_reply_through_toolweaves_reply_helper():
    graph = _graph()
    _send(graph, "When are consultation hours?", "helper")
    out = reply(graph, _config("helper"), {"reply": "cardiology"})
    assert CARDIOLOGY_EN in out["answer"]
    with pytest.raises(NothingPendingError):
        reply(graph, _config("helper"), "surgery")


@pytest.mark.parametrize("path", ["command", "next_message"])
def test_Q2_a_reply_naming_no_known_department_asks_again(path):
    graph = _graph()
    first = _payload(_send(graph, "Mikor van rendelés?", "again"))
    out = (_resume if path == "command" else _send)(graph, "fogászat", "again")
    again = _payload(out)
    assert again["question"] == (
        "Melyik osztály? Ilyen osztályt nem találtam: „fogászat”. "
        "Írja be az osztály nevét vagy a sorszámát."
    )
    assert {k: v for k, v in again.items() if k != "question"} == {
        k: v for k, v in first.items() if k != "question"
    }
    out = _resume(graph, "11", "again")  # out of range: still no department
    assert _payload(out)["question"].startswith("Melyik osztály? Ilyen osztályt nem találtam: „11”")
    out = _resume(graph, "sebészet", "again")
    assert "A Sebészet rendelési ideje: kedd 10:00-14:00, csütörtök 10:00-14:00." in out["answer"]
    rounds = [e.verdict for e in out["ledger"] if e.kind == "clarification"]
    assert rounds == ["asked", "replied"] * 3


def test_Q2_after_the_round_limit_the_run_ends_with_a_clear_message():
    graph = _graph()
    out = _send(graph, "When are consultation hours?", "limit")
    for answer_reply in ("x", "y"):
        out = _resume(graph, answer_reply, "limit")
        assert "I found no department called" in _payload(out)["question"]
    out = _resume(graph, "z", "limit")  # the 4th question would exceed max_clarification_rounds=3
    assert "__interrupt__" not in out
    assert out["answer"].startswith(LIMIT_TEXT)
    assert "“z”" in out["answer"]  # the last question is quoted
    assert pending_clarification(graph, _config("limit")) is None
    with pytest.raises(NothingPendingError):
        reply(graph, _config("limit"), "Cardiology")


def test_Q2_the_round_limit_is_configurable():
    graph = _graph(rounds=1)
    _send(graph, "Mikor van rendelés?", "one")
    out = _send(graph, "nem tudom", "one")
    assert "__interrupt__" not in out
    assert out["answer"].startswith(LIMIT_TEXT_HU)  # in the user's language


# --- Q4: nothing that already ran runs again, across three rounds ---------------------------


def test_Q4_exact_tool_coordinator_and_model_calls_across_three_rounds():
    calls: list[str] = []
    graph = _graph(calls)
    _send(graph, "Mikor van rendelés?", "q4")
    asked = [  # no medicine and no doctor named: no decomposition at all (A10)
        "model.normalize",
        "model.route_and_extract",
        "department_info.execute@1",
    ]
    assert calls == asked
    _resume(graph, "x", "q4")
    _send(graph, "fogászat", "q4")
    out = _resume(graph, "2", "q4")
    assert CARDIOLOGY_HU in out["answer"]
    assert calls == [
        *asked,
        "department_info.execute_with_clarification@1",
        "department_info.execute_with_clarification@1",
        "department_info.execute_with_clarification@1",
        "korhaz_search.execute@1",
        # no gatekeeper: a context text holds every word of the question (A10, D1)
        "model.answer",
    ]
    assert out["activated"] == ["1:department_info", "1:korhaz_search"]
    assert graph.get_state(_config("q4")).values["clarification_rounds"] == 3


# --- S3, B4: an ambiguous medicine asks inside the subtask; the parent continues ------------


@pytest.mark.parametrize("path", ["command", "next_message"])
def test_S3_drug_subtask_asks_and_the_parent_continues_after_the_reply(path):
    calls: list[str] = []
    graph = _graph(calls)
    out = _send(graph, "Szedhetek Enapot és Verospiront együtt?", "s3")
    payload = _payload(out)
    assert (payload["tool"], payload["task_no"]) == ("substance_lookup", "1.1")
    assert payload["choices"] == ["enalapril (Enap)", "enalapril + hidroklorotiazid (Enap-HL)"]
    asked = [
        "model.normalize",
        "model.extract_decompositions",  # one extraction, for the coordinator that may apply
        "drug_interaction.decompose_from@1",  # no doctor named: doctor_finder is passed (A10)
        "model.generate_tool_request",
        "substance_lookup.execute@1.1",
    ]
    assert calls == asked  # 1.2 waits for the reply (S3)
    paused = graph.get_state(_config("s3")).values["tasks"]
    assert sorted(paused) == ["1", "1.1", "1.2"]
    prompts = [paused[n].task.task_prompt for n in ("1.1", "1.2")]
    assert "Enap" in prompts[0]

    out = (_resume if path == "command" else _send)(graph, "1", "s3")
    assert "__interrupt__" not in out
    assert "enalapril és spironolakton: súlyos kölcsönhatás" in out["answer"]
    assert out["activated"] == [
        "1.1:substance_lookup",
        "1.2:substance_lookup",
        "1:drug_interaction",
    ]
    assert calls == [
        *asked,
        "substance_lookup.execute_with_clarification@1.1",
        "model.generate_tool_request",  # the request of 1.2; 1.1 keeps its own
        "substance_lookup.execute@1.2",
        "drug_interaction.execute_with_prior_context@1",
    ]
    assert [t.task_prompt for t in out["task"].sub_tasks] == prompts  # not decomposed again (C3)


# --- the tool on its own -------------------------------------------------------------------


def _ctx(question: str, lang: str = "hu") -> ToolCallContext:
    task = TaskInfo(task_no="1", task_prompt=question)
    return ToolCallContext(task=task, text=question, user_lang=lang)


def test_Q1_the_clarification_result_is_a_plain_tool_result():
    result = DepartmentInfoTool().execute(DepartmentInfoRequest(), _ctx("Ki a főorvos?", "en"))
    assert result == ToolResult.clarification("department_info", EN_QUESTION, EN_CHOICES)
    assert result.mode is ResultMode.CLARIFICATION


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("Mikor van rendelés?", "hu"),
        ("Van rendelés pénteken?", "hu"),
        ("Mikor lehet látogatni az osztályon?", "hu"),
        ("Mi az osztály telefonszáma?", "hu"),
        ("Ki az osztályvezető főorvos?", "hu"),
        ("When are consultation hours?", "en"),
        ("When are visiting hours on the ward?", "en"),
        ("Who is the head of the department?", "en"),
        ("Which floor is the ward on?", "en"),
    ],
)
def test_Q1_department_topics_without_a_department_ask(question, lang):
    # visiting hours ask only when a ward is meant: the hospital-wide rules answer the rest
    result = DepartmentInfoTool().execute(DepartmentInfoRequest(), _ctx(question, lang))
    assert result is not None
    assert result.mode is ResultMode.CLARIFICATION
    assert result.choices == tuple(HU_CHOICES if lang == "hu" else EN_CHOICES)


@pytest.mark.parametrize("answer_reply", ["0", "11", "fogászat", "nem tudom", "the big one"])
def test_Q2_the_tool_asks_again_when_the_reply_picks_nothing(answer_reply):
    tool = DepartmentInfoTool()
    result = tool.execute_with_clarification(
        DepartmentInfoRequest(), _ctx("When are consultation hours?", "en"), answer_reply
    )
    assert result == ToolResult.clarification(
        "department_info",
        f"Which department? I found no department called “{answer_reply}”. "
        "Type its name or its number in the list.",
        EN_CHOICES,
    )


def test_Q2_a_reply_naming_two_departments_answers_for_both():
    result = DepartmentInfoTool().execute_with_clarification(
        DepartmentInfoRequest(), _ctx("Mikor van rendelés?"), "kardiológia és sebészet"
    )
    assert result is not None
    assert result.mode is ResultMode.CONTEXT
    assert {d.document_id for d in result.documents} == {
        "departments.json#kardiologia",
        "departments.json#sebeszet",
    }
