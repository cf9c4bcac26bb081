"""S5, Q6 on the LangGraph server: a message sent while its first run still goes (double texting).

``langgraph dev`` serves ``tests/effects_server_graph.py``: ``count_up`` acts (one line
per call in a file; no deduplication by key), then the answer takes a few seconds. The
same message is sent again after the tool acted and before the run ended, with each of
the server's ``multitask_strategy`` values:

- ``enqueue`` (the server's default): the second run waits, then meets the sent-again
  rule (its run acted): one effect;
- ``reject``: the second run is refused ("Thread is already running a task"): one effect;
- ``interrupt``: the first run is stopped and kept; the second run's message is the
  stopped run's own question, so it finishes that run (Q5, S5): one effect;
- ``rollback``: the server deletes the first run and its checkpoints, then runs the
  second as if the first had never been. Its store stays: the execute step journaled the
  call there (keyed by the turn, not by message ids), so the second run finds it made and
  uses its result (S5, Q6): one effect, with or without a client-side message id.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dev_server import DevServer, langgraph_dev, repo_config
from effects_server_graph import EFFECTS_FILE

ROOT = Path(__file__).resolve().parents[1]
GRAPH = "effects"
WAIT_S = 60.0


@pytest.fixture(scope="module")
def effects_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("effects") / "effects.txt"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, effects_file: Path) -> Iterator[DevServer]:
    config = repo_config()
    config["graphs"] = {GRAPH: f"{ROOT / 'tests' / 'effects_server_graph.py'}:graph"}
    config.pop("http", None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EFFECTS_FILE, str(effects_file))
        with langgraph_dev(tmp_path_factory.mktemp("effects_server"), config) as running:
            yield running


def _effects(path: Path, question: str) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines() if line.endswith(question)]


def _wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT_S}s: {what}")
        time.sleep(0.2)


def _double_text(
    server: DevServer, effects_file: Path, strategy: str, message_id: str | None = None
) -> tuple[int, Any]:
    """The same message twice, the second once the first run acted; the effects it made."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server.url, api_key=None)
    question = f"Please count one up on the tally ({strategy}, {message_id})."
    sent: dict[str, str] = {"role": "human", "content": question}
    if message_id is not None:
        sent["id"] = message_id
    message = {"messages": [sent]}
    thread = client.threads.create()["thread_id"]
    first = client.runs.create(thread, GRAPH, input=message)
    _wait_for(lambda: len(_effects(effects_file, question)) >= 1, "the first run's effect")
    if strategy == "reject":
        with pytest.raises(httpx.HTTPStatusError, match="already running"):
            client.runs.create(thread, GRAPH, input=message, multitask_strategy=strategy)
        client.runs.join(thread, first["run_id"])
        return len(_effects(effects_file, question)), client.threads.get_state(thread)
    second = client.runs.create(thread, GRAPH, input=message, multitask_strategy=strategy)
    client.runs.join(thread, second["run_id"])
    if strategy == "enqueue":
        client.runs.join(thread, first["run_id"])
    state = client.threads.get_state(thread)
    return len(_effects(effects_file, question)), state


@pytest.mark.parametrize("strategy", ["enqueue", "interrupt", "reject"])
def test_S5_Q6_a_message_double_texted_after_its_tool_acted_acts_once(
    server: DevServer, effects_file: Path, strategy: str
) -> None:
    made, state = _double_text(server, effects_file, strategy)
    assert made == 1
    assert state["values"]["answer"] == "Counted one up."


@pytest.mark.parametrize("message_id", [None, "client-message-1"])
def test_S5_Q6_rollback_double_texting_deletes_what_says_the_tool_acted(
    server: DevServer, effects_file: Path, message_id: str | None
) -> None:
    """The checkpoints say nothing after a rollback; the server's store still does (S5, Q6)."""
    made, state = _double_text(server, effects_file, "rollback", message_id)
    assert made == 1
    assert state["values"]["answer"] == "Counted one up."
    kept = [e for e in state["values"]["ledger"] if e.get("verdict") == "kept, not run again"]
    assert len(kept) == 1
    assert "rolled back" in kept[0]["reason"]


def test_S5_Q6_a_replay_from_before_the_effect_through_the_server_does_not_act_again(
    server: DevServer, effects_file: Path
) -> None:
    """Studio's time travel over the API: a run from an earlier checkpoint, input ``None``."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server.url, api_key=None)
    question = "Please count one up on the tally (replay)."
    thread = client.threads.create()["thread_id"]
    message = {"messages": [{"role": "human", "content": question}]}
    client.runs.wait(thread, GRAPH, input=message)
    history = client.threads.get_history(thread, limit=50)
    before = next(state for state in history if state["next"] == ["execute"])
    checkpoint_id = before["checkpoint"]["checkpoint_id"]
    client.runs.wait(thread, GRAPH, input=None, checkpoint_id=checkpoint_id)
    assert len(_effects(effects_file, question)) == 1
    assert client.threads.get_state(thread)["values"]["answer"] == "Counted one up."
