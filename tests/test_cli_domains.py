"""N2: with several domains installed, no command picks one silently.

A second, neutral domain (``library``) is installed beside the bundled example through
a fake entry point of the one plugin group; the environment's ``TOOLWEAVE_DOMAIN``
(set for the whole suite by ``conftest.py``) is unset here unless a test sets it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import run

pytestmark = pytest.mark.usefixtures("offline_cli")

OPEN = "Open 9-17 (library)."


class FakeEntryPoint:
    """An entry point of the ``toolweave.plugins`` group: ``load()`` gives the plugin."""

    dist = None

    def __init__(self, name: str, loader: Any) -> None:
        self.name, self.value, self._loader = name, f"plugin_pkg:{name}", loader

    def load(self) -> Any:
        return self._loader


def _library_bundle() -> Any:
    from support import make_tool

    from toolweave import Domain, ToolResult

    hours = make_tool(
        "opening_hours",
        domain="library",
        routing="opening_hours: true when the user asks when the library is open.",
        result=lambda name, ctx: ToolResult.as_answer(name, OPEN),
    )
    return Domain(name="library"), [hours]


def _install(monkeypatch: pytest.MonkeyPatch, *, korhaz: bool = True) -> None:
    """The ``library`` plugin installed, beside the bundled example when ``korhaz``."""
    import toolweave.domains as domains
    from toolweave import Plugin
    from toolweave_korhaz.plugin import plugin as korhaz_plugin

    library = FakeEntryPoint(
        "library", lambda: Plugin(name="library", domains={"library": _library_bundle})
    )
    points = [library, FakeEntryPoint("korhaz", korhaz_plugin)] if korhaz else [library]
    monkeypatch.setattr(domains, "entry_points", lambda *, group: points)


@pytest.fixture
def two_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    """``korhaz`` and ``library`` installed, no default configured."""
    monkeypatch.delenv("TOOLWEAVE_DOMAIN", raising=False)
    _install(monkeypatch)


def _the_choice_error(err: str, names: str = "korhaz, library") -> None:
    assert err.startswith("toolweave: error: "), err
    assert err.count("\n") == 1, err
    assert f"({names}) and none was named" in err
    assert "--domain NAME" in err
    assert "TOOLWEAVE_DOMAIN=NAME" in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("two_domains")
@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "When is the library open?"],
        ["ask", "--json", "When is the library open?"],
        ["ask", "--thread", "n2-thread", "When is the library open?"],
        ["chat", "--thread", "n2-chat"],
        ["tools"],
        ["eval"],
    ],
)
def test_N2_several_domains_and_none_named_is_a_usage_error_listing_them(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    _the_choice_error(err)
    if "--thread" in argv:  # nothing was run, nothing stored
        thread = argv[argv.index("--thread") + 1]
        assert run(capsys, "explain", thread)[0] == 2


@pytest.mark.usefixtures("two_domains")
def test_N2_the_library_api_names_no_default_either() -> None:
    from toolweave.domains import DomainNotChosenError, default_domain, load_domain
    from toolweave.state.errors import UnknownDomainError

    for call in (default_domain, load_domain):
        with pytest.raises(DomainNotChosenError, match=r"\(korhaz, library\)"):
            call()
    assert issubclass(DomainNotChosenError, UnknownDomainError)  # exit code 2 (X1)
    assert load_domain("library")[0].name == "library"


@pytest.mark.usefixtures("two_domains")
def test_N2_the_option_and_then_TOOLWEAVE_DOMAIN_name_the_domain(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, "ask", "--domain", "library", "--json", "When are you open?")
    assert code == 0, err
    assert json.loads(out)["answer"] == OPEN

    monkeypatch.setenv("TOOLWEAVE_DOMAIN", "library")
    code, out, err = run(capsys, "ask", "--json", "When are you open?")
    assert code == 0, err
    assert json.loads(out)["answer"] == OPEN
    code, out, _ = run(capsys, "tools")
    assert out.startswith("domain library: 1 tools")
    code, out, _ = run(capsys, "tools", "--domain", "korhaz")  # the option wins
    assert out.startswith("domain korhaz: ")

    monkeypatch.setenv("TOOLWEAVE_DOMAIN", "atlas")
    code, out, err = run(capsys, "tools")
    assert (code, out) == (2, "")
    assert "unknown domain 'atlas'; known domains: korhaz, library" in err


def test_N2_the_only_installed_domain_is_the_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLWEAVE_DOMAIN", raising=False)
    _install(monkeypatch, korhaz=False)
    code, out, err = run(capsys, "ask", "--json", "When are you open?")
    assert code == 0, err
    assert json.loads(out)["answer"] == OPEN


def test_N2_ingested_documents_count_as_a_domain_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TOOLWEAVE_DOMAIN", raising=False)
    _install(monkeypatch, korhaz=False)
    manual = tmp_path / "manual.md"
    manual.write_text("# Returns\n\nBooks are returned at the front desk.\n", encoding="utf-8")
    assert run(capsys, "ingest", str(manual), "--domain", "manuals")[0] == 0
    code, out, err = run(capsys, "ask", "Where do I return books?")
    assert (code, out) == (2, "")
    _the_choice_error(err, "library, manuals")
    code, out, err = run(capsys, "ask", "--domain", "manuals", "Where do I return books?")
    assert code == 0, err
    assert "front desk" in out


def test_N2_the_help_says_where_the_default_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ask", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "$TOOLWEAVE_DOMAIN, else the only one installed" in flat


def test_N1_toolweave_domains_says_when_a_plugin_hides_documents_ingested_under_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plugin installed after its name's ingest: the documents were silently never read."""
    from toolweave.domains.documents import documents_path
    from toolweave.tools.search import SqliteDocumentStore

    data = tmp_path / "data"  # the offline_cli fixture's data directory
    path = documents_path("korhaz", data)
    path.parent.mkdir(parents=True, exist_ok=True)
    SqliteDocumentStore(str(path)).add_document("parking", "Parking is free.", name="Parking")
    code, out, err = run(capsys, "domains")
    assert code == 0
    assert out.split().count("korhaz") == 1
    assert "korhaz: the installed plugin's domain hides the documents ingested" in err
    assert "toolweave ingest DIR --domain korhaz-docs" in err
    path.unlink()
    code, _, err = run(capsys, "domains")
    assert "hides" not in err  # a name only the plugin uses: nothing to say
