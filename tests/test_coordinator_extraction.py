"""C1, C2, C4, M2: coordinators that decide from a structured extraction through the LLM port.

A :class:`DecomposingCoordinator` declares a decomposition schema; the coordinator
phase fills it from the task prompt (one call for all such coordinators of a
task) and the coordinator builds its subtasks from the filled object.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field
from support import ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import TaskInfo
from toolweave.coordinators.base import DecomposingCoordinator
from toolweave.coordinators.phase import NO_DECOMPOSITION, coordinator_phase
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.errors import LlmUnavailableError, RunDeadlineError
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import DecompositionSchema
from toolweave.testing import FunctionAssistant, ScriptedChatModel
from toolweave.tools.base import ChatbotTool, EmptyRequest
from toolweave.tools.effects import adrive, drive

CITIES = ["Budapest", "Szeged", "Pécs"]


class CityPlan(BaseModel):
    """The cities the user asks about."""

    cities: list[str] = Field(
        default_factory=list,
        description="Every city the user names, as written.",
        json_schema_extra={"known_values": CITIES},
    )


class PersonPlan(BaseModel):
    """The person the user asks about."""

    person: str | None = Field(default=None, json_schema_extra={"after_cues": ["mr", "ms"]})


class CitySplitter(ChatbotTool[EmptyRequest], DecomposingCoordinator[CityPlan]):
    """One ``weather`` subtask per city named; needs at least two."""

    executable_instruction = None
    decomposition_model = CityPlan
    decomposition_instruction = "which cities does the user ask about?"

    def __init__(self, name: str = "splitter", priority: int = 10) -> None:
        self.name = name  # type: ignore[misc]
        self.priority = priority  # type: ignore[misc]
        self.seen: list[CityPlan] = []

    def decompose_from(self, task: TaskInfo, decomposition: CityPlan) -> TaskInfo:
        self.seen.append(decomposition)
        if len(decomposition.cities) < 2:
            return task
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt=f"weather in {c}", required_tool_names=["weather"])
            for c in decomposition.cities
        ]
        return task


class PersonFinder(ChatbotTool[EmptyRequest], DecomposingCoordinator[PersonPlan]):
    name = "person_finder"
    priority = 20
    executable_instruction = None
    decomposition_model = PersonPlan

    def decompose_from(self, task: TaskInfo, decomposition: PersonPlan) -> TaskInfo:
        if decomposition.person:
            task.task_prompt += f" [person: {decomposition.person}]"
        return task


def phase(task: TaskInfo, coordinators: list[Any], llm: Any = None) -> Any:
    return drive(coordinator_phase(task, coordinators, depth=0, max_depth=3, room=10, llm=llm))


def scripted(*script: Any) -> tuple[ChatModelAssistant, ScriptedChatModel]:
    model = ScriptedChatModel(script=list(script))
    return ChatModelAssistant(model, initial_backoff=0, max_retries=0), model


# --- C1: the subtasks come from the filled schema -------------------------------------------


def test_C1_offline_extraction_fills_the_schema_and_the_coordinator_splits():
    splitter = CitySplitter()
    tools = [splitter, make_tool("weather", routing=None)]
    out = ask(graph_of(tools, assistant=OfflineAssistant()), "Is it raining in Szeged and Pécs?")
    assert [plan.cities for plan in splitter.seen] == [["Szeged", "Pécs"]]
    assert out["activated"] == ["1.1:weather", "1.2:weather"]
    assert [s.owner_coordinator_name for s in out["task"].sub_tasks] == ["splitter"] * 2


def test_C1_irrelevant_extraction_leaves_the_task_unchanged_but_the_coordinator_ran():
    splitter = CitySplitter()
    outcome = phase(TaskInfo(task_no="1", task_prompt="Weather in Szeged?"), [splitter])
    assert outcome.task.sub_tasks == []
    assert (outcome.ran, outcome.changed, outcome.errors) == (["splitter"], [], {})
    assert outcome.task.applied_coordinator_names == ["splitter"]  # C5


def test_C1_one_structured_call_fills_every_coordinators_schema():
    llm, model = scripted(
        {"splitter": {"cities": ["szeged", "pécs"]}, "person_finder": {"person": "Smith"}}
    )
    task = TaskInfo(task_no="1", task_prompt="weather for mr smith in szeged and pécs")
    outcome = phase(task, [CitySplitter(), PersonFinder()], llm)
    (call,) = model.calls
    schema = call.tools[0]["function"]["parameters"]
    assert set(schema["properties"]) == {"splitter", "person_finder"}
    assert "Budapest" in str(schema)  # known values help the model
    assert "after_cues" not in str(schema)  # the offline extraction's hints do not
    assert "- splitter: which cities does the user ask about?" in call.system
    assert "- person_finder: The person the user asks about." in call.system
    assert [s.task_prompt for s in outcome.task.sub_tasks] == [
        "weather in szeged",
        "weather in pécs",
    ]
    assert outcome.task.task_prompt.endswith("[person: Smith]")
    assert outcome.llm_calls == 1


def test_C1_offline_is_free_and_a_function_assistant_counts_one_call_per_phase():
    task = TaskInfo(task_no="1", task_prompt="Szeged and Budapest")
    assert phase(task.model_copy(deep=True), [CitySplitter()], OfflineAssistant()).llm_calls == 0
    seen: list[str] = []

    def decompose(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        seen.append(schema.name)
        return {"cities": ["a", "b"]} if schema.name == "splitter" else {}

    llm = FunctionAssistant(decompose=decompose)
    outcome = phase(task, [CitySplitter(), PersonFinder()], llm)
    assert (seen, outcome.llm_calls) == (["splitter", "person_finder"], 1)


def test_C1_decomposing_coordinator_called_directly_uses_the_offline_extraction():
    task = TaskInfo(task_no="1", task_prompt="Budapest or Pécs?")
    assert CitySplitter().decompose_into_subtasks(task) is task
    assert [s.task_prompt for s in task.sub_tasks] == ["weather in Budapest", "weather in Pécs"]


# --- M2: the extraction reads the task prompt only -------------------------------------------


def test_M2_extraction_sees_only_the_task_prompt_never_the_prompt_context():
    seen: list[str] = []

    def decompose(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        seen.append(prompt)
        return {}

    task = TaskInfo(
        task_no="1.1", task_prompt="and in Szeged?", prompt_context="Weather in Budapest and Pécs"
    )
    phase(task, [CitySplitter()], FunctionAssistant(decompose=decompose))
    assert seen == ["and in Szeged?"]

    llm, model = scripted({"splitter": {"cities": []}})
    phase(task.model_copy(update={"applied_coordinator_names": []}), [CitySplitter()], llm)
    (call,) = model.calls
    sent = " ".join(m.text for m in call.messages)
    assert call.human == "and in Szeged?"
    assert "Budapest" not in sent
    assert "Pécs" not in sent


def test_C2_a_prompt_changed_by_an_earlier_coordinator_is_extracted_again():
    prompts: list[tuple[str, list[str]]] = []

    def decompose(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        prompts.append((prompt, [schema.name]))
        return {}

    def extend(task: TaskInfo) -> TaskInfo:
        task.task_prompt += " (in Szeged)"
        return task

    coordinators = [
        CitySplitter("first", priority=1),
        ScriptedCoordinator("extender", extend, priority=2),
        CitySplitter("second", priority=3),
    ]
    outcome = phase(
        TaskInfo(task_no="1", task_prompt="q"), coordinators, FunctionAssistant(decompose=decompose)
    )
    assert prompts == [
        ("q", ["first"]),
        ("q", ["second"]),  # one call: both schemas (a FunctionAssistant fills each)
        ("q (in Szeged)", ["second"]),
    ]
    assert outcome.llm_calls == 2
    assert outcome.ran == ["first", "extender", "second"]


# --- C4: a failing extraction rolls back like a raising coordinator ------------------------------


def test_C4_failing_extraction_rolls_back_and_later_coordinators_still_run():
    def broken(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        raise LlmUnavailableError("model down")

    log: list[str] = []

    def later(task: TaskInfo) -> TaskInfo:
        task.sub_tasks = [
            TaskInfo(task_no="", task_prompt="later", required_tool_names=["weather"])
        ]
        return task

    splitter = CitySplitter()
    tools = [
        splitter,
        ScriptedCoordinator("later", later, priority=50, calls=log),
        make_tool("weather", routing=None),
    ]
    out = ask(graph_of(tools, assistant=FunctionAssistant(decompose=broken)), "Szeged and Pécs")
    errors = [(e.tool, e.verdict, e.reason) for e in out["ledger"] if e.kind == "coordinator_error"]
    assert errors == [("splitter", "rolled back", "LlmUnavailableError: model down")]
    assert splitter.seen == []  # never called without a decomposition
    assert log == ["later@1"]
    assert out["activated"] == ["1.1:weather"]
    assert out["task"].applied_coordinator_names == ["splitter", "later"]  # C5: it ran


def test_C4_reply_that_does_not_validate_rolls_back():
    llm, model = scripted({"splitter": {"cities": "not a list"}}, {"splitter": {"cities": 3}})
    task = TaskInfo(task_no="1", task_prompt="Szeged and Pécs")
    before = task.model_copy(deep=True)
    outcome = phase(task, [CitySplitter()], llm)
    assert outcome.errors["splitter"].startswith(NO_DECOMPOSITION)
    assert outcome.task.sub_tasks == before.sub_tasks
    assert len(model.calls) == 2  # one retry of an invalid reply, then "none"


def test_C4_invalid_function_decomposition_is_an_error_not_a_crash():
    llm = FunctionAssistant(decompose=lambda prompt, schema: {"cities": 5})
    outcome = phase(TaskInfo(task_no="1", task_prompt="Szeged"), [CitySplitter()], llm)
    assert outcome.errors["splitter"].startswith(NO_DECOMPOSITION)
    assert outcome.ran == ["splitter"]


def test_X5_run_deadline_during_the_extraction_ends_the_run():
    def late(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        raise RunDeadlineError("deadline passed")

    with pytest.raises(RunDeadlineError):
        phase(
            TaskInfo(task_no="1", task_prompt="x"),
            [CitySplitter()],
            FunctionAssistant(decompose=late),
        )


# --- the async path and the graph's LLM-call count --------------------------------------------


def test_C1_async_phase_awaits_the_native_async_extraction():
    llm, model = scripted({"splitter": {"cities": ["Szeged", "Pécs"]}})
    task = TaskInfo(task_no="1", task_prompt="Szeged, Pécs")
    steps = coordinator_phase(task, [CitySplitter()], depth=0, max_depth=3, room=10, llm=llm)
    outcome = asyncio.run(adrive(steps))
    assert [s.task_prompt for s in outcome.task.sub_tasks] == [
        "weather in Szeged",
        "weather in Pécs",
    ]
    assert (outcome.llm_calls, len(model.calls)) == (1, 1)


def test_C1_graph_counts_the_decomposition_call():
    def decompose(prompt: str, schema: DecompositionSchema) -> dict[str, Any]:
        return {"cities": ["Szeged", "Pécs"]}

    weather = make_tool("weather", routing=None, request_model=EmptyRequest)  # no extraction
    out = ask(
        graph_of([CitySplitter(), weather], assistant=FunctionAssistant(decompose=decompose)),
        "weather?",
    )
    plain = ask(graph_of([weather]), "weather?")
    assert out["activated"] == ["1.1:weather", "1.2:weather"]
    assert out["llm_calls"] == plain["llm_calls"] + 1


class PathRecording(OfflineAssistant):
    """The offline model, noting which extraction path the graph took."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def extract_decompositions(self, task_prompt: str, schemas: Any) -> Any:
        self.paths.append("sync")
        return super().extract_decompositions(task_prompt, schemas)

    async def aextract_decompositions(self, task_prompt: str, schemas: Any) -> Any:
        self.paths.append("async")
        return super().extract_decompositions(task_prompt, schemas)


def test_C1_graph_takes_the_sync_extraction_under_invoke_and_the_async_one_under_ainvoke():
    llm = PathRecording()
    weather = make_tool("weather", routing=None, request_model=EmptyRequest)
    graph = graph_of([CitySplitter(), weather], assistant=llm)
    out = ask(graph, "Szeged and Pécs", thread_id="sync")
    assert llm.paths == ["sync"]
    config = {"configurable": {"thread_id": "async"}}
    aout = asyncio.run(graph.ainvoke({"messages": [HumanMessage("Szeged and Pécs")]}, config))
    assert llm.paths == ["sync", "async"]
    assert aout["activated"] == out["activated"] == ["1.1:weather", "1.2:weather"]


class Flags(BaseModel):
    urgent: bool = Field(default=False, json_schema_extra={"cues": ["urgent", "asap"]})
    cities: list[str] = Field(
        default_factory=list, json_schema_extra={"known_values": ["York", "New York", "Pécs"]}
    )
    person: str | None = Field(default=None, json_schema_extra={"after_cues": ["mr", "ms"]})


def test_T7_offline_extraction_reads_cues_mention_order_and_words_after_a_cue():
    from toolweave.llm.offline_extract import extract_request

    got = extract_request("ASAP: is Mr Smith Jones today in pécs or New York?", Flags)
    assert got == {"urgent": True, "cities": ["Pécs", "New York"], "person": "Smith Jones"}
    got = extract_request("weather for ms lee and her team", Flags)
    assert got == {"urgent": False, "cities": [], "person": "lee"}  # a stopword ends the name
    assert extract_request("ms mary ann lee smith", Flags)["person"] == "mary ann lee"  # type: ignore[index]
    assert extract_request("nothing here", Flags) == {"urgent": False, "cities": [], "person": None}
