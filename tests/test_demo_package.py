"""The hospital demo is a package of its own (issue 16 item 5, W5).

``toolweave``'s wheel holds no hospital code or data and names no demo symbol in its
public API; the demo (``examples/korhaz``, distribution ``toolweave-korhaz``) is found
through the one plugin group; with no domain installed the CLI says how to get one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "korhaz"
SOURCES = ("pyproject.toml", "README.md", "toolweave", "graph", "tools", "llm", "coordinators")
SOURCES += ("state", "examples")  # examples/ too: the library's build must not pick it up
BUILD_TIMEOUT = 300


def _wheel_names(project: Path, out: Path) -> list[str]:
    """Build ``project``'s wheel offline (the installed setuptools) and list its files."""
    out.mkdir()
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    wheel = out / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _copy(names: tuple[str, ...], source: Path, dest: Path) -> Path:
    """The build's inputs, copied so the build writes nothing into the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "*.pyc")
    dest.mkdir()
    for name in names:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=ignore)
        else:
            shutil.copy2(path, dest / name)
    return dest


def test_W5_the_library_wheel_holds_no_demo_file(tmp_path: Path) -> None:
    src = _copy(SOURCES, ROOT, tmp_path / "src")
    names = _wheel_names(src, tmp_path / "dist")
    assert "toolweave/graph/__init__.py" in names  # the library is there
    assert "toolweave/web/static/chat.js" in names  # and its package data
    demo = [n for n in names if "korhaz" in n.lower() or n.endswith((".md", ".jsonl"))]
    assert demo == []
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(next((tmp_path / "dist").glob("*.whl"))) as archive:
        declared = archive.read(entry_points).decode()
    assert "toolweave.domains" not in declared
    assert "toolweave.plugins" not in declared  # the library ships no plugin


def test_W5_the_demo_wheel_holds_its_data_golden_file_and_scripts(tmp_path: Path) -> None:
    src = _copy(("pyproject.toml", "README.md", "toolweave_korhaz"), DEMO, tmp_path / "src")
    names = set(_wheel_names(src, tmp_path / "dist"))
    package = {p.relative_to(DEMO).as_posix() for p in (DEMO / "toolweave_korhaz").rglob("*")}
    shipped = {n for n in package if not n.endswith(".pyc") and "__pycache__" not in n}
    files = {n for n in shipped if (DEMO / n).is_file()}
    assert files <= names, sorted(files - names)
    assert {
        "toolweave_korhaz/golden.jsonl",
        "toolweave_korhaz/py.typed",
        "toolweave_korhaz/data/doctors.json",
        "toolweave_korhaz/js/fill_appointment_form.js",
    } <= names


def test_W5_one_plugin_group_declares_the_demo() -> None:
    library = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    demo = tomllib.loads((DEMO / "pyproject.toml").read_text(encoding="utf-8"))
    assert library["project"].get("entry-points", {}) == {}
    assert demo["project"]["name"] == "toolweave-korhaz"
    assert demo["project"]["entry-points"] == {
        "toolweave.plugins": {"korhaz": "toolweave_korhaz.plugin:plugin"}
    }
    assert not any("korhaz" in p for p in library["tool"]["setuptools"]["packages"])
    assert not any("korhaz" in p for p in library["tool"]["setuptools"]["package-data"])


def test_W5_no_demo_name_in_the_public_api() -> None:
    import toolweave
    import toolweave_korhaz

    demo_names = set(toolweave_korhaz.__all__)
    assert demo_names, "the demo package lists its names"
    assert demo_names.isdisjoint(toolweave.__all__)
    for name in toolweave.__all__:
        module = getattr(getattr(toolweave, name), "__module__", "") or ""
        assert not module.startswith("toolweave_korhaz"), name
    public = (ROOT / "toolweave" / "_public.py").read_text(encoding="utf-8")
    assert "korhaz" not in public


def test_W5_the_demo_is_found_as_an_installed_plugin() -> None:
    from toolweave import discover_plugins
    from toolweave.domains import available_domains, golden_file, installed_domains

    found = {p.plugin.name: p.distribution for p in discover_plugins()}
    assert found.get("korhaz") == "toolweave-korhaz"
    assert "korhaz" in installed_domains()
    assert "korhaz" in available_domains()
    golden = golden_file("korhaz")
    assert golden is not None
    assert golden.name == "golden.jsonl"
    assert golden.is_relative_to(DEMO)
    assert json.loads(golden.read_text(encoding="utf-8").splitlines()[0])


@pytest.fixture
def no_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Simulate ``pip install toolweave`` alone: no plugin, no ingested documents."""
    import toolweave.domains as domains

    monkeypatch.setattr(domains, "entry_points", lambda *, group: [])
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TOOLWEAVE_DATABASE_URL", raising=False)
    monkeypatch.delenv("TOOLWEAVE_DOMAIN", raising=False)  # no default named either (N2)
    return tmp_path


def _one_line_hint(err: str) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith("toolweave: error: ")
    assert "no domain is installed" in err
    assert "toolweave ingest PATH --domain NAME" in err
    assert "pip install -e examples/<name>" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Mikor van rendelés a kardiológián?"],
        ["ask", "--json", "When is visiting time?"],
        ["tools"],
        ["ask", "--domain", "korhaz", "hello"],
    ],
)
def test_X1_without_a_domain_the_cli_says_in_one_line_how_to_get_one(
    no_plugin: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from toolweave.cli import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    _one_line_hint(err)


def test_X1_without_a_domain_ingested_documents_are_the_default(
    no_plugin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolweave.cli import main
    from toolweave.domains import default_domain

    doc = no_plugin / "hours.md"
    doc.write_text("# Opening hours\n\nThe reading room is open from 9 to 17.\n", encoding="utf-8")
    assert main(["ingest", str(doc), "--domain", "library"]) == 0
    assert default_domain() == "library"
    capsys.readouterr()
    assert main(["ask", "--json", "When is the reading room open?"]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    assert "9" in answer


def test_X1_a_broken_plugin_is_named_rather_than_no_domain(
    monkeypatch: pytest.MonkeyPatch, no_plugin: Path
) -> None:
    import toolweave.domains as domains
    from toolweave.state.errors import ConfigurationError

    class Broken:
        name, value, dist = "clinic", "clinic_pkg:plugin", None

        def load(self) -> object:
            raise ImportError("no module named clinic_pkg")

    monkeypatch.setattr(domains, "entry_points", lambda *, group: [Broken()])
    with pytest.raises(ConfigurationError, match="clinic_pkg"):
        domains.load_domain()
    with pytest.raises(ConfigurationError, match="clinic_pkg"):
        domains.load_domain("clinic")
    assert domains.available_domains() == []
