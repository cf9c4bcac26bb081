"""``langgraph dev`` serves ``langgraph.json``'s graph; the SDK runs and streams it (offline).

The real dev server comes from the session fixture ``server_url`` (``conftest.py``):
a free loopback port, no OpenAI key, so the offline model answers, always stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolweave_korhaz.examples import EXAMPLE_QUESTIONS

pytestmark = [pytest.mark.slow, pytest.mark.network]

ROOT = Path(__file__).resolve().parents[1]
PHASE_NODES = ("normalize", "route", "execute", "answer")


def test_langgraph_json_points_at_a_checkpointer_free_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == [".", "./examples/korhaz"]  # the library, the demo
    assert config["env"]["LANGSMITH_TRACING"] == "false"
    spec = config["graphs"]["korhaz"]
    assert (spec["path"] if isinstance(spec, dict) else spec) == "toolweave_korhaz.studio:graph"
    from toolweave_korhaz.studio import graph

    assert graph.checkpointer is None  # the dev server refuses a graph with its own


def test_server_answers_an_example_question_offline(server_url: str) -> None:
    from langgraph_sdk import get_sync_client

    example = EXAMPLE_QUESTIONS[0]
    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()
    result = client.runs.wait(
        thread["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": example.question}]},
    )
    assert isinstance(result, dict), result
    for expected in example.expected_substrings:
        assert expected in result["answer"]
    for tool in example.expected_tools:
        assert f"1:{tool}" in result["activated"]
    assert result["messages"][-1]["type"] == "ai"


def test_P2_server_streams_phase_steps_and_progress_events(server_url: str) -> None:
    from langgraph_sdk import get_sync_client

    example = next(q for q in EXAMPLE_QUESTIONS if "department_info" in q.expected_tools)
    client = get_sync_client(url=server_url, api_key=None)
    thread = client.threads.create()
    steps: list[str] = []
    custom: list[dict[str, object]] = []
    for part in client.runs.stream(
        thread["thread_id"],
        "korhaz",
        input={"messages": [{"role": "human", "content": example.question}]},
        stream_mode=["updates", "custom"],
    ):
        if part.event == "updates":
            steps.extend(part.data)
        elif part.event == "custom":
            custom.append(part.data)
        assert part.event != "error", part.data
    for node in PHASE_NODES:
        assert node in steps, steps
    assert steps.index("normalize") < steps.index("route") < steps.index("execute")
    assert steps[-1] == "answer"
    assert steps.count("execute") >= 2  # one tool per step: department_info, korhaz_search
    routed = [e for e in custom if e.get("type") == "routed" and e.get("task_no") == "1"]
    assert routed
    assert "department_info" in routed[0]["tools"]
    progress = [e["text"] for e in custom if e.get("type") == "tool_progress"]
    assert "TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA" in progress
