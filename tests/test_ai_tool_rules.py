"""W1-W3: AI system tools — definition, input check, scope and the client-tool pause."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from ai_support import ExampleTool, client_payload, config, example_graph, results
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.types import Command

from toolweave.client_tools import pending_client_calls, resume_client_tools
from toolweave.graph.context import RunContext
from toolweave.state.client_calls import ClientToolResultError
from toolweave.state.errors import ConfigurationError, InvalidRequestError, NothingPendingError
from toolweave.tools.ai.base import (
    AiTool,
    AiToolBuilder,
    AiToolDefinitionError,
    AiToolScope,
    define_tool,
)
from toolweave.tools.ai.inputs import check_input
from toolweave.tools.ai.prompts import EXTRACTION_INSTRUCTION, INPUT_RETRY_PROMPT
from toolweave.tools.ai.registry import AiToolRegistry


class Partial(AiTool):
    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def define(self, builder: AiToolBuilder) -> None:
        for name, value in self.fields.items():
            getattr(builder, name)(value)

    def execute(self, input: str) -> str:
        raise AssertionError("never executed")


COMPLETE = {
    "id": "t1",
    "user_description": "for people",
    "ai_description": "for the model",
    "scope": AiToolScope.SERVER,
}


# -- W1 -------------------------------------------------------------------------------


def test_W1_define_is_called_once_and_the_definition_is_frozen() -> None:
    tool = ExampleTool()
    registry = AiToolRegistry([tool])
    entry = registry["example-tool"]
    assert tool.defined == 1
    assert entry.definition.name == "example-tool-name"
    assert entry.definition.scope is AiToolScope.SERVER
    assert entry.definition.schema is not None
    assert entry.definition.schema["required"] == ["exampleParam"]
    with pytest.raises(AttributeError):
        entry.definition.id = "other"  # type: ignore[misc]


@pytest.mark.parametrize("field", ["id", "user_description", "ai_description", "scope"])
def test_W1_missing_required_field_is_rejected_naming_tool_and_field(field: str) -> None:
    fields = {k: v for k, v in COMPLETE.items() if k != field}
    with pytest.raises(AiToolDefinitionError) as caught:
        AiToolRegistry([Partial(**fields)])
    assert caught.value.field == field
    assert field in str(caught.value)
    assert ("t1" if field != "id" else "Partial") in str(caught.value)
    assert isinstance(caught.value, ConfigurationError)


def test_W1_blank_description_and_unknown_scope_are_rejected() -> None:
    with pytest.raises(AiToolDefinitionError, match="ai_description"):
        define_tool(Partial(**{**COMPLETE, "ai_description": "  "}))
    with pytest.raises(AiToolDefinitionError, match="scope must be SERVER, CLIENT or ALL"):
        define_tool(Partial(**{**COMPLETE, "scope": "BROWSER"}))


def test_W1_schema_that_is_not_json_is_rejected() -> None:
    tool = Partial(**COMPLETE, input_json_schema='{"type": "object",')
    with pytest.raises(
        AiToolDefinitionError, match=r"AI tool 't1'.*input_json_schema is not valid JSON"
    ):
        define_tool(tool)


def test_W1_schema_that_is_not_a_valid_json_schema_is_rejected() -> None:
    tool = Partial(**COMPLETE, input_json_schema='{"type": "strnig"}')
    with pytest.raises(AiToolDefinitionError) as caught:
        define_tool(tool)
    assert caught.value.field == "input_json_schema"
    assert "not a valid JSON Schema" in str(caught.value)
    nested = Partial(**COMPLETE, input_json_schema='{"properties": {"a": {"minLength": -1}}}')
    with pytest.raises(AiToolDefinitionError, match="properties/a/minLength"):
        define_tool(nested)


def test_W1_client_script_must_ship_with_the_package() -> None:
    with pytest.raises(AiToolDefinitionError, match="client_script"):
        define_tool(Partial(**COMPLETE, client_script="js/missing.js"))


def test_W1_T1_id_clash_last_loaded_wins_with_a_warning_naming_both(caplog) -> None:
    class Other(ExampleTool):
        pass

    first, second = ExampleTool(), Other()
    registry = AiToolRegistry()
    registry.register(first, source="plugin a")
    with caplog.at_level(logging.WARNING):
        registry.register(second, source="plugin b")
    assert registry["example-tool"].tool is second
    message = caplog.text
    assert "'example-tool'" in message
    assert "Other (plugin b)" in message
    assert "ExampleTool (plugin a)" in message


def test_W5_decorator_registers_one_instance() -> None:
    registry = AiToolRegistry()

    @registry.component
    class Decorated(ExampleTool):
        pass

    assert isinstance(registry["example-tool"].tool, Decorated)
    assert registry["example-tool"].source == "decorator"


def test_W6_prompt_placeholders_match() -> None:
    assert EXTRACTION_INSTRUCTION.format(id="x", ai_description="y")
    assert "{error}" in INPUT_RETRY_PROMPT
    assert INPUT_RETRY_PROMPT.format(error="e")


# -- W2 -------------------------------------------------------------------------------


def test_W2_check_input_names_the_field_and_what_was_expected() -> None:
    definition = define_tool(ExampleTool())
    assert "not valid JSON" in (check_input(definition, "{oops").error or "")
    missing = check_input(definition, "{}").error or ""
    assert "'exampleParam' is a required property" in missing
    wrong = check_input(definition, '{"exampleParam": 3}').error or ""
    assert "field 'exampleParam'" in wrong
    assert "not of type 'string'" in wrong
    assert "Example parameter" in wrong
    assert check_input(definition, '{"exampleParam": "x"}').ok


def test_W2_invalid_input_never_reaches_execute_and_the_retry_is_bounded() -> None:
    tool = ExampleTool()
    prompts: list[str] = []

    def extract(text: str, chatbot_tool: Any) -> dict[str, Any]:
        prompts.append(text)
        return {"exampleParam": 7}  # filled, but not a string (a missing one is T13's)

    graph = example_graph(tool, extract=extract, ai_input_attempts=3)
    # The task names the tool: a yes on "hi" with a number the text never wrote is
    # read as no before any input is checked (T5 with T7), and W2 would not be reached.
    out = graph.invoke({"messages": [("human", "run the example tool")]}, config())
    assert tool.ran == []
    assert len(prompts) == 3  # the bound: three extractions, then the tool is skipped
    rejected = [e for e in out["ledger"] if e.tool == "example_tool" and e.verdict == "skipped"]
    assert [e.reason.split(":")[0] for e in rejected] == [
        f"input rejected (attempt {i} of 3)" for i in (1, 2, 3)
    ]
    assert "the input has wrong types" in rejected[0].reason
    assert "1:example_tool" not in out["context_buffer"]


def test_W2_the_model_gets_the_error_back_and_a_fixed_input_runs() -> None:
    tool = ExampleTool()
    replies = iter([{"exampleParam": 7}, {"exampleParam": "fixed"}])

    def extract(text: str, chatbot_tool: Any) -> dict[str, Any]:
        return next(replies)

    graph = example_graph(tool, extract=extract)
    out = graph.invoke({"messages": [("human", "run the example tool")]}, config())  # as above
    assert tool.ran == ['{"exampleParam": "fixed"}']
    assert "fixed answered" in out["answer"]
    assert any(e.verdict == "skipped" and "attempt 1 of 2" in e.reason for e in out["ledger"])


def test_W2_R7_raising_execute_is_contained_and_reported_as_progress() -> None:
    class Broken(ExampleTool):
        def execute(self, input: str) -> str:
            raise RuntimeError("boom")

    graph = example_graph(Broken())
    events = [
        part
        for mode, part in graph.stream(
            {"messages": [("human", "hi")]}, config(), stream_mode=["custom", "values"]
        )
        if mode == "custom"
    ]
    progress = [e for e in events if e.get("type") == "tool_progress"]
    assert progress
    assert progress[0]["text"] == "TOOL_PROGRESS:EXAMPLE_TOOL:ERROR"
    assert progress[0]["detail"] == "RuntimeError"
    state = graph.get_state(config()).values
    assert state["answer"] is not None
    assert any(e.verdict == "failed" and "RuntimeError" in e.reason for e in state["ledger"])


# -- W3 -------------------------------------------------------------------------------


def test_W3_server_scope_runs_on_the_server_even_when_the_client_announces_it() -> None:
    tool = ExampleTool(AiToolScope.SERVER)
    graph = example_graph(tool)
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config())
    assert "__interrupt__" not in out
    assert tool.ran == ['{"exampleParam": "example_tool input"}']
    assert "example_tool input answered" in out["answer"]


def test_W3_client_scope_pauses_with_the_documented_payload_and_resumes() -> None:
    tool = ExampleTool(AiToolScope.CLIENT)
    graph = example_graph(tool)
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config())
    payload = client_payload(out)
    assert set(payload) == {"type", "version", "task_no", "calls"}
    assert payload["version"] == 1
    assert payload["task_no"] == "1"
    [call] = payload["calls"]
    assert set(call) == {"call_id", "tool_id", "name", "input"}
    assert call["tool_id"] == "example-tool"
    assert call["name"] == "example-tool-name"
    assert json.loads(call["input"]) == {"exampleParam": "example_tool input"}
    assert pending_client_calls(graph, config()) == payload
    done = graph.invoke(Command(resume=results((call["call_id"], '"from the page"'))), config())
    assert tool.ran == []
    assert '"from the page"' in done["answer"]
    assert done["activated"] == ["1:example_tool"]
    assert pending_client_calls(graph, config()) is None


def test_W3_all_scope_runs_in_the_client_only_when_announced() -> None:
    tool = ExampleTool(AiToolScope.ALL)
    graph = example_graph(tool)
    out = graph.invoke({"messages": [("human", "hi")]}, config("server"))
    assert "__interrupt__" not in out
    assert len(tool.ran) == 1
    paused = graph.invoke(
        {"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config("c")
    )
    assert client_payload(paused)["calls"][0]["tool_id"] == "example-tool"
    via_context = graph.invoke(
        {"messages": [("human", "hi")]},
        config("ctx"),
        context=RunContext(client_tools=["example-tool"]),
    )
    assert client_payload(via_context)
    assert len(tool.ran) == 1


def test_W3_client_tool_without_an_announced_implementation_is_skipped_not_paused() -> None:
    tool = ExampleTool(AiToolScope.CLIENT)
    out = example_graph(tool).invoke({"messages": [("human", "hi")]}, config())
    assert "__interrupt__" not in out
    assert tool.ran == []
    assert any("announced no implementation" in e.reason for e in out["ledger"])


def test_W3_several_calls_of_one_step_answered_in_any_order_and_in_parts() -> None:
    a = ExampleTool(AiToolScope.CLIENT, "tool-a")
    b = ExampleTool(AiToolScope.CLIENT, "tool-b")
    c = ExampleTool(AiToolScope.ALL, "tool-c")
    graph = example_graph(a, b, c)
    announced = ["tool-a", "tool-b", "tool-c"]
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": announced}, config())
    calls = {call["tool_id"]: call["call_id"] for call in client_payload(out)["calls"]}
    assert list(calls) == announced
    part = graph.invoke(
        Command(resume=results((calls["tool-c"], "C"), (calls["tool-a"], "A"))), config()
    )
    rest = client_payload(part)
    assert [call["tool_id"] for call in rest["calls"]] == ["tool-b"]
    done = graph.invoke(Command(resume=results((calls["tool-b"], "B"))), config())
    assert done["activated"] == ["1:tool_a", "1:tool_b", "1:tool_c"]
    texts = [v[0].context for k, v in sorted(done["context_buffer"].items())]
    assert texts == ["A", "B", "C"]
    assert a.ran == b.ran == c.ran == []


def test_W3_X5_unknown_call_id_or_malformed_result_leaves_the_thread_paused_and_unchanged() -> None:
    tool = ExampleTool(AiToolScope.CLIENT)
    graph = example_graph(tool)
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config())
    call_id = client_payload(out)["calls"][0]["call_id"]
    before = graph.get_state(config())
    for bad in (
        results(("call_nope", "x")),
        {"type": "client_tool_results", "results": [{"call_id": call_id}]},
        {"type": "client_tool_results", "results": [{"call_id": call_id, "output": 3}]},
        "just text",
    ):
        with pytest.raises(ClientToolResultError):
            resume_client_tools(graph, config(), bad)
        assert graph.get_state(config()).config == before.config  # nothing written
        try:  # the graph's own input check refuses a malformed shape before any write (X5)
            raw = graph.invoke(Command(resume=bad), config())
        except InvalidRequestError:
            pass
        else:  # a well-formed answer to an unknown call: the node pauses again, saying why
            assert client_payload(raw)["calls"][0]["call_id"] == call_id
            assert client_payload(raw)["error"]
        after = graph.get_state(config())
        assert after.next == ("ask_user",)
        assert _stable(after.values) == _stable(before.values)
    done = resume_client_tools(graph, config(), results((call_id, "ok")))
    assert done["activated"] == ["1:example_tool"]
    with pytest.raises(NothingPendingError):
        resume_client_tools(graph, config(), results((call_id, "again")))


def test_W3_client_error_result_is_contained_and_reported() -> None:
    graph = example_graph(ExampleTool(AiToolScope.CLIENT))
    out = graph.invoke({"messages": [("human", "hi")], "client_tools": ["example-tool"]}, config())
    call_id = client_payload(out)["calls"][0]["call_id"]
    done = graph.invoke(Command(resume=results((call_id, "form missing"), error=True)), config())
    assert done["answer"] is not None
    assert done["context_buffer"] == {}
    assert any("form missing" in e.reason and e.verdict == "failed" for e in done["ledger"])


def _stable(values: dict[str, Any]) -> dict[str, Any]:
    """State values without the message ids LangGraph assigns when it reads the messages."""
    messages = [(m.type, m.content) for m in values["messages"]]
    return {**values, "messages": messages}


RESUMES = st.one_of(
    st.just("ok"),
    st.just("error"),
    st.just("unknown"),
    st.just("garbage"),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    announced=st.lists(st.sampled_from(["example-tool", "other", ""]), max_size=3),
    in_context=st.booleans(),
    resumes=st.lists(RESUMES, max_size=4),
)
def test_W3_client_tool_never_runs_on_server(announced, in_context, resumes) -> None:
    tool = ExampleTool(AiToolScope.CLIENT)
    graph = example_graph(tool)
    run_input: dict[str, Any] = {"messages": [("human", "please run it")]}
    kwargs: dict[str, Any] = {}
    if in_context:
        kwargs["context"] = RunContext(client_tools=announced)
    else:
        run_input["client_tools"] = announced
    out = graph.invoke(run_input, config(), **kwargs)
    for kind in resumes:
        pending = out.get("__interrupt__")
        if not pending:
            break
        call_id = pending[0].value["calls"][0]["call_id"]
        value: Any = {
            "ok": results((call_id, "done")),
            "error": results((call_id, "failed"), error=True),
            "unknown": results(("call_x", "done")),
            "garbage": {"type": "client_tool_results", "results": []},
        }[kind]
        out = graph.invoke(Command(resume=value), config(), **kwargs)
    assert tool.ran == []
