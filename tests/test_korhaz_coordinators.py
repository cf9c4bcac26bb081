"""The korhaz coordinators on the real graph with the offline model (B4, K3, M6, C1, Q2).

``drug_interaction`` splits a "can I take A with B?" question into one
``substance_lookup`` subtask per medicine and answers on the parent;
``doctor_finder`` runs a cheap directory lookup and a conditional full-text search.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolweave import (
    PriorContext,
    PromptAndContext,
    SubtaskDecision,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.graph.coordinate import NOT_APPLICABLE
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.errors import LlmUnavailableError
from toolweave.llm.offline import OfflineAssistant
from toolweave.testing import FunctionAssistant, ScriptedChatModel
from toolweave_korhaz import (
    EXAMPLE_QUESTIONS,
    korhaz_corpus,
    korhaz_domain,
    korhaz_tools,
)
from toolweave_korhaz.coordinators import (
    DoctorDecomposition,
    DoctorFinderCoordinator,
    DrugInteractionCoordinator,
    InteractionDecomposition,
)
from toolweave_korhaz.doctors import find_doctors
from toolweave_korhaz.examples import COORDINATOR_EXAMPLES
from toolweave_korhaz.interactions import check_pair, interaction_report
from toolweave_korhaz.lookup_tools import (
    DoctorDirectoryTool,
    SubstanceLookupRequest,
    SubstanceLookupTool,
)
from toolweave_korhaz.substances import (
    choose_candidate,
    find_mentions,
    substance_by_id,
    substances,
)

LOOKUPS = ["1.1:substance_lookup", "1.2:substance_lookup", "1:drug_interaction"]


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _ask(graph: Any, text: str, thread: str = "t") -> dict[str, Any]:
    return graph.invoke({"messages": [HumanMessage(text)]}, _config(thread))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def offline_graph() -> Any:
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())


class CountingLookup(SubstanceLookupTool):
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def execute(self, request: SubstanceLookupRequest, ctx: ToolCallContext) -> ToolResult | None:
        self.calls.append(f"lookup@{ctx.task_no}")
        return super().execute(request, ctx)

    def execute_with_clarification(
        self, request: SubstanceLookupRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        self.calls.append(f"reply:{reply}@{ctx.task_no}")
        return super().execute_with_clarification(request, ctx, reply)


class CountingInteraction(DrugInteractionCoordinator):
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def decompose_from(self, task: TaskInfo, decomposition: InteractionDecomposition) -> TaskInfo:
        self.calls.append(f"decompose@{task.task_no}")
        return super().decompose_from(task, decomposition)

    def execute_with_prior_context(
        self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        self.calls.append(f"interaction@{ctx.task_no}")
        return super().execute_with_prior_context(request, ctx, prior_context)


def _counting_graph(calls: list[str]) -> Any:
    swap = {
        "substance_lookup": CountingLookup(calls),
        "drug_interaction": CountingInteraction(calls),
    }
    tools = [swap.get(tool.name, tool) for tool in korhaz_tools()]
    return build_graph(
        korhaz_domain(), tools, assistant=OfflineAssistant(), checkpointer=InMemorySaver()
    )


# --- the examples, end to end with the offline model -------------------------------------


@pytest.mark.parametrize("example", COORDINATOR_EXAMPLES, ids=lambda e: e.question)
def test_B4_coordinator_examples_activate_in_order_and_answer(offline_graph, example):
    question, expected, activated = example
    out = _ask(offline_graph, question)
    assert out["activated"] == list(activated)
    assert all(s in out["answer"] for s in expected), out["answer"]
    assert len(set(out["activated"])) == len(out["activated"])  # no tool ran twice


def test_B4_drug_answer_is_terminal_and_built_from_the_subtasks(offline_graph):
    out = _ask(offline_graph, "Szedhetek ibuprofent warfarin mellett?")
    tree = out["task"]
    assert tree.required_tool_names == ["drug_interaction"]
    assert [s.required_tool_names for s in tree.sub_tasks] == [["substance_lookup"]] * 2
    assert "ibuprofen" in tree.sub_tasks[0].task_prompt
    assert "warfarin" in tree.sub_tasks[1].task_prompt
    assert [s.owner_coordinator_name for s in tree.sub_tasks] == ["drug_interaction"] * 2
    answer = [e for e in out["ledger"] if e.kind == "answer"]
    assert [(e.tool, e.verdict) for e in answer] == [("drug_interaction", "terminal")]


def test_M6_substance_lookup_answers_with_parseable_guaranteed_context(offline_graph):
    out = _ask(offline_graph, "Can I take ibuprofen with warfarin?")
    first = json.loads(out["context_buffer"]["1.1:substance_lookup"][0].context)
    second = json.loads(out["context_buffer"]["1.2:substance_lookup"][0].context)
    assert (first["substance"], first["classes"]) == ("ibuprofen", ["nsaid"])
    assert second["substance"] == "warfarin"
    assert "anticoagulant" in second["classes"]
    assert len(out["guaranteed"]) == 2


# --- K3: the cheap directory first, the broad search only when it found nothing -----------


def _conditionals(out: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(e.task_no, e.tool, e.verdict) for e in out["ledger"] if e.kind == "conditional"]


def test_K3_directory_hit_skips_the_broad_search(offline_graph):
    out = _ask(offline_graph, "Hol rendel dr. Kovács Anna?")
    assert _conditionals(out) == [("1.2", "doctor_finder", "skip")]
    (decision,) = [e for e in out["ledger"] if e.kind == "conditional"]
    assert "1.1:doctor_directory" in decision.reason
    assert out["activated"] == ["1.1:doctor_directory", "1:doctor_finder"]
    assert out["task"].sub_tasks[1].conditional is True
    assert out["task"].sub_tasks[1].required_tool_names == ["korhaz_search"]


def test_K3_unknown_doctor_runs_the_broad_search_which_finds_the_document(offline_graph):
    out = _ask(offline_graph, "Hol rendel dr. Lengyel Márta?")
    assert _conditionals(out) == [("1.2", "doctor_finder", "run")]
    # R1: the directory and the coordinator found nothing, so they count as not activated
    assert out["activated"] == ["1.2:korhaz_search"]
    hits = out["context_buffer"]["1.2:korhaz_search"][0].documents
    assert hits[0].document_id == "korhaz/vendegorvosok.md"
    # D9: the hit comes as a passage, with the sentence before it
    assert any("Lengyel Márta" in hit.text for hit in hits[:2])


def test_K3_decision_reads_the_narrow_subtasks_completion_key():
    finder = DoctorFinderCoordinator()
    parent = TaskInfo(task_no="1", task_prompt="Hol rendel dr. X?")
    broad = TaskInfo(task_no="1.2", task_prompt="search", conditional=True)
    hit = [PromptAndContext(prompt="p", context='{"doctors": [{"id": "kovacs-anna"}]}')]
    assert finder.decide_conditional_subtask(parent, broad, {"1.1:doctor_directory": hit}) == (
        SubtaskDecision.SKIP
    )
    assert finder.decide_conditional_subtask(parent, broad, {}) == SubtaskDecision.RUN
    empty = [PromptAndContext(prompt="p", context="  ")]
    assert finder.decide_conditional_subtask(parent, broad, {"1.1:doctor_directory": empty}) == (
        SubtaskDecision.RUN
    )
    other = {"1.3:doctor_directory": hit}  # not the sibling right before 1.2
    assert finder.decide_conditional_subtask(parent, broad, other) == SubtaskDecision.RUN


# --- Q2: an ambiguous name asks inside the subtask; the parent continues after the reply ---


def test_Q2_ambiguous_name_asks_in_the_subtask_and_the_parent_continues_after_resume():
    calls: list[str] = []
    graph = _counting_graph(calls)
    out = _ask(graph, "Can I take ibuprofen with my blood thinner?", "amb")
    (pending,) = out["__interrupt__"]
    assert pending.value["type"] == "clarification"
    assert (pending.value["task_no"], pending.value["tool"]) == ("1.2", "substance_lookup")
    assert pending.value["choices"] == [
        "warfarin (Marfarin)",
        "acenocoumarol (Syncumar)",
        "apixaban (Eliquis)",
        "rivaroxaban (Xarelto)",
    ]
    assert "blood thinner" in pending.value["question"]
    assert out["activated"] == ["1.1:substance_lookup"]
    assert calls == ["decompose@1", "lookup@1.1", "lookup@1.2"]

    out = graph.invoke(Command(resume="warfarin (Marfarin)"), _config("amb"))
    assert "__interrupt__" not in out
    assert out["activated"] == LOOKUPS
    assert "major interaction" in out["answer"]
    assert "ibuprofen and warfarin" in out["answer"]
    assert calls == [
        "decompose@1",
        "lookup@1.1",
        "lookup@1.2",
        "reply:warfarin (Marfarin)@1.2",
        "interaction@1",
    ]
    kinds = [(e.kind, e.task_no, e.verdict) for e in out["ledger"] if e.kind == "clarification"]
    assert kinds == [("clarification", "1.2", "asked"), ("clarification", "1.2", "replied")]


def test_Q2_S3_ambiguous_first_name_stops_before_the_second_and_next_message_replies():
    calls: list[str] = []
    graph = _counting_graph(calls)
    out = _ask(graph, "Szedhetek Enapot és Verospiront együtt?", "enap")
    (pending,) = out["__interrupt__"]
    assert pending.value["task_no"] == "1.1"
    assert pending.value["choices"] == [
        "enalapril (Enap)",
        "enalapril + hidroklorotiazid (Enap-HL)",
    ]
    assert pending.value["question"].startswith("Melyikre gondolt")
    assert calls == ["decompose@1", "lookup@1.1"]  # 1.2 waits (S3)

    out = graph.invoke({"messages": [HumanMessage("2")]}, _config("enap"))
    assert out["activated"] == LOOKUPS
    assert "enalapril + hidroklorotiazid és spironolakton: súlyos kölcsönhatás" in out["answer"]
    # the numbered reply reaches the tool as the choice it names
    assert calls == [
        "decompose@1",
        "lookup@1.1",
        "reply:enalapril + hidroklorotiazid (Enap-HL)@1.1",
        "lookup@1.2",
        "interaction@1",
    ]


def test_Q2_a_reply_that_picks_nothing_asks_again():
    calls: list[str] = []
    graph = _counting_graph(calls)
    _ask(graph, "Can I take ibuprofen with my blood thinner?", "again")
    out = graph.invoke(Command(resume="no idea"), _config("again"))
    (pending,) = out["__interrupt__"]
    assert pending.value["task_no"] == "1.2"
    out = graph.invoke(Command(resume="2"), _config("again"))
    assert "acenocoumarol" in out["answer"]
    assert out["activated"] == LOOKUPS


# --- C1: irrelevant questions leave the task unchanged ---------------------------------------


IRRELEVANT = [
    *(example.question for example in EXAMPLE_QUESTIONS),
    "What is the difference between ibuprofen and paracetamol?",
    "Can I take ibuprofen?",
    "Where can I find a doctor?",
    "Milyen gyógyszereket szedhetek együtt?",
]


@pytest.mark.parametrize("question", IRRELEVANT)
def test_C1_coordinators_return_an_irrelevant_task_unchanged(question):
    for coordinator in (DrugInteractionCoordinator(), DoctorFinderCoordinator()):
        task = TaskInfo(task_no="1", task_prompt=question, important_words=["x"])
        before = task.model_copy(deep=True)
        assert coordinator.decompose_into_subtasks(task) is task
        assert task == before


def test_C1_relevant_task_is_mutated_in_place_and_a_claimed_one_is_left_alone():
    task = TaskInfo(task_no="1", task_prompt="Szedhetek Algoflexet és Marfarint együtt?")
    assert DrugInteractionCoordinator().decompose_into_subtasks(task) is task
    assert [s.task_no for s in task.sub_tasks] == ["1.1", "1.2"]
    assert task.required_tool_names == ["drug_interaction"]
    claimed = task.model_copy(deep=True)
    assert DoctorFinderCoordinator().decompose_into_subtasks(claimed) == task  # unchanged

    doctor = TaskInfo(task_no="1", task_prompt="Where can I find Dr. Anna Kovács?")
    DoctorFinderCoordinator("my_search").decompose_into_subtasks(doctor)
    assert [s.required_tool_names for s in doctor.sub_tasks] == [
        ["doctor_directory"],
        ["my_search"],
    ]
    assert [s.conditional for s in doctor.sub_tasks] == [False, True]
    assert "dr. Kovács Anna" in doctor.sub_tasks[0].task_prompt  # the directory's spelling


def test_C1_a_directory_name_in_the_text_beats_the_models_spelling_of_it():
    """Fixed (dev k070): "Anna Doktornő" (title as surname) for "kovács anna doktornő"."""
    task = TaskInfo(task_no="1", task_prompt="hol rendel kovács anna doktornő?")
    DoctorFinderCoordinator().decompose_from(task, DoctorDecomposition(doctor_name="Anna Doktornő"))
    assert "dr. Kovács Anna" in task.sub_tasks[0].task_prompt


def test_C1_irrelevant_question_on_the_graph_runs_no_coordinator_subtasks():
    graph = build_graph(korhaz_domain(), korhaz_tools(), assistant=FunctionAssistant())
    out = _ask(graph, "Hol lehet parkolni a kórháznál?")
    runs = [(e.tool, e.verdict) for e in out["ledger"] if e.kind == "coordinator_run"]
    assert runs == [("drug_interaction", "no change"), ("doctor_finder", "no change")]
    assert out["task"].sub_tasks == []
    assert out["activated"] == ["1:korhaz_search"]


def test_C1_offline_routing_leaves_the_existing_examples_alone(offline_graph):
    ours = {"drug_interaction", "substance_lookup", "doctor_finder", "doctor_directory"}
    for question, _, _ in EXAMPLE_QUESTIONS:
        out = _ask(offline_graph, question)
        ran = {key.rpartition(":")[2] for key in out["activated"]}
        assert not ran & ours, (question, out["activated"])
        assert out["task"].sub_tasks == []


# --- the table and its matching ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Szedhetek ibuprofent warfarin mellett?", ["ibuprofen", "warfarin"]),
        ("ibuprofénnel és Marfarinnal", ["ibuprofen", "warfarin"]),
        ("Algoflexet szedek", ["ibuprofen"]),
        ("klaritromicint szimvasztatin mellé", ["clarithromycin", "simvastatin"]),
        ("Enap-HL and Nurofen", ["enalapril_hctz", "ibuprofen"]),
        ("nothing here, just parking", []),
    ],
)
def test_M6_names_resolve_in_inflected_and_brand_forms(text, expected):
    found = find_mentions(text)
    assert all(not m.ambiguous for m in found)
    assert [m.candidates[0].id for m in found] == expected


def test_Q1_ambiguous_names_fit_several_substances_and_replies_pick_one():
    (enap,) = find_mentions("Enapot szedek")
    assert [c.id for c in enap.candidates] == ["enalapril", "enalapril_hctz"]
    (thinner,) = find_mentions("a vérhígítómmal")
    assert len(thinner.candidates) == 4
    candidates = thinner.candidates
    assert choose_candidate("2", candidates).id == "acenocoumarol"  # type: ignore[union-attr]
    assert choose_candidate("Xarelto", candidates).id == "rivaroxaban"  # type: ignore[union-attr]
    assert choose_candidate("apixabán (Eliquis)", candidates).id == "apixaban"  # type: ignore[union-attr]
    assert choose_candidate("aszpirin", candidates).id == "aspirin"  # type: ignore[union-attr]
    assert choose_candidate("hmm", candidates) is None
    assert choose_candidate("9", candidates) is None


def test_table_size_and_rules():
    assert 30 <= len(substances()) <= 45
    nsaid, vka = substance_by_id("ibuprofen"), substance_by_id("warfarin")
    assert nsaid is not None
    assert vka is not None
    assert check_pair(vka, nsaid).rules[0].severity == "major"
    paracetamol, ppi = substance_by_id("paracetamol"), substance_by_id("omeprazole")
    assert paracetamol is not None
    assert ppi is not None
    text = interaction_report([paracetamol, ppi], "en")
    assert "no known interaction in our table" in text
    assert "not medical advice" in text
    assert "nincs ismert kölcsönhatás" in interaction_report([paracetamol, ppi], "hu")


def test_B2_consumer_uses_only_its_direct_subtasks_and_skips_bad_entries():
    def entry(text: str) -> list[PromptAndContext]:
        return [PromptAndContext(prompt="p", context=text)]

    def lookup(sub: str) -> str:
        return json.dumps({"query": sub, "substance": sub})

    prior = {
        "1.2:substance_lookup": entry(lookup("simvastatin")),
        "1.1:substance_lookup": entry(lookup("clarithromycin")),
        "1.1.1:substance_lookup": entry(lookup("warfarin")),  # a grandchild: not ours
        "1.3:substance_lookup": entry("not json"),
        "1.4:other_tool": entry(lookup("digoxin")),
    }
    ctx = ToolCallContext(task=TaskInfo(task_no="1", task_prompt="q"), text="q", user_lang="en")
    result = DrugInteractionCoordinator().execute_with_prior_context(None, ctx, prior)  # type: ignore[arg-type]
    assert result is not None
    assert result.text is not None
    assert result.text.startswith("Interaction check: clarithromycin, simvastatin.")
    assert "myopathy" in result.text
    assert "warfarin" not in result.text
    assert "digoxin" not in result.text


def test_B5_routed_without_subtasks_reads_its_own_prompt_or_declines():
    tool = DrugInteractionCoordinator()

    def run(prompt: str) -> ToolResult | None:
        ctx = ToolCallContext(task=TaskInfo(task_no="1", task_prompt=prompt), text=prompt)
        return tool.execute_with_prior_context(None, ctx, {})  # type: ignore[arg-type]

    result = run("aspirin warfarin")
    assert result is not None
    assert "major interaction" in (result.text or "")
    assert run("Can I take ibuprofen?") is None
    assert tool.executable_instruction is not None
    assert tool.executable_instruction.startswith("drug_interaction:")


def test_doctor_directory_tool_and_matching():
    assert [d.id for d in find_doctors("Mikor rendel dr. Kovács Annánál?")] == ["kovacs-anna"]
    assert [d.id for d in find_doctors("Dr. Kovácshoz mennék")] == ["kovacs-anna", "kovacs-peter"]
    assert find_doctors("Hol rendel dr. Lengyel Márta?") == []
    text = "Hol rendel dr. Kovács Anna?"
    ctx = ToolCallContext(task=TaskInfo(task_no="1.1", task_prompt=text), text=text)
    result = DoctorDirectoryTool().execute(DoctorDirectoryTool.request_model(), ctx)
    assert result is not None
    assert result.mode == "guaranteed_context"
    assert json.loads(result.text or "")["doctors"][0]["id"] == "kovacs-anna"


def _offline(text: str, model: type[Any]) -> Any:
    """What the offline model fills into a korhaz coordinator's decomposition schema."""
    coordinator = (
        DrugInteractionCoordinator()
        if model is InteractionDecomposition
        else DoctorFinderCoordinator()
    )
    schema = coordinator.decomposition_schema()
    filled = OfflineAssistant().extract_decompositions(text, [schema]).values[schema.name]
    return model.model_validate(filled)


def test_C1_offline_extraction_reads_taking_together_and_the_medicines_in_order():
    got = _offline("Szedhetek ibuprofent warfarin mellett?", InteractionDecomposition)
    assert (got.takes_together, got.medicines) == (True, ["ibuprofen", "warfarin"])
    got = _offline("Can I take ibuprofen with my blood thinner?", InteractionDecomposition)
    assert got.medicines == ["ibuprofen", "blood thinner"]
    got = _offline("Enap-HL and Nurofen together?", InteractionDecomposition)
    assert got.medicines == ["Enap-HL", "Nurofen"]  # the longer name wins over "Enap"
    for other in (
        "What is the difference between ibuprofen and paracetamol?",
        "Milyen mellékhatásai vannak az ibuprofénnek és a paracetamolnak?",
    ):
        got = _offline(other, InteractionDecomposition)
        assert got.takes_together is False, other
        assert len(got.medicines) == 2


def test_C1_offline_extraction_reads_the_doctor_name_in_any_case():
    assert _offline("hol rendel dr. kovács anna?", DoctorDecomposition).doctor_name == (
        "Kovács Anna"
    )
    assert _offline("hol rendel dr. lengyel márta?", DoctorDecomposition).doctor_name == (
        "lengyel márta"
    )
    assert _offline("Hol rendel dr. Lengyel Márta holnap?", DoctorDecomposition).doctor_name == (
        "Lengyel Márta"
    )
    assert _offline("Where can I find a doctor?", DoctorDecomposition).doctor_name is None


def test_T11_tools_keep_no_per_request_state(offline_graph):
    tools = korhaz_tools()
    before = [dict(vars(t)) for t in tools]
    graph = build_graph(korhaz_domain(), tools, assistant=OfflineAssistant())
    for example in COORDINATOR_EXAMPLES[:2] + COORDINATOR_EXAMPLES[-2:]:
        _ask(graph, example.question)
    assert [dict(vars(t)) for t in tools] == before


def test_corpus_holds_the_visiting_specialist_document():
    ids = {doc.document_id for doc in korhaz_corpus()}
    assert "korhaz/vendegorvosok.md" in ids


# --- C1, M2: the decomposition is the model's structured extraction ---------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Szedhetem a Marfarint ibuprofénnel?",  # "with" is a suffix here, no separate word
        "Is ibuprofen ok while I am on warfarin?",
        "aspirin ibuprofen interaction",
    ],
)
def test_C1_offline_drug_pair_without_with_or_together_gets_a_subtask_per_substance(
    offline_graph, question
):
    out = _ask(offline_graph, question)
    assert out["activated"] == LOOKUPS
    assert [s.required_tool_names for s in out["task"].sub_tasks] == [["substance_lookup"]] * 2
    assert "interaction" in out["answer"] or "kölcsönhatás" in out["answer"]


def test_C1_offline_lower_case_doctor_names_decompose(offline_graph):
    known = _ask(offline_graph, "hol rendel dr. kovács anna?")
    assert known["activated"] == ["1.1:doctor_directory", "1:doctor_finder"]
    assert _conditionals(known) == [("1.2", "doctor_finder", "skip")]
    assert "Kovács Anna" in known["answer"]
    unknown = _ask(offline_graph, "hol rendel dr. lengyel márta?")
    assert _conditionals(unknown) == [("1.2", "doctor_finder", "run")]
    assert unknown["activated"] == ["1.2:korhaz_search"]
    hits = unknown["context_buffer"]["1.2:korhaz_search"][0].documents
    assert hits[0].document_id == "korhaz/vendegorvosok.md"


def _normalized(question: str) -> dict[str, Any]:
    return {
        "question": question,
        "user_lang": "hu",
        "important_words": [],
        "prompt_type": "factual",
    }


def _scripted_graph(*script: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script))
    llm = ChatModelAssistant(model, initial_backoff=0)
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=llm), model


def test_C1_M2_chat_model_extraction_drives_the_drug_split_and_is_counted():
    question = "szedhetem a marfarint ibuprofénnel?"
    graph, model = _scripted_graph(  # A10: a first message is not normalized by the model
        {"drug_interaction": {"takes_together": True, "medicines": ["marfarint", "ibuprofénnel"]}},
        {"substance": "marfarint"},  # substance_lookup's own extraction on each subtask (T7)
        {"substance": "ibuprofénnel"},
    )
    out = _ask(graph, question)
    assert out["activated"] == LOOKUPS
    assert [s.important_words for s in out["task"].sub_tasks] == [["marfarint"], ["ibuprofénnel"]]
    assert "warfarin" in out["answer"]
    assert "súlyos kölcsönhatás" in out["answer"]
    decomposition = model.calls[0]
    assert decomposition.human == question  # M2: the task prompt, nothing else
    schema = decomposition.tools[0]["function"]["parameters"]
    assert set(schema["properties"]) == {"drug_interaction"}  # A10: no doctor in the text
    assert out["llm_calls"] == len(model.calls) == 3


def test_C1_chat_model_understanding_reaches_the_doctor_finder():
    question = "hol rendel kovács anna doktornő?"  # no title before the name, lower case
    graph, model = _scripted_graph({"doctor_finder": {"doctor_name": "kovács anna"}})
    out = _ask(graph, question)
    assert out["activated"] == ["1.1:doctor_directory", "1:doctor_finder"]
    assert out["task"].sub_tasks[0].task_prompt.startswith("dr. kovács anna")
    assert "Kovács Anna" in out["answer"]
    assert out["llm_calls"] == len(model.calls) == 1


def test_C4_failing_decomposition_rolls_back_both_coordinators_and_retrieval_answers():
    def down(prompt: str, schema: Any) -> Any:
        raise LlmUnavailableError("model down")

    graph = build_graph(
        korhaz_domain(), korhaz_tools(), assistant=FunctionAssistant(decompose=down)
    )
    out = _ask(graph, "Szedhetek ibuprofent warfarin mellett?")
    errors = [(e.tool, e.verdict) for e in out["ledger"] if e.kind == "coordinator_error"]
    assert errors == [("drug_interaction", "rolled back")]  # no doctor named: not asked (A10)
    assert out["task"].sub_tasks == []
    assert out["activated"] == ["1:korhaz_search"]


def test_L1_the_ledger_shows_what_each_coordinator_decided_from(offline_graph):
    out = _ask(offline_graph, "What is the difference between ibuprofen and paracetamol?")
    runs = {e.tool: e for e in out["ledger"] if e.kind == "coordinator_run"}
    assert runs["drug_interaction"].verdict == "no change"
    assert runs["drug_interaction"].details == {
        "takes_together": "false",
        "medicines": '["ibuprofen", "paracetamol"]',
    }
    assert runs["doctor_finder"].details == {}  # no title, no known name: no call (A10)
    assert runs["doctor_finder"].reason == NOT_APPLICABLE
    assert runs["drug_interaction"].reason == (
        'from takes_together=false, medicines=["ibuprofen", "paracetamol"]'
    )
