"""One typed effect vocabulary (issue 16 item 1): the port's calls compose by yield from.

The steps of a model call yield their effects to whoever drives them, so a graph
node's driver runs every call and every backoff itself: a retry's wait is a
``Sleep`` effect between two ``Call`` effects, never a driver inside an effect.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.port import Activation, RoutingVerdict
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool
from toolweave.tools.effects import Call, Sleep, Steps, adrive, drive, perform, sleep

NORMALIZED = {
    "question": "Parking?",
    "user_lang": "en",
    "important_words": ["parking"],
    "prompt_type": "factual",
}


class DayRequest(BaseModel):
    day: str | None = Field(default=None, description="The weekday asked about")


class Hours(ChatbotTool[DayRequest]):
    name = "opening_hours"
    request_model = DayRequest
    executable_instruction = "opening_hours: true when the user asks when the clinic is open."


def effects_of(steps: Steps[Any]) -> tuple[list[Any], Any]:
    """Run ``steps`` by hand, sync forms, recording every effect they yield."""
    seen: list[Any] = []
    try:
        effect = next(steps)
        while True:
            seen.append(effect)
            try:
                result = None if isinstance(effect, Sleep) else effect.call()
            except ConnectionError as exc:  # the scripted failure, handed back as drivers do
                effect = steps.throw(exc)
            else:
                effect = steps.send(result)
    except StopIteration as stop:
        return seen, stop.value


def test_X2_a_retry_waits_through_a_sleep_effect_between_two_model_calls():
    model = ScriptedChatModel(script=[ConnectionError("connection reset"), NORMALIZED])
    assistant = ChatModelAssistant(model, max_retries=2, initial_backoff=0.25)
    seen, normalized = effects_of(assistant.normalize_steps("parking?", [HumanMessage("hi")]))
    assert [type(effect) for effect in seen] == [Call, Sleep, Call]
    assert 0 < seen[1].seconds <= 0.25
    assert normalized.question == "Parking?"
    assert len(model.calls) == 2


def test_X2_both_drivers_run_the_same_retrying_steps():
    def assistant() -> ChatModelAssistant:
        script = [ConnectionError("down"), NORMALIZED]
        return ChatModelAssistant(ScriptedChatModel(script=script), initial_backoff=0)

    sync = drive(assistant().normalize_steps("parking?", []))
    asynchronous = asyncio.run(adrive(assistant().normalize_steps("parking?", [])))
    assert sync == asynchronous
    assert sync.important_words == ("parking",)


def test_X2_the_sync_driver_runs_inside_a_running_event_loop_and_throws_failures_back():
    """``drive`` shares ``adrive``'s loop but never suspends: it needs no event loop."""

    def fail() -> int:
        raise ConnectionError("down")

    async def never() -> int:
        raise AssertionError("the sync driver called an async form")

    def steps() -> Steps[int]:
        try:
            yield from perform(Call(fail, never))
        except ConnectionError:
            yield from sleep(0)
        return (yield from perform(Call(lambda: 41, never))) + 1

    async def inside_a_loop() -> int:
        return drive(steps())

    assert asyncio.run(inside_a_loop()) == 42


class CountingOffline(OfflineAssistant):
    """The offline model with its own ``route_and_extract``, counting its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.activations = 0

    def route_and_extract(self, *args: Any, **kwargs: Any) -> Activation:
        self.activations += 1
        return super().route_and_extract(*args, **kwargs)


def test_T7_the_default_activation_routes_then_extracts_each_as_its_own_call():
    tools = [Hours()]
    text = "When is the clinic open on Friday?"
    steps = OfflineAssistant().route_and_extract_steps(
        text, text, tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    seen, activation = effects_of(steps)
    assert len(seen) == 2, "one routing call, then one extraction of the routed tool"
    assert activation.routed() == ["opening_hours"]
    assert activation.requests["opening_hours"] == {"day": "Friday"}


def test_T5_an_assistant_with_its_own_route_and_extract_is_called_through_it():
    llm = CountingOffline()
    text = "When is the clinic open on Friday?"
    steps = llm.route_and_extract_steps(
        text, text, [Hours()], extraction_prompt=EXTRACTION_SYSTEM_PROMPT
    )
    seen, activation = effects_of(steps)
    assert len(seen) == 1
    assert llm.activations == 1
    assert activation.verdicts == (
        RoutingVerdict("opening_hours", True, activation.verdicts[0].reason),
    )
