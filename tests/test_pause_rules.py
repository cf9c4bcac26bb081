"""Q7: every kind of pause is one typed, versioned payload that every consumer handles."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast, get_args, get_type_hints

import pytest
from ai_support import ExampleTool, client_payload, example_graph
from ai_support import config as ai_config
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import graph_of

import toolweave
from toolweave import ClarifiableTool, ToolCallContext, ToolResult, thread_status
from toolweave.graph.context import Limits
from toolweave.graph.pause import apply_message, apply_resume, check_resume
from toolweave.pauses import (
    agent_tool_text,
    cli_prompt,
    client_answers,
    eval_label,
    page_handling,
    page_pauses,
)
from toolweave.state.client_calls import ClientToolCall, ClientToolOutcome
from toolweave.state.graph_state import GraphState
from toolweave.state.pauses import (
    PAUSE_TYPES,
    Clarification,
    ClientCalls,
    Pause,
    PauseKind,
    PausePayload,
    awaiting,
    clarification_of,
    describe,
    payload_of,
)
from toolweave.tools.ai.base import AiToolScope

ROOT = Path(__file__).resolve().parents[1]


class Department(ClarifiableTool[Any]):
    """Asks which department, then answers."""

    name = "department_info"
    executable_instruction = "department_info: true for department questions"

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.clarification(self.name, "Which department?", ["cardiology", "surgery"])

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        return ToolResult.as_guaranteed_context(self.name, f"{reply}: 8-16h")


QUESTION = Clarification(task_no="1", tool="department_info", question="Which department?")
CALLS = ClientCalls(
    task_no="1",
    calls=(ClientToolCall(call_id="c1", tool_id="form", name="Fill the form", input="{}"),),
)
SAMPLES: dict[str, Pause] = {"clarification": QUESTION, "client_tool_calls": CALLS}


class Survey:
    """A pause kind nobody handles: what a half-added kind looks like at run time."""

    task_no = "1"


UNKNOWN_PAYLOAD = cast(PausePayload, {"type": "survey", "version": 1, "task_no": "1"})


def test_Q7_every_kind_is_a_versioned_typed_payload_in_the_public_api() -> None:
    assert set(PAUSE_TYPES) == set(get_args(PauseKind)) == set(SAMPLES)
    for kind, payload_type in PAUSE_TYPES.items():
        fields = get_type_hints(payload_type)
        assert {"type", "version"} <= set(fields)
        assert get_args(fields["type"]) == (kind,)
        payload = payload_of(SAMPLES[kind])
        assert payload["type"] == kind
        assert set(payload) <= set(fields)
    assert payload_of(CALLS)["version"] == toolweave.PAUSE_VERSION == 1
    for name in ("Pause", "PausePayload", "ClarificationPayload", "ClientToolCallsPayload"):
        assert name in toolweave.__all__
    assert toolweave.is_pause_payload(payload_of(QUESTION))
    assert not toolweave.is_pause_payload({"type": "routed"})


def test_Q7_one_state_key_holds_the_pending_pause_of_either_kind() -> None:
    hints = get_type_hints(GraphState)
    assert "pause" in hints
    assert not {"clarification", "client_calls"} & set(hints)
    assert set(get_args(hints["pause"])) == {Clarification, ClientCalls, type(None)}


def test_Q7_thread_status_says_which_kind_the_run_waits_for() -> None:
    graph = graph_of([Department()], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "q7-question"}}
    graph.invoke({"messages": [HumanMessage("department_info please")]}, config)
    status = thread_status(graph, config)
    assert status.kind.value == "waiting_for_reply"
    assert status.pause_kind == "clarification"
    assert status.next == ("ask_user",)
    assert status.describe == "waiting for a reply: Which department?"
    assert isinstance(graph.get_state(config).values["pause"], Clarification)

    client = example_graph(ExampleTool(AiToolScope.CLIENT))
    out = client.invoke(
        {"messages": [("human", "hi")], "client_tools": ["example-tool"]}, ai_config("q7")
    )
    client_payload(out)
    status = thread_status(client, ai_config("q7"))
    assert status.kind.value == "waiting_for_reply"
    assert status.pause_kind == "client_tool_calls"
    assert status.next == ("ask_user",)  # the one interrupting node, whatever the kind
    assert status.pending_question is None
    assert status.describe == "waiting for the client's tool results: example-tool-name"
    assert isinstance(client.get_state(ai_config("q7")).values["pause"], ClientCalls)


def test_Q7_every_consumer_handles_every_kind() -> None:
    question, calls = payload_of(QUESTION), payload_of(CALLS)
    assert awaiting(QUESTION) == "reply"  # the next message on the thread answers it
    assert awaiting(CALLS) == "client"
    assert awaiting(QUESTION.model_copy(update={"reply": "surgery"})) == "nobody"
    done = {"c1": ClientToolOutcome(call_id="c1", output="ok")}
    assert awaiting(CALLS.model_copy(update={"results": done})) == "nobody"
    assert clarification_of([calls, question]) == question
    assert describe(calls) == "waiting for the client's tool results: Fill the form"
    assert cli_prompt(question) == ("Which department?", [])
    assert "Fill the form" in cli_prompt(calls)[0]
    assert "Which department?" in agent_tool_text(question)
    assert "Fill the form" in agent_tool_text(calls)
    assert eval_label(question) == "clarification: Which department?"
    assert eval_label(calls) == "client_tool_calls: Fill the form"
    assert not client_answers(question)
    assert client_answers(calls)
    assert page_pauses() == {"clarification": "question", "client_tool_calls": "client_tools"}
    limits = Limits()
    check_resume(question, "surgery", limits)
    check_resume(calls, {"type": "client_tool_results", "results": []}, limits)
    check_resume(calls, "surgery", limits)  # malformed: the pause asks again, saying why (W3)
    asked: list[Any] = []
    apply_resume(
        CALLS,
        "surgery",
        ask=lambda payload: (
            asked.append(payload)
            or {"type": "client_tool_results", "results": [{"call_id": "c1", "output": "done"}]}
        ),
    )
    assert "client-tool resume value must be an object" in asked[0]["error"]
    assert apply_message(QUESTION, "2")["pause"].reply == "2"
    resumed = apply_resume(
        CALLS,
        {"type": "client_tool_results", "results": [{"call_id": "c1", "output": "done"}]},
        ask=lambda payload: pytest.fail("nothing to ask again"),
    )
    assert not resumed["pause"].waiting


def test_Q7_a_kind_no_consumer_handles_reaches_assert_never_everywhere() -> None:
    survey = cast(Pause, Survey())
    for dispatch in (
        lambda: awaiting(survey),
        lambda: apply_resume(survey, "x", ask=lambda payload: None),
        lambda: apply_message(survey, "x"),
        lambda: describe(UNKNOWN_PAYLOAD),
        lambda: clarification_of([UNKNOWN_PAYLOAD]),
        lambda: check_resume(UNKNOWN_PAYLOAD, "x", Limits()),
        lambda: cli_prompt(UNKNOWN_PAYLOAD),
        lambda: agent_tool_text(UNKNOWN_PAYLOAD),
        lambda: eval_label(UNKNOWN_PAYLOAD),
        lambda: client_answers(UNKNOWN_PAYLOAD),
        lambda: page_handling(cast(PauseKind, "survey")),
    ):
        with pytest.raises(AssertionError):
            dispatch()


NEW_KIND = {
    "PausePayload = ClarificationPayload | ClientToolCallsPayload": (
        'class SurveyPayload(TypedDict):\n    type: Literal["survey"]\n    version: int\n'
        "    task_no: str\n\n\n"
        "PausePayload = ClarificationPayload | ClientToolCallsPayload | SurveyPayload"
    ),
    'PauseKind = Literal["clarification", "client_tool_calls"]': (
        'PauseKind = Literal["clarification", "client_tool_calls", "survey"]'
    ),
    "Pause = Clarification | ClientCalls\n": (
        "class Survey(BaseModel):\n    task_no: str\n\n\n"
        "Pause = Clarification | ClientCalls | Survey\n"
    ),
}
"""A new kind added to the union in ``state/pauses.py`` and nowhere else."""
CONSUMERS = {
    "toolweave/state/pauses.py": 5,  # payload, walk and next message, thread status (2), agent tool
    "toolweave/graph/pause.py": 3,  # check-resume, apply-resume (Command and message)
    "toolweave/pauses.py": 4,  # CLI, toolweave eval, web page, Python client
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_Q7_mypy_refuses_a_new_kind_at_every_consumer(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    subprocess.run(["bash", str(ROOT / "scripts/package-tree.sh"), str(tree)], check=True)
    (tree / "toolweave" / "state").unlink()
    shutil.copytree(ROOT / "state", tree / "toolweave" / "state")
    source = tree / "toolweave" / "state" / "pauses.py"
    text = source.read_text(encoding="utf-8")
    for old, new in NEW_KIND.items():
        assert old in text
        text = text.replace(old, new)
    source.write_text(text, encoding="utf-8")
    mypy = Path(sys.executable).with_name("mypy")
    checked = subprocess.run(
        [str(mypy), "--config-file", str(ROOT / "pyproject.toml"), "-p", "toolweave"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    refused = re.findall(r"^(\S+?):\d+: error: ", checked.stdout, re.M)
    counts = {path: refused.count(path) for path in set(refused)}
    assert counts == CONSUMERS, checked.stdout
    assert checked.returncode == 1
