"""A8: a tool whose result is a finished answer runs only on a clear routing verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument, build_graph
from toolweave.graph.candidates import (
    ACTING_IN_DOUBT,
    OTHERS_DROPPED,
    ROUTING_FAILURE,
    TERMINAL_DROPPED,
)
from toolweave.state.ledger import LedgerKind
from toolweave.testing import FunctionAssistant
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool


class Emergency(ChatbotTool[Any]):
    name = "emergency"
    priority = 10
    returns_answer = True
    executable_instruction = "emergency: true when the user needs the emergency phone number."

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "Call 112.")


class Poison(ChatbotTool[Any]):
    name = "poison"
    priority = 11
    returns_answer = True
    executable_instruction = "poison: true when someone swallowed something toxic."

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_answer(self.name, "Call the poison line.")


def context_tool(name: str, text: str) -> AnyTool:
    def execute(self: Any, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        return ToolResult.as_context(name, [UniqueTextDocument(document_id=name, text=name)])

    attrs = {
        "name": name,
        "priority": 50,
        "executable_instruction": f"{name}: true when the user asks about {text}.",
        "execute": execute,
    }
    return type(f"T_{name}", (ChatbotTool,), attrs)()  # type: ignore[no-any-return]


WARD = context_tool("ward_phone", "the phone number of a hospital ward")
PARKING = context_tool("parking", "parking the car")
CAFE = context_tool("cafe", "food and the cafeteria")
SEARCH = context_tool("search", "anything")


def run(question: str, routed: Sequence[str], tools: Sequence[AnyTool] | None = None) -> Any:
    assistant = FunctionAssistant(route=lambda text, offered: list(routed))
    domain = Domain(name="d", default_retrieval_tool="search")
    graph = build_graph(
        domain, tools or [Emergency(), Poison(), WARD, PARKING, CAFE, SEARCH], assistant=assistant
    )
    return graph.invoke({"messages": [HumanMessage(question)]})


def answered_by(out: Any) -> list[str]:
    """The answer's ledger verdicts: ``terminal`` for a tool's finished answer."""
    return [e.verdict for e in out["ledger"] if e.kind == LedgerKind.ANSWER]


def ran(out: Any) -> list[str]:
    return [key.rpartition(":")[2] for key in out["activated"]]


def a8_entries(out: Any) -> list[Any]:
    return [e for e in out["ledger"] if e.kind == LedgerKind.ROUTING and e.verdict.startswith("a8")]


def test_A8_clear_terminal_verdict_is_taken():
    out = run("What is the emergency phone number?", ["emergency"])
    assert out["answer"] == "Call 112."
    assert ran(out) == ["emergency"]
    assert a8_entries(out) == []


def test_A8_several_terminal_tools_routed_is_a_routing_failure():
    out = run("emergency, someone swallowed something toxic", ["emergency", "poison"])
    assert ran(out) == ["search"]
    (entry,) = a8_entries(out)
    assert entry.verdict == ROUTING_FAILURE
    assert set(entry.details) == {"emergency", "poison"}
    assert out["answer"] != "Call 112."


def test_A8_terminal_tool_routed_with_most_candidates_falls_back_to_retrieval():
    out = run("emergency parking cafe?", ["emergency", "ward_phone", "parking", "cafe"])
    assert ran(out) == ["search"]
    (entry,) = a8_entries(out)
    assert entry.verdict == ROUTING_FAILURE
    assert "retrieval answers instead" in entry.reason


def test_A8_terminal_tool_with_no_word_in_common_is_dropped():
    out = run("Where can I leave my car overnight?", ["emergency"])
    assert ran(out) == ["search"]
    (entry,) = a8_entries(out)
    assert entry.verdict == TERMINAL_DROPPED
    assert entry.details == {"emergency": "routed, not run (A8)"}


def test_A8_conflict_goes_to_the_tool_the_prompt_matches_better():
    # the model says yes to both; the finished answer would silence the ward tool
    ward = run("What is the phone number of the cardiology ward?", ["emergency", "ward_phone"])
    assert ran(ward) == ["ward_phone", "search"]
    assert [e.verdict for e in a8_entries(ward)] == [TERMINAL_DROPPED]
    urgent = run("emergency phone number, urgently!", ["emergency", "ward_phone"])
    assert ran(urgent) == ["emergency"]
    assert urgent["answer"] == "Call 112."
    assert [e.verdict for e in a8_entries(urgent)] == [OTHERS_DROPPED]


def test_A8_does_not_touch_routing_without_terminal_tools():
    out = run("parking and cafe", ["parking", "cafe", "ward_phone"])
    assert ran(out) == ["ward_phone", "parking", "cafe", "search"]
    assert a8_entries(out) == []


def test_A8_hospital_confused_model_degrades_to_retrieval_not_emergency_numbers():
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    def yes_to_all(text: str, offered: Sequence[AnyTool]) -> list[str]:
        return [t.name for t in offered]

    def yes_to_first(text: str, offered: Sequence[AnyTool]) -> list[str]:
        return ["emergency_numbers"]  # the 0.5B model's habit (issue 11)

    # issue 20 item 1: a lone yes at a tie at zero stands, so the confused model is
    # tested where another candidate has evidence (the ward's phone: department_info)
    for route in (yes_to_all, yes_to_first):
        graph = build_graph(
            korhaz_domain(), korhaz_tools(), assistant=FunctionAssistant(route=route)
        )
        for question in ("Hol lehet parkolni a kórháznál?", "Mi a kardiológia telefonszáma?"):
            if route is yes_to_first and "parkolni" in question:
                continue
            out = graph.invoke({"messages": [HumanMessage(question)]})
            assert "emergency_numbers" not in ran(out), (route.__name__, question)
            assert "korhaz_search" in ran(out)


def test_T12_a_short_stem_or_a_pronoun_is_no_index_term_on_either_side():
    """ "óránként" stems to "or", "magammal" and "magát" to "mag": no evidence for a tool."""
    from toolweave.tools.prefilter import CandidateIndex
    from toolweave_korhaz import korhaz_tools

    tools = korhaz_tools()
    index = CandidateIndex(tools)
    names = [tool.name for tool in tools]
    for question in (
        "Mennyibe kerül a parkolás óránként?",  # "or" of the routing question's "or"
        "Hozzam magammal a gyógyszereimet a felvételre?",  # "mag" of "Túladagolta magát"
    ):
        assert index.scores(question, names)["emergency_numbers"] == 0, question
    assert index.scores("Mi a segélyhívó szám?", names)["emergency_numbers"] > 0
    assert index.scores("Do you need help?", names)["emergency_numbers"] > 0  # "needs help"
    assert index.scores("Do you need help?", ["x"]) == {"x": 0.0}


def test_A9_a_lone_terminal_yes_at_a_tie_at_zero_joins_the_context_when_examples_are_declared():
    """The 0.5B model's lone emergency yes where nothing, its examples included, matches."""
    from toolweave.graph.candidates import TERMINAL_AS_CONTEXT
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    question = "Hozzam magammal a gyógyszereimet a felvételre?"
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(),
        assistant=FunctionAssistant(route=lambda text, offered: ["emergency_numbers"]),
    )
    out = graph.invoke({"messages": [HumanMessage(question)]})
    assert answered_by(out) == ["generated"]  # the run did not end with its finished answer
    assert ran(out) == ["korhaz_search", "emergency_numbers"]  # last, after the retrieval
    found = [doc.document_id for doc in out["documents"]]
    assert found[0] == "korhaz/felvetel.md"  # the answer comes from the admission page ...
    assert "tool:emergency_numbers" in found  # ... with the numbers in its context
    # the scripted answer reads the context (D9: a passage, the sentence before it first)
    assert "Hozza magával a rendszeresen szedett gyógyszerei" in out["answer"]
    (entry,) = [e for e in out["ledger"] if e.verdict == TERMINAL_AS_CONTEXT]
    assert entry.details == {"emergency_numbers": "runs, its answer joins the context (A9)"}


def test_A9_a_lone_terminal_yes_the_offline_rule_would_not_take_joins_the_context():
    """The 0.5B model's lone emergency yes for a parking rule at the emergency building.

    "stop" and "emergency" are the emergency tool's words, "emergency building" the
    department tool's: the keyword ranking puts the emergency tool first, but the
    offline rule, which asks more of a finished answer, routes the department tool.
    That is doubt, so the search answers, with the numbers in its context.
    """
    from toolweave.graph.candidates import TERMINAL_AS_CONTEXT
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    question = "How long can I stop in front of the emergency building to drop off a patient?"
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(),
        assistant=FunctionAssistant(route=lambda text, offered: ["emergency_numbers"]),
    )
    out = graph.invoke({"messages": [HumanMessage(question)]})
    assert answered_by(out) == ["generated"]
    assert ran(out)[-1] == "emergency_numbers"
    assert "tool:emergency_numbers" in [doc.document_id for doc in out["documents"]]
    (entry,) = [e for e in out["ledger"] if e.verdict == TERMINAL_AS_CONTEXT]
    assert "the evidence the offline rule asks of a finished answer" in entry.reason


def test_A9_a_terminal_tool_at_a_near_tie_with_another_yes_does_not_silence_it():
    """ "What is the pharmacy's phone number?": both say "phone number"; the context runs."""
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    both = FunctionAssistant(route=lambda text, offered: ["emergency_numbers", "department_info"])
    graph = build_graph(korhaz_domain(), korhaz_tools(), assistant=both)
    out = graph.invoke({"messages": [HumanMessage("What is the pharmacy's phone number?")]})
    assert "emergency_numbers" not in ran(out)
    assert "112" not in out["answer"]
    (entry,) = a8_entries(out)
    assert entry.verdict == TERMINAL_DROPPED
    assert "the others run" in entry.reason


def test_A9_a_conflict_a_terminal_tool_wins_says_it_runs_alone():
    urgent = run("emergency phone number, urgently!", ["emergency", "ward_phone"])
    (entry,) = a8_entries(urgent)
    assert entry.verdict == OTHERS_DROPPED
    assert "it runs alone" in entry.reason


def test_A9_a_chapel_is_no_form_of_got_so_it_is_no_emergency_evidence():
    """ "kápolna" and "kapott" (in "mérgezést kapott") share four letters, not a stem."""
    from toolweave.llm.lexical import related
    from toolweave.llm.offline import OfflineAssistant
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    assert not related("kápolna", "kapott")
    assert related("látogatás", "látogatási")
    graph = build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())
    out = graph.invoke({"messages": [HumanMessage("Mikor van nyitva a kórházi kápolna?")]})
    assert "emergency_numbers" not in ran(out)
    assert "112" not in out["answer"]


def _said_no_to_all() -> Any:
    """The hospital graph over a model that routes nothing and generates "GENERATED"."""
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    no = FunctionAssistant(route=lambda text, offered: [], answer=lambda request: "GENERATED")
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=no)


@pytest.mark.parametrize(
    "question",
    [
        "Anyám összeesett és nem lélegzik, mit tegyek?",
        "My friend is bleeding heavily from a deep cut and feels faint, what do I do?",
    ],
)
def test_A7_A9_a_described_emergency_the_model_said_no_to_gets_the_numbers(question):
    """The 1.5B said no to ``emergency_numbers`` here and generated nonsense."""
    out = _said_no_to_all().invoke({"messages": [HumanMessage(question)]})
    assert "112" in out["answer"]
    assert "GENERATED" not in out["answer"]
    (entry,) = [e for e in out["ledger"] if e.verdict == "withheld"]
    assert entry.reason == "emergency"


@pytest.mark.parametrize(
    "question", ["What is the pharmacy's phone number?", "Which number do I call to book an MRI?"]
)
def test_A7_A9_an_information_question_with_emergency_words_is_answered_as_usual(question):
    out = _said_no_to_all().invoke({"messages": [HumanMessage(question)]})
    assert not [e for e in out["ledger"] if e.verdict == "withheld"]  # answered as usual
    assert "112" not in out["answer"]
    # the double's "GENERATED" gives no number a phone question asks for: the reading
    # of the same context replaces it (R9), a passage's number, never the emergency's
    assert "555" in out["answer"]


def test_A9_an_information_question_naming_a_department_records_no_callback():
    """A department's name in ``callback_request``'s examples was evidence for a callback.

    "How can I call the cardiology ward?" resembled "Please ask the cardiology department
    to call me back." as much as the "not for" "How can I call the ward…?", so the
    offline router recorded a callback the patient never asked for. The examples now
    carry the intent only; a callback request naming a department is still one.
    """
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave_korhaz.callbacks import CallbackLedger

    ledger = CallbackLedger()
    graph = build_graph(korhaz_domain(), korhaz_tools(callbacks=ledger))
    context = {"user_data": {"phone": "+36 30 123 4567"}}
    out = graph.invoke(
        {"messages": [HumanMessage("How can I call the cardiology ward?")]}, context=context
    )
    assert "callback_request" not in ran(out)
    assert ledger.requests() == []
    assert "+36 1 555 0130" in out["answer"]  # the ward's number, from department_info
    asked = graph.invoke(
        {"messages": [HumanMessage("Please ask cardiology to call me back.")]}, context=context
    )
    assert answered_by(asked) == ["terminal"]
    assert "Cardiology will call you back" in asked["answer"]
    assert [r.department for r in ledger.requests()] == ["kardiologia"]


@pytest.mark.parametrize(
    "question",
    [
        "Who is the patient rights representative?",  # "patient" of its description
        "Can I bring potted plants to a patient?",
        "Mennyibe kerül az egyágyas kórterem?",  # "kerül": the stem of "kér"
        "Bérelhető kerekesszék a főbejáratnál?",  # "kerekesszék": the stem of "kérés"
    ],
)
def test_A9_a_word_of_every_hospital_question_is_no_evidence_for_a_callback(question):
    """With a phone on file these asked "which department should call you back?"."""
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave_korhaz.callbacks import CallbackLedger

    ledger = CallbackLedger()
    graph = build_graph(korhaz_domain(), korhaz_tools(callbacks=ledger))
    out = graph.invoke(
        {"messages": [HumanMessage(question)]}, context={"user_data": {"phone": "+36 30 123 4567"}}
    )
    assert "callback_request" not in ran(out)
    assert "__interrupt__" not in out
    assert ledger.requests() == []


def test_A9_a_finished_answer_tool_that_acts_never_runs_on_a_verdict_in_doubt():
    """A lone callback yes where nothing backs it: it would record a callback for its text.

    A tool without side effects runs then, last, and its text joins the context
    (the emergency numbers); one that acts (``side_effects``) does not run at all.
    """
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave_korhaz.callbacks import CallbackLedger

    question = "Hozzam magammal a gyógyszereimet a felvételre?"
    context = {"user_data": {"phone": "+36 30 123 4567"}}
    ledger = CallbackLedger()
    graph = build_graph(
        korhaz_domain(),
        korhaz_tools(callbacks=ledger),
        assistant=FunctionAssistant(route=lambda text, offered: ["callback_request"]),
    )
    out = graph.invoke({"messages": [HumanMessage(question)]}, context=context)
    assert "__interrupt__" not in out  # it asked "Melyik osztály hívja vissza?" in doubt
    assert "callback_request" not in ran(out)
    assert ledger.requests() == []
    (entry,) = [e for e in out["ledger"] if e.tool is None and e.verdict == ACTING_IN_DOUBT]
    assert entry.details == {
        "callback_request": "routed, not run: it acts, and the verdict is in doubt"
    }
    assert answered_by(out) != ["terminal"]
