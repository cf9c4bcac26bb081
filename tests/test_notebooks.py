"""The notebooks run top to bottom without errors, on a kernel of this very interpreter."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.network]  # the kernel talks over 127.0.0.1

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "toolweave-test"
CELL_TIMEOUT = 120


@pytest.fixture
def kernel_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kernelspec for ``sys.executable``, found first on ``JUPYTER_PATH``.

    So the notebook runs in the venv under test, whatever kernels the machine has.
    """
    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "toolweave tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    for name in [n for n in os.environ if n.startswith("OPENAI_")]:
        monkeypatch.delenv(name)
    return KERNEL


EXPECTED = {
    "01_quickstart.ipynb": (
        "9:00-16:00",  # Friday's hours, from the offline model
        "TOOL_PROGRESS:BOOK_SEARCH:SEARCHING",  # progress events on the custom stream
        "shelf M-12",  # answer tokens on the messages stream
        "routing",  # the ledger
        "10:00-14:00",  # the follow-up on a thread, and the scripted assistant
        "```mermaid",  # the diagram
    ),
    "02_task_tree.ipynb": (
        "Cheapest: Kettle K2: 39 EUR",  # the coordinator's answer from its subtasks (B4)
        "['1.1:product_lookup', '1.2:product_lookup', '1.3:product_lookup', '1:compare']",
        "1.3  What does the blender cost?  forced: ['product_lookup']",  # the tree
        "coordinator_run",  # the ledger
    ),
    "03_clarification.ipynb": (
        "Which department",  # the question (Q1)
        "Consultation hours of Cardiology: Monday-Thursday 9:00-13:00.",  # the fresh process (Q3)
        "NothingPendingError",  # a second reply writes nothing
    ),
    "05_ai_tools.ipynb": (
        '"type": "client_tool_calls"',  # the pause's payload (W3)
        "Dzień dobry, Kraków!",  # the Python client's answer became context (W4, W6)
        "CLIENT scope and the client announced no implementation",  # never on the server
    ),
    "06_routing_eval.ipynb": (
        "exact-set accuracy",  # the table
        "| tool | precision | recall |",
    ),
    "04_deep_fallback.ipynb": (
        "1.1:korhaz_neighbor_search",  # the cheap step answered (D6)
        "1.2:korhaz_context_search",  # the conditional full search ran for the fee (D3)
        "6 000 Ft",
        "| gatekeeper |",  # the ledger as a table
        "['sufficient']",
    ),
}


def test_there_is_a_quickstart() -> None:
    assert ROOT / "notebooks" / "01_quickstart.ipynb" in NOTEBOOKS


def _outputs_text(notebook: nbformat.NotebookNode) -> str:
    """Every output as text, streamed prints joined back as they were written."""
    return "".join(
        output.get("text", "") or json.dumps(output.get("data", {}))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_errors(path: Path, kernel_name: str, tmp_path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=kernel_name,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert errors == []
    text = _outputs_text(notebook)
    for expected in EXPECTED.get(path.name, ()):
        assert expected in text, expected
