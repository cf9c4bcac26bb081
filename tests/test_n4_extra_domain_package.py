"""N4: a domain package of one's own, installed beside the example, leaves the suite green.

A real distribution (a ``.dist-info`` with an entry point of ``toolweave.plugins``)
providing the domain ``atlas`` is put on the path, as ``pip install`` would: the
example domain is still found and asked (the suite names it through
``TOOLWEAVE_DOMAIN``, ``conftest.py``), and only without a name does the command line
ask which one (N2).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from cli_support import run

from toolweave.tools.plugins import PLUGIN_GROUP

pytestmark = pytest.mark.usefixtures("offline_cli")

ATLAS_ANSWER = "Every map is on the second floor."


@pytest.fixture
def atlas_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distribution ``tw-atlas`` with the domain ``atlas``, importable and discoverable."""
    site = tmp_path / "site"
    package = site / "tw_atlas"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            from toolweave import ChatbotTool, Domain, EmptyRequest, Plugin, ToolResult

            class Maps(ChatbotTool[EmptyRequest]):
                name = "map_room"
                domain = "atlas"
                executable_instruction = "map_room: true when the user asks where the maps are."

                def execute(self, request, ctx):
                    return ToolResult.as_answer(self.name, {ATLAS_ANSWER!r})

            def load():
                return Domain(name="atlas"), [Maps()]

            plugin = Plugin(name="atlas", domains={{"atlas": load}})
            """
        ),
        encoding="utf-8",
    )
    info = site / "tw_atlas-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tw-atlas\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\natlas = tw_atlas:plugin\n")
    monkeypatch.syspath_prepend(str(site))


@pytest.mark.usefixtures("atlas_installed")
def test_N4_the_example_domain_is_still_found_and_asked_beside_another_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolweave import discover_plugins
    from toolweave.domains import installed_domains

    assert {"korhaz", "atlas"} <= set(installed_domains())
    found = {p.plugin.name: p.distribution for p in discover_plugins()}
    assert found.get("korhaz") == "toolweave-korhaz"
    assert found.get("atlas") == "tw-atlas"
    code, out, err = run(capsys, "ask", "--json", "Mikor van rendelés a kardiológián?")
    assert code == 0, err
    assert "9:00-13:00" in json.loads(out)["answer"]  # the example's answer, as without atlas
    code, out, err = run(capsys, "ask", "--domain", "atlas", "--json", "Where are the maps?")
    assert code == 0, err
    assert json.loads(out)["answer"] == ATLAS_ANSWER


@pytest.mark.usefixtures("atlas_installed")
def test_N4_N2_without_a_name_the_command_line_asks_which(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLWEAVE_DOMAIN")
    code, out, err = run(capsys, "ask", "Where are the maps?")
    assert (code, out) == (2, "")
    listed = re.search(r"\d+ domains are installed \(([^)]*)\) and none was named", err)
    assert listed is not None, err
    assert {"atlas", "korhaz"} <= set(listed.group(1).split(", "))  # and any other installed
