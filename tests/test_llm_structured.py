"""Structured calls: max_tokens from the schema, length stops, mode fallback, cached runnables.

Issue 11 item 2 (model-call side) against the loopback server with the real
ChatOpenAI; issue 9 item 5 (bound runnables built once per candidate set).
"""

from __future__ import annotations

import asyncio
import json
import string
import time
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Length
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from toolweave.llm import prompts
from toolweave.llm.chat_model import ChatModelAssistant, with_temperature
from toolweave.llm.env import default_assistant
from toolweave.llm.errors import LlmRequestError, LlmUnavailableError
from toolweave.llm.port import AnswerRequest
from toolweave.llm.prompts import EXTRACTION_SYSTEM_PROMPT
from toolweave.llm.replies import NormalizedReply, PassageReply, routing_schema
from toolweave.llm.retries import LlmRetryPolicy
from toolweave.llm.structured import MAX_STRUCTURED_TOKENS, MIN_STRUCTURED_TOKENS, token_budget
from toolweave.testing import ScriptedChatModel
from toolweave.tools.base import ChatbotTool

NORMALIZED = {
    "question": "Parking?",
    "user_lang": "en",
    "important_words": ["parking"],
    "prompt_type": "factual",
}


class Parking(ChatbotTool[BaseModel]):
    name = "parking"
    executable_instruction = "parking: true when the user asks about parking."


class Canteen(ChatbotTool[BaseModel]):
    name = "canteen"
    executable_instruction = "canteen: true when the user asks about food."


class DayRequest(BaseModel):
    day: str | None = Field(default=None, description="The weekday asked about")


class Hours(ChatbotTool[DayRequest]):
    name = "opening_hours"
    request_model = DayRequest
    executable_instruction = "opening_hours: true when the user asks when something is open."


def named(prefix: str, count: int) -> list[Parking]:
    """``count`` routable tools named ``prefix0``, ``prefix1``, ..."""
    return [type(f"{prefix}{i}", (Parking,), {"name": f"{prefix}{i}"})() for i in range(count)]


def make(server: FakeOpenAI) -> ChatModelAssistant:
    assistant = default_assistant(
        model="fake-model", api_key="sk-test-structured", base_url=server.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    assistant.policy = LlmRetryPolicy(max_retries=1, initial_backoff=0, timeout=2.0)
    return assistant


def sent_max_tokens(body: dict[str, Any]) -> int | None:
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    return None if value is None else int(value)


# -- max_tokens and length stops ---------------------------------------------------------


def test_T11_token_budget_grows_with_the_schema_and_is_bounded():
    small = token_budget(PassageReply)
    normalized = token_budget(NormalizedReply)
    many = token_budget(
        routing_schema(
            [type(f"T{i}", (Parking,), {"name": f"t{i}"})() for i in range(8)], fused=False
        )
    )
    assert MIN_STRUCTURED_TOKENS <= small < normalized < many <= MAX_STRUCTURED_TOKENS
    huge = routing_schema(named("h", 400), fused=False)
    assert token_budget(huge) == MAX_STRUCTURED_TOKENS


@pytest.mark.network
def test_T11_every_structured_call_sends_max_tokens_from_its_schema(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script(NORMALIZED, {"parking": {"reason": "asked", "run": True}})
    assistant.normalize("parking?", [])
    assistant.route("Parking?", [Parking()])
    normalize, routing = fake_openai.requests
    assert sent_max_tokens(normalize) == token_budget(NormalizedReply)
    assert sent_max_tokens(routing) == token_budget(routing_schema([Parking()], fused=False))


@pytest.mark.network
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_X2_length_stop_is_retried_once_with_more_tokens(fake_openai, use_async):
    assistant = make(fake_openai)
    fake_openai.script(Length(), NORMALIZED)
    start = time.monotonic()
    if use_async:
        out = asyncio.run(assistant.anormalize("parking?", []))
    else:
        out = assistant.normalize("parking?", [])
    assert out.question == "Parking?"
    first, second = fake_openai.requests
    assert sent_max_tokens(second) == 2 * sent_max_tokens(first)  # type: ignore[operator]
    assert time.monotonic() - start < 5


@pytest.mark.network
def test_X2_length_stop_twice_reads_as_no_and_never_crashes_the_run(fake_openai):
    assistant = make(fake_openai)
    fake_openai.script(Length('{"parking": {"reason": "aaaa'), Length('{"parking": {"rea'))
    verdicts = assistant.route("Parking?", [Parking()])
    assert [(v.run, v.reason) for v in verdicts] == [(False, "no valid routing reply")]
    assert len(fake_openai.requests) == 2


POEM = (
    "Tavasz, tavasz, gyönyörű tavasz,\nvirágba borul a kert és a rét,\n"
    "a napfény táncol a fák felett,\nés dalol a madár, dalol a szél.\n"
)


@pytest.mark.network
def test_X2_a_length_stop_in_prose_is_read_as_no_without_the_doubled_retry(fake_openai):
    """A model that writes the asked-for poem instead of the routing object."""
    assistant = make(fake_openai)
    fake_openai.script(Length(POEM * 3), {"parking": {"reason": "parking", "run": True}})
    verdicts = assistant.route("Írj egy verset a tavaszról.", [Parking()])
    assert [v.run for v in verdicts] == [False]
    assert len(fake_openai.requests) == 1  # no second call with twice the tokens


def test_X2_a_cut_object_or_a_short_cut_is_no_prose() -> None:
    from toolweave.llm.structured import prose_reply

    assert prose_reply(POEM)
    assert not prose_reply('{"parking": {"reason": "' + "a" * 200)  # a cut object
    assert not prose_reply("<tool_call>\n" + '{"name": "route", ' + "x" * 200)  # a cut tool call
    assert not prose_reply("Tavasz")  # too short to tell
    assert not prose_reply("")


LOOP = (
    "The tool must run for the user's task. It also asks for a free slot, "
    "which is a free appointment slot of the department on the day. "
)


@pytest.mark.network
def test_X2_a_length_stop_in_a_loop_is_read_as_no_without_the_doubled_retry(fake_openai):
    """The 0.5B model's routing reply: one reason written over and over until the limit."""
    assistant = make(fake_openai)
    looped = '{"best_fit": "parking", "parking": {"reason": "' + LOOP * 30
    fake_openai.script(Length(looped), {"parking": {"reason": "parking", "run": True}})
    verdicts = assistant.route("Írj egy verset a tavaszról.", [Parking()])
    assert [v.run for v in verdicts] == [False]
    assert len(fake_openai.requests) == 1  # no second call with twice the tokens


@pytest.mark.network
def test_T5_a_routing_reply_cut_at_the_limit_keeps_the_best_fit_it_named_first(fake_openai):
    """The 1.5B model named ``best_fit`` first, then looped in a reason until the limit."""
    assistant = make(fake_openai)
    looped = '{"best_fit": "parking", "parking": {"reason": "' + LOOP * 30
    fake_openai.script(Length(looped))
    (verdict,) = assistant.route("Hol parkolhatok?", [Parking()])
    assert (verdict.run, verdict.best) == (False, True)  # the route node decides (T5)
    assert "cut at the token limit" in verdict.reason
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize(
    "cut",
    [
        '{"best_fit": "park',  # the name itself cut
        '{"best_fit": "weather", "parking": {"reason": "' + LOOP * 30,  # no candidate
        '{"parking": {"reason": "' + LOOP * 30,  # no best fit first
    ],
)
def test_T5_a_cut_routing_reply_keeps_only_a_whole_best_fit_naming_a_candidate(cut):
    from toolweave.llm.replies import cut_routing_reply

    assert cut_routing_reply(("parking",), cut) is None
    kept = cut_routing_reply(("parking",), '{"best_fit": "parking", "parking": {"re')
    assert kept is not None
    assert (kept.best_fit, kept.tool_0, kept.cut) == ("parking", None, True)


@pytest.mark.network
def test_T5_a_cut_reply_that_named_the_callback_tool_records_the_callback(fake_openai):
    """ "Please ask cardiology to call me back." with the 1.5B model: every verdict was
    "no valid routing reply", and the generated answer promised a call nobody recorded."""
    from langchain_core.messages import HumanMessage

    from toolweave import build_graph
    from toolweave_korhaz import korhaz_domain, korhaz_tools
    from toolweave_korhaz.callbacks import CallbackLedger

    looped = '{"best_fit": "callback_request", "callback_request": {"reason": "' + LOOP * 30
    fake_openai.script(Length(looped))
    ledger = CallbackLedger()
    graph = build_graph(
        korhaz_domain(), korhaz_tools(callbacks=ledger), assistant=make(fake_openai)
    )
    out = graph.invoke(
        {"messages": [HumanMessage("Please ask cardiology to call me back.")]},
        context={"user_data": {"phone": "+36 30 123 4567"}},
    )
    assert "Cardiology will call you back" in out["answer"]
    assert [r.department for r in ledger.requests()] == ["kardiologia"]
    assert len(fake_openai.requests) == 1  # the cut routing reply; no answer call


def test_X2_a_long_cut_reply_that_says_new_things_is_no_loop() -> None:
    from toolweave.llm.structured import looping_reply

    assert looping_reply('{"x": {"reason": "' + LOOP * 3)
    entry = '"tool_{0}": {{"reason": "fits case {0}", "run": true}}, '
    many = "".join(entry.format(i) for i in range(80))
    assert not looping_reply("{" + many)  # many candidates, each its own reason
    assert not looping_reply(LOOP)  # too short to tell
    assert not looping_reply("")


def test_X2_length_stop_of_any_chat_model_is_retried_once():
    truncated = AIMessage(content="", response_metadata={"finish_reason": "length"})
    model = ScriptedChatModel(script=[truncated, NORMALIZED])
    assistant = ChatModelAssistant(model, initial_backoff=0)
    assert assistant.normalize("parking?", []).question == "Parking?"
    assert len(model.calls) == 2


# -- structured-output mode fallback -----------------------------------------------------


@pytest.mark.network
def test_T11_json_schema_rejected_falls_back_to_json_object_and_is_remembered():
    with FakeOpenAI(reject_modes={"json_schema"}) as server:
        assistant = make(server)
        server.script(NORMALIZED, {"parking": {"reason": "asked", "run": True}})
        assert assistant.normalize("parking?", []).question == "Parking?"
        assert [v.run for v in assistant.route("Parking?", [Parking()])] == [True]
        assert server.modes() == ["json_schema", "json_object", "json_object"]
        assert assistant.structured.mode == "json_mode"
        described = server.requests[1]["messages"][1]["content"]
        assert "JSON schema" in described
        assert '"important_words"' in described  # the schema is described in the prompt
        assert server.requests[2]["messages"][1]["content"].count('"parking"') >= 1


@pytest.mark.network
def test_T11_json_object_also_rejected_falls_back_to_tool_calling():
    with FakeOpenAI(reject_modes={"json_schema", "json_object"}) as server:
        assistant = make(server)
        server.script({"day": "friday"}, {"day": "monday"})
        first = assistant.generate_tool_request("Friday?", EXTRACTION_SYSTEM_PROMPT, None, Hours())
        second = assistant.generate_tool_request("Monday?", EXTRACTION_SYSTEM_PROMPT, None, Hours())
        assert first == {"opening_hours": {"day": "friday"}}
        assert second == {"opening_hours": {"day": "monday"}}
        assert server.modes() == ["json_schema", "json_object", "tools", "tools"]


@pytest.mark.network
def test_T11_a_server_rejecting_every_mode_is_a_request_error():
    with FakeOpenAI(reject_modes={"json_schema", "json_object", "tools"}) as server:
        assistant = make(server)
        with pytest.raises(LlmRequestError, match="HTTP 400"):
            assistant.normalize("parking?", [])
        assert server.modes() == ["json_schema", "json_object", "tools"]


@pytest.mark.network
def test_T11_a_400_that_does_not_name_the_mode_is_not_a_fallback(fake_openai):
    from fake_openai import FakeError

    assistant = make(fake_openai)
    fake_openai.script(FakeError(400, "messages: too long"))
    with pytest.raises(LlmRequestError):
        assistant.normalize("parking?", [])
    assert fake_openai.modes() == ["json_schema"]
    assert assistant.structured.mode == "json_schema"


@pytest.mark.network
@pytest.mark.filterwarnings("ignore:Invalid schema:UserWarning")  # langchain-openai's hint
def test_T11_a_schema_the_server_cannot_take_falls_back_for_that_call_only(fake_openai):
    from fake_openai import FakeError

    assistant = make(fake_openai)
    rejected = FakeError(400, "Invalid schema for response_format 'NormalizedReply': bad")
    fake_openai.script(rejected, NORMALIZED, NORMALIZED)
    assert assistant.normalize("parking?", []).question == "Parking?"
    assert assistant.normalize("parking?", []).question == "Parking?"
    assert fake_openai.modes() == ["json_schema", "json_object", "json_schema"]
    assert assistant.structured.mode == "json_schema"


@pytest.mark.network
def test_T11_mode_fallback_works_on_the_async_path():
    with FakeOpenAI(reject_modes={"json_schema"}) as server:
        assistant = make(server)
        server.script(NORMALIZED, NORMALIZED)

        async def twice() -> None:
            await assistant.anormalize("parking?", [])
            await assistant.anormalize("parking?", [])

        asyncio.run(twice())
        assert server.modes() == ["json_schema", "json_object", "json_object"]


def test_T11_json_mode_prompt_placeholders_match_the_filler():
    names = {n for _, n, _, _ in string.Formatter().parse(prompts.JSON_MODE_SCHEMA_PROMPT) if n}
    assert names == {"schema"}
    assert '{"a":1}' in prompts.json_mode_schema(schema='{"a":1}')


# -- bound runnables are built once per candidate set (issue 9 item 5) -----------------


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    built: list[Any] = []
    original = ScriptedChatModel.with_structured_output

    def spy(self: Any, schema: Any, **kwargs: Any) -> Any:
        built.append(schema)
        return original(self, schema, **kwargs)

    monkeypatch.setattr(ScriptedChatModel, "with_structured_output", spy)
    return built


def test_issue9_structured_runnable_is_built_once_per_candidate_set(monkeypatch):
    built = _counting(monkeypatch)
    verdict = {"reason": "r", "run": True}
    model = ScriptedChatModel(
        script=[{"parking": verdict, "canteen": verdict}] * 3 + [{"parking": verdict}]
    )
    assistant = ChatModelAssistant(model, fuse_routing=False)
    tools = [Parking(), Canteen()]
    for _ in range(3):
        assert [v.run for v in assistant.route("Parking or food?", tools)] == [True, True]
    assert len(built) == 1
    assistant.route("Parking?", [Parking()])  # another candidate set: one more build
    assert len(built) == 2
    assert assistant.structured.cached() == 2


def test_issue9_structured_runnable_cache_is_bounded(monkeypatch):
    built = _counting(monkeypatch)
    sets = [[type(f"C{i}", (Parking,), {"name": f"c{i}"})()] for i in range(5)]
    model = ScriptedChatModel(
        script=[{f"c{i}": {"reason": "r", "run": False}} for i in range(5)] * 2
    )
    assistant = ChatModelAssistant(model, structured_cache_size=3)
    for tools in sets:
        assistant.route("x", tools)
    assert assistant.structured.cached() == 3
    assistant.route("x", sets[4])  # recent: still cached
    assert len(built) == 5
    assistant.route("x", sets[0])  # evicted: built again
    assert len(built) == 6


def test_issue9_cached_runnable_sends_the_same_schema_every_call():
    with FakeOpenAI() as server:
        assistant = make(server)
        server.script(NORMALIZED, NORMALIZED)
        assistant.normalize("a?", [])
        assistant.normalize("b?", [])
        one, two = (json.dumps(r["response_format"], sort_keys=True) for r in server.requests)
        assert one == two


def test_X2_structured_outage_is_still_an_error_not_a_no():
    with FakeOpenAI() as server:
        assistant = make(server)
        from fake_openai import FakeError

        server.script(FakeError(503), FakeError(503))
        with pytest.raises(LlmUnavailableError):
            assistant.route("Parking?", [Parking()])
        assert len(server.requests) == 2


OFF_SCHEMA = "The model produced output that does not match the expected peg-native format"
"""llama.cpp's HTTP 500 when its grammar and the model's reply part ways."""


def test_X2_a_reply_the_server_finds_off_schema_is_asked_once_more_then_no():
    """Not an outage retried to the end: the same request gives the same reply."""
    with FakeOpenAI() as server:
        assistant = make(server)
        from fake_openai import FakeError

        server.script(FakeError(500, OFF_SCHEMA), FakeError(500, OFF_SCHEMA))
        verdicts = assistant.route("Parking?", [Parking()])
        assert not any(v.run for v in verdicts)  # read as "no", the run goes on
        assert len(server.requests) == 2  # asked once more, as an invalid reply is


def test_X2_a_reply_off_schema_then_a_valid_one_is_used():
    with FakeOpenAI() as server:
        assistant = make(server)
        assistant.policy = LlmRetryPolicy(max_retries=0, initial_backoff=0, timeout=2.0)
        from fake_openai import FakeError

        server.script(FakeError(500, OFF_SCHEMA), {"parking": {"reason": "parking", "run": True}})
        assert [v.run for v in assistant.route("Parking?", [Parking()])] == [True]


def test_X2_a_server_error_of_another_kind_is_still_an_outage():
    with FakeOpenAI() as server:
        assistant = make(server)
        from fake_openai import FakeError

        server.script(FakeError(500, "slot unavailable"), FakeError(500, "slot unavailable"))
        with pytest.raises(LlmUnavailableError):
            assistant.route("Parking?", [Parking()])


def test_issue9_no_json_schema_is_generated_per_call_once_bound(monkeypatch):
    from pydantic.json_schema import GenerateJsonSchema

    verdict = {"reason": "r", "run": False}
    model = ScriptedChatModel(script=[{"parking": verdict, "canteen": verdict}] * 4)
    assistant = ChatModelAssistant(model, fuse_routing=False)
    tools = [Parking(), Canteen()]
    assistant.route("x", tools)  # builds and binds once
    generated: list[int] = []
    original = GenerateJsonSchema.generate

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        generated.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GenerateJsonSchema, "generate", counting)
    for _ in range(3):
        assistant.route("x", tools)
    assert generated == []
    assert len(model.calls) == 4


@pytest.mark.network
def test_issue9_chat_openai_sends_the_sdk_schema_without_regenerating_it(monkeypatch):
    from openai.lib._parsing._completions import type_to_response_format_param
    from pydantic.json_schema import GenerateJsonSchema

    from toolweave.llm.structured import wire_response_format

    tools = [Parking(), Hours()]
    schema = routing_schema(sorted(tools, key=lambda t: t.name), fused=True)  # name order (T5)
    reply = {
        "parking": {"reason": "no", "run": False},
        "opening_hours": {"reason": "asks", "run": True, "request": {"day": "friday"}},
    }
    with FakeOpenAI([reply] * 4) as server:
        assistant = make(server)
        first = assistant.route_and_extract(
            "Friday?", "Friday?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
        )
        generated: list[int] = []
        original = GenerateJsonSchema.generate

        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            generated.append(1)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(GenerateJsonSchema, "generate", counting)
        for _ in range(3):
            again = assistant.route_and_extract(
                "Friday?", "Friday?", tools, extraction_prompt=EXTRACTION_SYSTEM_PROMPT
            )
            assert again == first
        monkeypatch.undo()
        assert generated == []
        assert first.requests == {"opening_hours": {"day": "friday"}}
        sdk = json.loads(json.dumps(type_to_response_format_param(schema)))
        expected = wire_response_format(sdk)  # A10: what informs or binds the model only
        assert all(body["response_format"] == expected for body in server.requests)
        assert expected["json_schema"]["strict"] is True


def test_issue9_structured_reply_is_parsed_without_a_parser_run_and_a_bad_one_is_asked_again():
    from langchain_core.tracers.context import collect_runs

    bad = {"question": "Parking?"}  # required fields missing: does not validate
    model = ScriptedChatModel(script=[bad, NORMALIZED, bad, bad])
    assistant = ChatModelAssistant(model, initial_backoff=0)
    with collect_runs() as runs:
        assert assistant.normalize("parking?", []).question == "Parking?"
    assert len(model.calls) == 2  # the invalid reply was asked once more
    kinds = [run.run_type for run in runs.traced_runs]
    assert "llm" in kinds
    assert "parser" not in kinds  # read by parse_result, no traced parser run per call
    # twice invalid: read as no reply (the question unchanged), never an exception
    assert assistant.normalize("what about parking?", []).question == "what about parking?"
    assert len(model.calls) == 4


# -- decisions at temperature 0 -----------------------------------------------------------


@pytest.mark.network
def test_T5_decisions_are_sampled_at_temperature_zero_and_the_answer_at_the_models_own(
    fake_openai,
):
    """A server samples (llama.cpp at 0.8 by default): the same question got other yeses."""
    model = make(fake_openai).model.model_copy(update={"temperature": 0.7})
    assistant = ChatModelAssistant(model, timeout=5.0, initial_backoff=0.0)
    fake_openai.script(NORMALIZED, {"parking": {"reason": "asked", "run": True}}, "Level -1.")
    assistant.normalize("parking?", [])
    assistant.route("Parking?", [Parking()])
    assistant.answer(AnswerRequest("Parking?", "en", "", (), ()))
    normalize, routing, answer = fake_openai.requests
    assert normalize["temperature"] == 0.0
    assert routing["temperature"] == 0.0
    assert answer["temperature"] == 0.7


@pytest.mark.network
def test_T5_decision_temperature_none_keeps_the_models_own(fake_openai):
    model = make(fake_openai).model.model_copy(update={"temperature": 0.7})
    assistant = ChatModelAssistant(model, decision_temperature=None, timeout=5.0)
    fake_openai.script({"parking": {"reason": "asked", "run": True}})
    assistant.route("Parking?", [Parking()])
    assert fake_openai.requests[0]["temperature"] == 0.7


@pytest.mark.parametrize(
    ("name", "changed"),
    [("gpt-4o-mini", True), ("gpt-5-chat-latest", True), ("gpt-5-mini", False), ("o3", False)],
)
def test_T5_reasoning_models_keep_their_fixed_temperature(name, changed):
    """OpenAI's reasoning models reject any temperature but their own (a 400)."""
    model = ChatOpenAI(model=name, api_key="sk-test", max_retries=0)
    decided = with_temperature(model, 0.0)
    assert (decided is not model) is changed
    if changed:
        assert decided.temperature == 0.0  # type: ignore[attr-defined]
