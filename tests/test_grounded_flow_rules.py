"""Issue 17 items 4, 5, 6 and 8: two calls a question (A10), grounded extraction (T7, C1),
never a generated medical yes or no (A7), follow-ups that replace what they change (A1).

The scripted chat model replays the replies a 1.5B model gave on the README questions
(placeholders for a doctor's name, the instruction's own examples, one medicine
missed, a generated "yes"); each test fails when its rule is broken.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from toolweave import ChatbotTool, EmptyRequest, ToolResult, build_graph
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.offline import OfflineAssistant, resolve_followup
from toolweave.llm.offline_extract import extract_request, ground_request, grounded
from toolweave.llm.port import DecompositionSchema
from toolweave.state.ledger import LedgerKind
from toolweave.state.serde import checkpoint_serde
from toolweave.state.task import TaskInfo
from toolweave.testing import ScriptedChatModel
from toolweave_korhaz import korhaz_domain, korhaz_tools
from toolweave_korhaz.coordinators import (
    MEDICATION_ADVICE,
    DoctorDecomposition,
    DoctorFinderCoordinator,
    InteractionDecomposition,
)
from toolweave_korhaz.tools import DepartmentInfoRequest

PLAIN = "Mikor van rendelés a kardiológián?"
"""The README's first question: a department question, no doctor, no medicine."""
DOCTOR_PLACEHOLDERS = [
    "null",
    "none",
    "Unknown",
    "undefined",
    "n/a",
    "",
    "Dr. Smith",
    "hétfő",
    PLAIN,
]
"""What the 1.5B model put into ``doctor_name`` on questions naming no doctor."""


def _chat(*script: Any) -> tuple[ChatModelAssistant, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script))
    return ChatModelAssistant(model, initial_backoff=0), model


def _korhaz(*script: Any) -> tuple[Any, ScriptedChatModel]:
    llm, model = _chat(*script)
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(),
        assistant=llm,
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
    )
    return graph, model


def _ask(graph: Any, text: str, thread: str = "t") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[no-any-return]


def _activation(run: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """A fused routing reply over the korhaz candidates: ``run`` says yes (with its request)."""
    reply: dict[str, Any] = {}
    for tool in korhaz_tools():
        if tool.executable_instruction and tool.name != "korhaz_search":
            yes = tool.name in run
            reply[tool.name] = {"reason": "r", "run": yes, "request": run.get(tool.name)}
    return reply


def _systems(model: ScriptedChatModel) -> list[str]:
    return [call.system.splitlines()[0] if call.system else "" for call in model.calls]


# --- A10: a one-task question with one routed tool costs two model calls -------------------


class Parking(ChatbotTool[EmptyRequest]):
    name = "parking"
    request_model = EmptyRequest
    executable_instruction = "parking: true when the user asks about parking."

    def execute(self, request: EmptyRequest, ctx: Any) -> ToolResult | None:
        return ToolResult.as_guaranteed_context(self.name, "Parking costs 500 Ft an hour.")


class Noop(ChatbotTool[EmptyRequest]):
    request_model = EmptyRequest

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]
        self.executable_instruction = f"{name}: true when the user asks about {name}."  # type: ignore[misc]

    def execute(self, request: EmptyRequest, ctx: Any) -> ToolResult | None:
        return None


def test_A10_one_task_one_routed_tool_costs_two_model_calls():
    tools = [Parking(), *(Noop(f"topic_{i}") for i in range(9))]
    routing = {t.name: {"reason": "r", "run": t.name == "parking"} for t in tools}
    llm, model = _chat(routing, "Parking costs 500 Ft an hour.")
    out = build_graph("demo", tools, assistant=llm).invoke(
        {"messages": [HumanMessage("How much is parking?")]}
    )
    assert out["answer"] == "Parking costs 500 Ft an hour."
    assert out["llm_calls"] == len(model.calls) == 2  # routing with extraction, the answer
    assert model.calls[0].human == "How much is parking?"  # the first message, not rewritten


def test_A10_a_follow_up_the_rules_resolve_costs_no_rewrite_call():
    llm, model = _chat(
        {"parking": {"reason": "r", "run": True}},
        "500 Ft.",
        {"parking": {"reason": "r", "run": True}},
        "500 Ft on Sunday too.",
    )
    graph = _parking_graph(llm)
    _ask(graph, "How much is parking?")
    out = _ask(graph, "and on Sunday?")
    assert len(model.calls) == 4  # routing and answer, twice: no normalization call
    assert model.calls[2].human == "How much is parking on Sunday?"  # the rules' rewrite (A1)
    assert out["llm_calls"] == 2


def _parking_graph(llm: Any) -> Any:
    return build_graph(
        "demo", [Parking()], assistant=llm, checkpointer=InMemorySaver(serde=checkpoint_serde())
    )


def _rewritten_follow_up(rewrite: dict[str, Any]) -> tuple[ScriptedChatModel, dict[str, Any]]:
    """ "Where can I park?", then "How much does it cost per hour?", which the model rewrites.

    ``rewrite`` is the model's normalization reply to the follow-up ("it": the rules
    cannot tell what it means, so the model is asked).
    """
    yes = {"parking": {"reason": "r", "run": True}}
    llm, model = _chat(yes, "500 Ft.", rewrite, yes, "500 Ft an hour.")
    graph = _parking_graph(llm)
    _ask(graph, "Where can I park?")
    return model, _ask(graph, "How much does it cost per hour?")


def _standalone(question: str) -> dict[str, Any]:
    """A normalization reply whose standalone question is ``question``."""
    return {
        "question": question,
        "user_lang": "en",
        "important_words": ["parking", "hour"],
        "prompt_type": "factual",
    }


def test_A10_a_follow_up_the_rules_cannot_resolve_is_rewritten_by_the_model():
    model, out = _rewritten_follow_up(_standalone("How much does parking cost per hour?"))
    assert model.calls[2].human == "How much does it cost per hour?"  # the normalization call
    assert model.calls[3].human == "How much does parking cost per hour?"
    assert out["llm_calls"] == 3


def test_A1_a_rewrite_that_adds_a_word_nobody_wrote_gives_way_to_the_rules():
    # a small model's subject of its own: "emergency" is nowhere in the talk
    model, out = _rewritten_follow_up(_standalone("How much does emergency parking cost per hour?"))
    routed = model.calls[3].human
    assert "emergency" not in routed.lower()
    assert "hour" in routed
    assert any("adds words nobody wrote" in (e.reason or "") for e in out["ledger"])


@pytest.mark.parametrize(
    "question",
    [PLAIN, "Mi a kardiológia telefonszáma?", "Who is the head of the paediatrics department?"],
)
def test_A10_no_decomposition_call_for_a_question_no_coordinator_can_apply_to(question):
    graph, model = _korhaz(
        _activation({"department_info": None}),
        {"sufficient": True, "missing": []},
        "Hétköznap 9:00-13:00 [1].",
    )
    out = _ask(graph, question)
    assert not any("coordinator" in s for s in _systems(model))  # no decomposition prompt
    assert out["task"].sub_tasks == []
    assert "1:department_info" in out["activated"]  # routed, not claimed by doctor_finder
    runs = {e.tool: e.verdict for e in out["ledger"] if e.kind == "coordinator_run"}
    assert runs == {"drug_interaction": "no change", "doctor_finder": "no change"}


def test_A10_decomposition_asks_only_for_the_coordinators_that_may_apply():
    graph, model = _korhaz(
        {"drug_interaction": {"takes_together": True, "medicines": ["marfarint", "ibuprofénnel"]}},
        {"substance": "marfarint"},
        {"substance": "ibuprofénnel"},
    )
    _ask(graph, "Szedhetem a marfarint ibuprofénnel?")
    schema = model.calls[0].tools[0]["function"]["parameters"]
    assert set(schema["properties"]) == {"drug_interaction"}  # no doctor named: not asked


# --- T7: only values written in the task text count ---------------------------------------


@pytest.mark.parametrize("value", DOCTOR_PLACEHOLDERS)
def test_T7_placeholder_guessed_or_copied_doctor_names_are_none(value):
    llm, _ = _chat({"doctor_finder": {"doctor_name": value}})
    schema = DecompositionSchema("doctor_finder", DoctorDecomposition, "which doctor?")
    filled = llm.extract_decompositions(PLAIN, [schema]).values["doctor_finder"]
    assert filled == {"doctor_name": None}


def test_T7_a_name_the_user_wrote_is_kept_in_any_case_and_inflection():
    assert grounded("kovács anna", "Hol rendel Kovács Annánál?", named_thing=True)
    assert grounded("ibuprofen", "Szedhetem ibuprofénnel?")
    assert ground_request(
        {"medicines": ["Verospiron", "Dr. Smith", "null"]},
        InteractionDecomposition,
        "Szedhetek Verospiront Diroton mellett?",
    ) == {"medicines": ["Verospiron"]}


@pytest.mark.parametrize("value", ["Kórházi osztály", "undefined", "kórházi osztály"])
def test_T7_department_copied_from_the_instruction_is_none_so_the_tool_asks(value):
    graph, model = _korhaz(
        _activation({"department_info": {"department": value, "topic": None, "day": None}})
    )
    out = _ask(graph, "Mikor van rendelés?")
    assert out["__interrupt__"][0].value["tool"] == "department_info"  # which department? (Q1)
    assert len(model.calls) == 1


def test_T7_format_date_copied_from_its_routing_instruction_is_none():
    from toolweave.tools.ai.orchestration import as_chatbot_tools
    from toolweave_korhaz.ai_tools import FormatDateTool

    (tool,) = as_chatbot_tools([FormatDateTool()])
    reply = {"format_date": {"reason": "r", "run": True, "request": {"date": "2026-12-24"}}}
    llm, _ = _chat(reply)
    question = "Milyen napra esik karácsony?"
    activation = llm.route_and_extract(question, question, [tool], extraction_prompt="")
    assert activation.requests == {}  # the made-up date is no input ...
    assert not activation.verdicts[0].run  # ... and a yes resting on it alone is no yes
    llm, _ = _chat(reply)
    question = "Milyen napra esik 2026-12-24?"
    activation = llm.route_and_extract(question, question, [tool], extraction_prompt="")
    assert activation.requests["format_date"] == {"date": "2026-12-24", "locale": None}
    assert activation.verdicts[0].run


# --- C1: a coordinator claims a task only on grounded values, joined by its own lookup ----------


@pytest.mark.parametrize("value", DOCTOR_PLACEHOLDERS)
def test_C1_doctor_finder_does_not_claim_a_task_naming_no_doctor(value):
    task = TaskInfo(task_no="1", task_prompt=PLAIN)
    decided = DoctorFinderCoordinator().decompose_from(task, DoctorDecomposition(doctor_name=value))
    assert (decided.sub_tasks, decided.required_tool_names) == ([], [])


def test_C1_doctor_finder_claims_the_doctor_the_text_names_as_the_model_wrote_it():
    task = TaskInfo(task_no="1", task_prompt="hol rendel kovács anna doktornő?")
    coordinator = DoctorFinderCoordinator()
    decided = coordinator.decompose_from(task, DoctorDecomposition(doctor_name="kovács anna"))
    assert decided.sub_tasks[0].important_words == ["dr. kovács anna"]
    titled = TaskInfo(task_no="1", task_prompt="Mikor rendel Dr. Lengyel Márta?")
    decided = coordinator.decompose_from(titled, DoctorDecomposition(doctor_name=None))
    assert decided.sub_tasks[0].important_words == ["dr. Lengyel Márta"]  # the text's title


def test_C1_a_medicine_the_model_missed_is_joined_by_the_substance_table():
    graph, _ = _korhaz(
        {"drug_interaction": {"takes_together": True, "medicines": ["Verospiront"]}},
        {"substance": "Verospiront"},
        {"substance": "Diroton"},
    )
    out = _ask(graph, "Szedhetek Verospiront Diroton mellett?")
    assert [s.important_words for s in out["task"].sub_tasks] == [["Verospiront"], ["Diroton"]]
    assert out["activated"][-1] == "1:drug_interaction"  # the table's answer (R3)
    assert out["ledger"][-1].verdict == "terminal"


# --- A7: a generated medical yes or no is never the answer ----------------------------------


@pytest.mark.parametrize(
    ("question", "generated", "lang"),
    [
        (
            "Can I take ibuprofen with my blood thinner?",
            "Yes, you can take ibuprofen with your blood thinner as prescribed by your doctor.",
            "en",
        ),
        ("Szedhetek Verospiront Diroton mellett?", "Igen, lehet.", "hu"),
        # one medicine, a dose: the declared text, never a generated dose
        ("How much paracetamol can I take in a day?", "Up to 4 grams a day.", "en"),
    ],
)
def test_A7_a_medicine_question_no_drug_tool_answered_gets_the_declared_text(
    question, generated, lang
):
    graph, model = _korhaz(  # the model says "not about taking them together" and routes none
        {"drug_interaction": {"takes_together": False, "medicines": []}},
        _activation({}),
        {"sufficient": False, "missing": ["dose"]},
        generated,
    )
    out = _ask(graph, question)
    assert out["answer"] == MEDICATION_ADVICE.texts[lang]
    assert generated not in out["answer"]
    assert out["ledger"][-1].verdict == "withheld"
    # A10: neither the gatekeeper (D1) nor the generated answer was asked for, and no
    # deep search ran: the withheld text does not depend on the context
    assert len(model.calls) == 2
    (deep,) = [e for e in out["ledger"] if e.kind == LedgerKind.DEEP_FALLBACK]
    assert deep.verdict == "not run"
    assert "medication advice" in deep.reason


def test_A7_other_questions_are_answered_by_the_model():
    # a parking passage holds the question's one content word: no gatekeeper call (A10);
    # no marker: a sentence citing a passage that does not say it is dropped (R9)
    graph, _ = _korhaz(_activation({}), "At the gate.")
    assert _ask(graph, "Where can I park?")["answer"] == "At the gate."


# --- A1: the offline rewrite replaces what the follow-up changes ---------------------------


@pytest.mark.parametrize(
    ("previous", "follow_up", "standalone"),
    [
        (
            "When is the gym open on Saturday?",
            "and the sauna?",
            "When is the sauna open on Saturday?",
        ),
        (
            "When are visiting hours at cardiology?",
            "and on Friday?",
            "When are visiting hours at cardiology on Friday?",
        ),
        (
            "Can I take ibuprofen with warfarin?",
            "What about paracetamol with warfarin?",
            "Can I take paracetamol with warfarin?",
        ),
        (
            "Mikor van látogatás a kardiológián?",
            "és a sebészeten?",
            "Mikor van látogatás a sebészeten?",
        ),
        ("Milyen idő lesz holnap Budapesten?", "és Szegeden?", "Milyen idő lesz holnap Szegeden?"),
        (
            "Hol rendel dr. Kiss Judit?",
            "És mi a telefonszáma a neurológiának?",
            "mi a telefonszáma a neurológiának?",
        ),
    ],
)
def test_A1_offline_follow_up_replaces_the_subject_or_day_instead_of_appending(
    previous, follow_up, standalone
):
    assert resolve_followup(follow_up, previous) == standalone


@pytest.mark.parametrize(
    ("previous", "follow_up", "standalone"),
    [
        (
            "Mikor van vérvétel a laborban?",
            "És kell éheznem előtte?",
            "És kell éheznem előtte? (vérvétel laborban)",
        ),
        (
            "When is the pharmacy open on Sunday?",
            "and where is it?",
            "and where is it? (pharmacy open)",
        ),
        (
            "Mikor van rendelés a kardiológián?",
            "és hol van?",
            "és hol van? (rendelés kardiológián)",
        ),
        ("When is the pharmacy open on Sunday?", "And where?", "And where? (pharmacy open)"),
        (
            "Kiedy jest otwarte biuro kadr?",
            "A gdzie to jest?",
            "A gdzie to jest? (otwarte biuro kadr)",
        ),
    ],
)
def test_A1_a_follow_up_asking_something_new_about_the_earlier_subject_is_asked_first(
    previous: str, follow_up: str, standalone: str
) -> None:
    """Fixed: the earlier question came first, the new words after it, and was answered again.

    "és hol van?" (no pointing word, no new word but the question word) was the earlier
    question itself, so *when* was answered to *where*; the Polish "a" before a question word
    opened no follow-up.
    """
    assert resolve_followup(follow_up, previous) == standalone


def test_A1_a_day_after_a_visiting_hours_question_keeps_visiting_hours():
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(),
        assistant=OfflineAssistant(),
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
    )
    _ask(graph, "When are visiting hours at cardiology?", "a1")
    out = _ask(graph, "and on Friday?", "a1")
    assert out["answer"].startswith("Visiting hours on the Cardiology ward")
    assert "consultation" not in out["answer"].lower()


def test_T6_department_request_keeps_closed_fields_as_given():
    values = {"department": "kardiológia", "topic": "consultation_hours", "day": "Monday"}
    assert ground_request(values, DepartmentInfoRequest, "Mikor rendel a kardiológia?") == values


def test_A1_a_model_rewrite_dropping_the_follow_ups_words_gives_way_to_the_offline_one():
    back = {  # the 0.5B model's reply: the earlier question again
        "question": "Where can I park?",
        "user_lang": "en",
        "important_words": ["park"],
        "prompt_type": "factual",
    }
    llm, model = _chat(
        {"parking": {"reason": "r", "run": False}},
        "At the gate.",
        back,
        {"parking": {"reason": "r", "run": False}},
        "500 Ft.",
    )
    graph = build_graph(
        "demo", [Parking()], assistant=llm, checkpointer=InMemorySaver(serde=checkpoint_serde())
    )
    _ask(graph, "Where can I park?", "s")
    out = _ask(graph, "How much does it cost per hour?", "s")
    assert model.calls[3].human == "How much does it cost per hour?"  # not the old question
    notes = [e.reason for e in out["ledger"] if e.kind == "normalized"]
    assert "drops the message's own words" in notes[0]


def test_T7_numbers_times_and_phones_count_when_the_user_wrote_them():
    assert grounded("+36301234567", "Hívjon a +36 30 123 4567 számon")
    assert grounded("10:00", "10 órakor jönnék")
    assert not grounded("14:00", "10 órakor jönnék")
    assert grounded("2026-12-24", "Which weekday is 24 December 2026?")
    assert not grounded("2026-12-24", "Which weekday is Christmas?")


def test_T7_a_known_value_without_a_content_word_counts_only_as_written_whole():
    """ "A&E" is the words "a" and "e": any Hungarian question with the article and a
    word in e- named the emergency department (the offline extraction of "Milyen számon
    érem el a bőrgyógyászatot?" was "A&E", and the user got the emergency ward's phone)."""
    question = "Milyen számon érem el a bőrgyógyászatot?"
    assert extract_request(question, DepartmentInfoRequest) == {
        "department": "Bőrgyógyászat",
        "topic": None,
        "day": None,
    }
    assert not grounded("A&E", question, named_thing=True)
    assert not grounded("A&E", "Van-e a közelben egy étterem?", named_thing=True)
    # written as the name, it still counts
    assert extract_request("Is A&E open at night?", DepartmentInfoRequest)["department"] == "A&E"
    assert grounded("A&E", "Where is A&E?", named_thing=True)


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("Please ask cardiology to call me back.", "en"),
        ("Kérem, hívjanak vissza a kardiológiáról.", "hu"),
    ],
)
def test_A7_a_callback_request_no_tool_recorded_is_never_answered_with_a_promise(question, lang):
    """The 1.5B model's answer: "Dr. Lengyel Márta … will call you back", with no request
    recorded (here the callback tool is not even offered: no phone on file)."""
    from toolweave_korhaz.withheld import CALLBACK_NOT_RECORDED

    promise = "Certainly, Dr. Lengyel Márta is on the Cardiology ward, and she will call you back."
    graph, model = _korhaz(_activation({}), {"sufficient": True, "missing": []}, promise)
    out = _ask(graph, question)
    assert out["answer"] == CALLBACK_NOT_RECORDED[lang]
    assert out["ledger"][-1].verdict == "withheld"
    assert promise not in [call.human for call in model.calls]
    assert all(promise not in str(m.content) for m in out["messages"])


def test_A7_a_question_about_calling_a_ward_is_answered_as_usual():
    said = "Call the ward's reception."  # no number the context lacks (R9 would drop it)
    graph, _ = _korhaz(_activation({}), {"sufficient": True, "missing": []}, said)
    assert _ask(graph, "How can I call the cardiology ward?")["answer"] == said


def test_T5_a_yes_is_backed_by_an_input_the_text_states_in_its_own_words():
    """ "A gyerekosztály melyik emeleten van?": the 1.5B model said yes to department_info
    with the department "Gyermekgyógyászat", which the text does not write; the yes was
    read as no ("nothing behind it") and the answer came from the search."""
    question = "A gyerekosztály melyik emeleten van?"
    reply = _activation({"department_info": {"department": "Gyermekgyógyászat"}})
    graph, _ = _korhaz(reply, {"sufficient": True, "missing": []}, "A D épület 1. emeletén [1].")
    out = _ask(graph, question)
    assert "1:department_info" in out["activated"]
    assert not [e for e in out["ledger"] if e.verdict == "t5_yes_not_backed"]
    # a yes with nothing behind it, in the request or in the text, is still a no
    # (tests/test_routing_reply_rules.py: "What is the capital of France?")
