"""Issue 20: finished answers on strong evidence (A8, A9), deciding from the ranking (T12),
abstention and the model's yes/no that holds (T5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from toolweave import ChatbotTool, ToolCallContext, ToolResult, UniqueTextDocument, build_graph
from toolweave.graph.candidates import NEAR_DUPLICATES, TERMINAL_DROPPED, resolve_yeses
from toolweave.llm.chat_messages import verdicts
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.offline_routing import RoutingRule, held_back, not_a_request, score_tools
from toolweave.llm.port import RoutingVerdict
from toolweave.llm.prompts import fused_routing_system, routing_system
from toolweave.llm.replies import BEST_FIT, routing_schema, tools_block
from toolweave.state.ledger import LedgerKind
from toolweave.state.task import TaskInfo, TaskNode
from toolweave.testing import FunctionAssistant
from toolweave.tools.domain import Domain
from toolweave.tools.prefilter import CandidateIndex
from toolweave.tools.registry import AnyTool


def tool(name: str, question: str, *, terminal: bool = False, **attrs: Any) -> AnyTool:
    """A routable tool: context, or a finished answer when ``terminal``."""

    def execute(self: Any, request: Any, ctx: ToolCallContext) -> ToolResult | None:
        if terminal:
            return ToolResult.as_answer(name, f"{name} answer")
        return ToolResult.as_context(name, [UniqueTextDocument(document_id=name, text=name)])

    body = {
        "name": name,
        "priority": 10 if terminal else 50,
        "returns_answer": terminal,
        "executable_instruction": f"{name}: true when {question}",
        "execute": execute,
        **attrs,
    }
    return type(f"T_{name}", (ChatbotTool,), body)()  # type: ignore[no-any-return]


def ran(out: Any) -> list[str]:
    return [key.rpartition(":")[2] for key in out["activated"]]


def korhaz_graph(assistant: Any) -> Any:
    from toolweave_korhaz.plugin import load

    domain, tools = load()
    return build_graph(domain, tools, assistant=assistant)


# -- A9: a finished answer needs its declared intent ---------------------------------------


def test_A9_offline_information_question_sharing_one_word_takes_the_context_path():
    graph = korhaz_graph(OfflineAssistant())
    for question in (
        "Which number do I call to book an MRI?",
        "Hol van a gyógyszertár és mikor van nyitva?",  # "gyógyszer" starts "gyógyszertár"
    ):
        out = graph.invoke({"messages": [HumanMessage(question)]})
        assert "emergency_numbers" not in ran(out), question
        assert "112" not in out["answer"], question


def test_A9_offline_described_emergency_gets_the_emergency_numbers():
    out = korhaz_graph(OfflineAssistant()).invoke(
        {"messages": [HumanMessage("My father collapsed and is not breathing, what should I do?")]}
    )
    assert ran(out) == ["emergency_numbers"]
    assert "112" in out["answer"]


FILLERS = [
    tool(f"filler_{i}", f"the user asks about topic {word}")
    for i, word in enumerate(("cats", "bikes", "ice", "tea", "rugby", "opera", "maps", "fonts"))
]


def test_A9_terminal_tool_needs_more_evidence_than_a_context_tool():
    question = "which number do I call to book an MRI scan"
    for terminal, routed in ((False, True), (True, False)):
        desk = tool("desk", "the user asks for the emergency phone number", terminal=terminal)
        ward = tool("ward", "the user asks for the opening hours and phone number of a ward")
        tools = [desk, ward, *FILLERS]
        held = held_back(question, tools, score_tools(question, tools), RoutingRule())
        assert ("desk" in held) is not routed
        verdict = {v.tool: v.run for v in OfflineAssistant().route(question, tools)}
        assert verdict["desk"] is routed


def test_A9_a_declared_example_is_the_terminal_tools_evidence():
    question = "my neighbour collapsed, what now"
    bare = tool("urgent", "the user reports an emergency", terminal=True)
    declared = tool(
        "urgent",
        "the user reports an emergency",
        terminal=True,
        routing_examples=("Someone collapsed and is unconscious.",),
    )
    rest = [tool("cafe", "the user asks about the cafeteria menu")]
    assert not any(
        v.run and v.tool == "urgent" for v in OfflineAssistant().route(question, [bare, *rest])
    )
    routed = {v.tool for v in OfflineAssistant().route(question, [declared, *rest]) if v.run}
    assert "urgent" in routed


def test_A9_model_yes_for_a_task_closer_to_not_for_is_dropped_to_the_context_path():
    urgent = tool(
        "urgent",
        "the user reports an emergency or asks for an emergency phone number",
        terminal=True,
        not_for=("Which number do I call to make an appointment?",),
    )
    search = tool("search", "anything")
    assistant = FunctionAssistant(route=lambda text, offered: ["urgent"])
    graph = build_graph(
        Domain(name="d", default_retrieval_tool="search"), [urgent, search], assistant=assistant
    )
    out = graph.invoke({"messages": [HumanMessage("Which number do I call to book a scan?")]})
    assert ran(out) == ["search"]
    (entry,) = [e for e in out["ledger"] if e.verdict == TERMINAL_DROPPED]
    assert "not for" in entry.reason


def test_A9_prompt_says_which_tools_end_the_run_with_their_examples():
    urgent = tool(
        "urgent", "x", terminal=True, routing_examples=("he fainted",), not_for=("ward phone",)
    )
    plain = tool("plain", "y")
    block = tools_block([urgent, plain], with_instruction=False)
    urgent_part, plain_part = block.split("- plain")
    assert "ends the conversation" in urgent_part
    assert "ends the conversation" not in plain_part
    assert "he fainted" in urgent_part
    assert "not for: ward phone" in urgent_part
    assert "ends the conversation" in routing_system(tools=block, terminal=True)
    assert "say why" in fused_routing_system(tools=block, extraction_guidance="", terminal=True)
    # A10: without a candidate that ends the run, its rule is not sent
    plain_block = tools_block([plain], with_instruction=False)
    assert "ends the conversation" not in routing_system(tools=plain_block)
    assert "ends the conversation" not in fused_routing_system(
        tools=plain_block, extraction_guidance=""
    )


def test_A9_prompt_shows_examples_of_each_language_the_tool_declares():
    english = (
        "Someone collapsed and is unconscious.",
        "He is not breathing and his lips are blue.",
        "There is heavy bleeding that will not stop.",
        "She took an overdose and does not respond.",
    )
    hungarian = ("Összeesett, eszméletlen, nem lélegzik.", "Elájult, nem lehet felébreszteni.")
    urgent = tool(
        "urgent",
        "x",
        terminal=True,
        routing_examples=english + hungarian,
        not_for=("What is the ward's phone number?", "Mi az osztály telefonszáma?"),
    )
    (examples,) = [
        line
        for line in tools_block([urgent], with_instruction=False).splitlines()
        if "for ex" in line
    ]
    shown = examples.split(": ", 1)[1].split(" | ")
    # the first of each language in turn, the declared order kept within one
    assert shown == [english[0], hungarian[0], english[1]]
    assert "not for: What is the ward's phone number? | Mi az osztály telefonszáma?" in (
        tools_block([urgent], with_instruction=False)
    )


# -- A8: a lone yes at a tie at zero stands -------------------------------------------------


def test_A8_lone_terminal_yes_where_no_candidate_has_evidence_stands():
    urgent = tool("urgent", "the user needs the emergency phone number", terminal=True)
    tools = [urgent, tool("parking", "parking the car"), tool("search", "anything")]
    assistant = FunctionAssistant(route=lambda text, offered: ["urgent"])
    graph = build_graph(
        Domain(name="d", default_retrieval_tool="search"), tools, assistant=assistant
    )
    out = graph.invoke(
        {"messages": [HumanMessage("My father collapsed and is not breathing, what should I do?")]}
    )
    assert out["answer"] == "urgent answer"
    # evidence for another candidate still drops it (the tie is not at zero)
    out = graph.invoke({"messages": [HumanMessage("Where do I park the car?")]})
    assert "urgent" not in ran(out)


# -- T12: the ranking decides ----------------------------------------------------------------


def test_T12_candidates_reach_the_routing_call_best_ranked_first():
    seen: list[list[str]] = []

    def route(text: str, offered: Sequence[AnyTool]) -> list[str]:
        seen.append([t.name for t in offered])
        return []

    tools = [tool("alpha", "the user asks about cats"), tool("omega", "the user asks about bikes")]
    graph = build_graph(Domain(name="d"), tools, assistant=FunctionAssistant(route=route))
    graph.invoke({"messages": [HumanMessage("my bikes need new tyres")]})
    assert seen == [["omega", "alpha"]]


class Fields(BaseModel):
    city: str | None = Field(default=None, description="where the umbrella is needed")


def test_T12_offline_clear_winner_of_the_ranking_routes_under_the_thresholds():
    weather = tool("forecast", "the user asks about rain", request_model=Fields)
    tools = [
        weather,
        tool("bank", "the user asks about money"),
        tool("bus", "the user asks about buses"),
    ]
    question = "Do I need an umbrella in Szeged?"
    assert score_tools(question, tools)["forecast"].score == 0  # no routing-vocabulary word
    routed = {v.tool for v in OfflineAssistant().route(question, tools) if v.run}
    assert routed == {"forecast"}
    strict = OfflineAssistant(routing=replace(RoutingRule(), margin_score=float("inf")))
    assert not any(v.run for v in strict.route(question, tools))


def test_T12_a_clear_winner_by_a_stem_prefix_alone_does_not_route():
    """The index finds "Lisa" a prefix of "lists"; no word of the task is in the tool's text."""
    agenda = tool("calendar_list", "the user asks what is on their agenda; lists the events")
    tools = [agenda, tool("bank", "the user asks about money")]
    question = "Who painted the Mona Lisa?"
    index_scores = CandidateIndex(tools).scores("painted mona lisa", [t.name for t in tools])
    assert index_scores["calendar_list"] > 0 == index_scores["bank"]  # the index's clear winner
    assert not any(v.run for v in OfflineAssistant().route(question, tools))
    asked = "What is on my agenda?"
    assert {v.tool for v in OfflineAssistant().route(asked, tools) if v.run} == {"calendar_list"}


# -- T5: abstention, best fit, near-duplicate yeses ------------------------------------------


def test_T5_offline_routes_nothing_for_small_talk_pasted_errors_and_definitions():
    parcel = tool("parcel_tracking", "the user asks where a parcel is, tracking number")
    other = tool("weather", "the user asks about the weather")
    assistant = OfflineAssistant()
    for text in (
        "Thanks, that helped!",
        "java.lang.NullPointerException at com.shop.Parcel.track(Parcel.java:42)",
        "What is a parcel?",
        "What does tracking number mean?",
    ):
        assert not_a_request(text), text
        assert not any(v.run for v in assistant.route(text, [parcel, other])), text
    assert not not_a_request("Where is my parcel with tracking number 123?")
    routed = {
        v.tool
        for v in assistant.route("Where is my parcel, tracking 123?", [parcel, other])
        if v.run
    }
    assert routed == {"parcel_tracking"}


def test_T5_routing_schema_asks_first_for_the_best_fit_among_the_candidates():
    tools = [tool("a_one", "x"), tool("b_two", "y")]
    schema = routing_schema(tools, fused=False).model_json_schema()
    assert next(iter(schema["properties"])) == BEST_FIT
    assert schema["properties"][BEST_FIT]["enum"] == ["a_one", "b_two", "none"]
    assert schema["required"][0] == BEST_FIT  # the model must name it ...
    verdict = {"reason": "", "run": True}
    reply = routing_schema(tools, fused=False).model_validate({"a_one": verdict, "b_two": verdict})
    assert getattr(reply, BEST_FIT) == "none"  # ... a reply without it still validates
    assert BEST_FIT in routing_system(tools="- a_one: x")


def test_T5_the_best_fit_named_by_the_model_reaches_the_verdicts():
    tools = [tool("a_one", "x"), tool("b_two", "y")]
    model = routing_schema(tools, fused=False)
    reply = model.model_validate(
        {
            BEST_FIT: "b_two",
            "a_one": {"reason": "maybe", "run": True},
            "b_two": {"reason": "asks for it", "run": True},
        }
    )
    found = [v for _, v in verdicts(tools, tools, reply)]
    assert [(v.tool, v.run, v.best) for v in found] == [
        ("a_one", True, False),
        ("b_two", True, True),
    ]


def test_T5_several_yeses_of_near_duplicates_keep_the_best_fit_and_justified_ones():
    create = tool("calendar_create", "the user wants to create a calendar meeting")
    listing = tool("calendar_list", "the user asks which calendar meetings they have")
    weather = tool("weather", "the user asks about the weather forecast: rain, umbrella")
    candidates = [create, listing, weather]
    node = TaskNode(task=TaskInfo(task_no="1", task_prompt="create a calendar meeting for Monday"))
    yes = [
        RoutingVerdict("calendar_create", True, "r", best=True),
        RoutingVerdict("calendar_list", True, "r"),
        RoutingVerdict("weather", False, "r"),
    ]
    kept, entries = resolve_yeses(node, candidates, yes)
    assert kept == {"calendar_create"}
    assert entries[0].verdict == NEAR_DUPLICATES
    assert set(entries[0].details) == {"calendar_list"}
    # a second tool with words of its own is a second request, and runs
    two = TaskNode(
        task=TaskInfo(
            task_no="1", task_prompt="create a calendar meeting; and the weather forecast: rain?"
        )
    )
    both = [yes[0], yes[1], RoutingVerdict("weather", True, "r")]
    assert resolve_yeses(two, candidates, both)[0] == {"calendar_create", "weather"}
    # the best fit not among the yeses: the best-ranked yes (candidates come ranked)
    unnamed = [
        RoutingVerdict("calendar_list", True, "r"),
        RoutingVerdict("calendar_create", True, "r"),
        RoutingVerdict("weather", False, "r", best=True),
    ]
    assert resolve_yeses(node, [listing, create, weather], unnamed)[0] == {"calendar_list"}
    # no best fit named (a scripted or offline assistant): the yeses stand
    plain = [replace(v, best=False) for v in yes]
    assert resolve_yeses(node, candidates, plain) == ({"calendar_create", "calendar_list"}, [])


def test_T5_resolution_runs_inside_the_route_node_and_is_in_the_ledger():
    create = tool("calendar_create", "the user wants to create a calendar meeting")
    listing = tool("calendar_list", "the user asks which calendar meetings they have")

    class Naming(FunctionAssistant):
        def route(self, task_prompt: str, tools: Any) -> list[RoutingVerdict]:
            return [
                RoutingVerdict(t.name, True, "yes", best=t.name == "calendar_create") for t in tools
            ]

    graph = build_graph(Domain(name="d"), [create, listing], assistant=Naming())
    out = graph.invoke({"messages": [HumanMessage("create a calendar meeting for Monday")]})
    assert ran(out) == ["calendar_create"]
    assert any(e.kind == LedgerKind.ROUTING and e.verdict == NEAR_DUPLICATES for e in out["ledger"])


def test_A8_hospital_model_yes_for_a_described_emergency_stands():
    # issue 20 item 1: A8 dropped this lone yes (score 0.00 <= 0.00) and answered with
    # CT-preparation text; the declared examples are now evidence, and a zero tie stands
    assistant = FunctionAssistant(route=lambda text, offered: ["emergency_numbers"])
    out = korhaz_graph(assistant).invoke(
        {"messages": [HumanMessage("My father collapsed and is not breathing, what should I do?")]}
    )
    assert ran(out) == ["emergency_numbers"]
    assert "112" in out["answer"]


# -- T5: word matching -----------------------------------------------------------------------


def test_T5_short_stem_does_not_match_longer_word():
    from toolweave.llm.offline_routing import word_matches

    # the two stemmers in turn cut both to three letters ("ver", "op", "wor")
    for short, longer in (("vér", "verset"), ("open", "opera"), ("word", "work")):
        assert not word_matches(short, longer), (short, longer)
    # a short word's own endings still match it, and long stems as before
    for a, b in (("nap", "napot"), ("day", "days"), ("bank", "bankot"), ("pécsen", "pécsre")):
        assert word_matches(a, b), (a, b)
    # the hospital's emergency example says "vér" again: a poem request is not an emergency
    graph = korhaz_graph(OfflineAssistant())
    poem = graph.invoke({"messages": [HumanMessage("Írj egy verset a tavaszról.")]})
    assert "emergency_numbers" not in ran(poem)
    bleeding = graph.invoke({"messages": [HumanMessage("Ömlik a vér a kezéből, fullad!")]})
    assert ran(bleeding) == ["emergency_numbers"]


def test_A8_context_tool_sharing_one_generic_word_does_not_route():
    from toolweave_korhaz.plugin import load

    _, tools = load()
    question = "How many free beds does cardiology have?"
    routed = {v.tool for v in OfflineAssistant().route(question, tools) if v.run}
    assert "check_appointment_slots" not in routed  # "free" alone: a free appointment slot
    # a subject word beside the generic one is evidence
    beds = tool("free_beds", "the user asks how many free beds a department has")
    routed = {v.tool for v in OfflineAssistant().route(question, [*tools, beds]) if v.run}
    assert routed == {"free_beds"}
    # two generic words are evidence too
    slots = tool("slots", "the user asks for a free slot next week")
    other = tool("menu", "the user asks about the cafeteria menu")
    routed = {v.tool for v in OfflineAssistant().route("free next week?", [slots, other]) if v.run}
    assert routed == {"slots"}


def test_T12_one_shared_word_makes_no_twins_the_better_ranked_runs():
    track = tool("parcel_tracking", "the user asks where a parcel is")
    pickup = tool("parcel_pickup", "the user wants a courier to collect a parcel")
    weather = tool("weather", "the user asks about the weather")
    for first, second in ((track, pickup), (pickup, track)):
        verdicts = OfflineAssistant().route("my parcel?", [first, second, weather, *FILLERS])
        assert {v.tool for v in verdicts if v.run} == {first.name}  # offered best ranked first


def test_T5_a_second_tool_asked_for_in_its_own_clause_runs_on_one_word():
    flights = tool("flight_search", "the user searches for flights")
    weather = tool("weather", "the user asks whether it will rain")
    tools = [flights, weather, *FILLERS]
    two = "Find flights to Rome on Friday and tell me if it will rain there."
    assert {v.tool for v in OfflineAssistant().route(two, tools) if v.run} == {
        "flight_search",
        "weather",
    }
    # one clause: the second tool's one word is no request of its own
    one = "Find flights to Rome on Friday without rain."
    assert {v.tool for v in OfflineAssistant().route(one, tools) if v.run} == {"flight_search"}


def test_A9_offline_near_tie_goes_to_the_context_tool_not_the_finished_answer():
    urgent = tool("urgent", "the user needs emergency help", terminal=True)
    ward = tool(
        "ward",
        "the user asks about the emergency ward of the hospital, its visiting hours, "
        "its floor, its phone number and its head physician",
    )
    tools = [urgent, ward, *FILLERS]  # the finished answer is offered first and scores more
    scores = score_tools("emergency ward help", tools)
    assert RoutingRule().near * scores["urgent"].score <= scores["ward"].score
    assert scores["ward"].score < scores["urgent"].score
    routed = {v.tool for v in OfflineAssistant().route("emergency ward help", tools) if v.run}
    assert routed == {"ward"}
