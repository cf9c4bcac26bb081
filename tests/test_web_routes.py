"""The chat page's Starlette routes, without a browser (``toolweave.web``).

The page is served by the LangGraph server as a custom app; these tests drive
the routes in process with Starlette's test client.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from toolweave.state.documents import UniqueTextDocument, merge_documents
from toolweave.state.errors import ConfigurationError
from toolweave.web import ChatPage, ClientScript, chat_routes, create_app

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tests" / "web_tools"


def _config(html: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="toolweave-config">(.*?)</script>', html)
    assert match, html
    return dict(json.loads(match.group(1)))


def test_page_is_served_with_its_config_and_an_offline_only_policy() -> None:
    page = ChatPage(assistant_id="my_graph", title="My chat", client_tool_timeout_s=2.5)
    reply = TestClient(create_app(page)).get("/chat")
    assert reply.status_code == 200
    assert _config(reply.text) == {
        "assistantId": "my_graph",
        "apiUrl": "",
        "clientToolTimeoutMs": 2500,
        "title": "My chat",
        "pageUrl": "/chat",
        "clientTools": {},
        "lang": "",  # no language of its own: the browser's, else English (P4)
    }
    assert "<title>My chat</title>" in reply.text
    policy = reply.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self';" in policy  # no inline scripts, no CDN
    assert "http" not in policy  # nothing from another origin
    assert not re.search(r'(src|href)="(https?:)?//', reply.text)  # no external resource


STATIC = ROOT / "toolweave" / "web" / "static"


def _strings(html: str) -> dict[str, dict[str, str]]:
    pattern = r'<script type="application/json" id="toolweave-strings">(.*?)</script>'
    match = re.search(pattern, html)
    assert match, html
    return dict(json.loads(match.group(1)))


def test_P4_the_pages_own_strings_exist_in_english_and_hungarian_for_every_key() -> None:
    tables = json.loads((STATIC / "strings.json").read_text(encoding="utf-8"))
    assert set(tables) >= {"en", "hu"}
    for lang, table in tables.items():
        assert set(table) == set(tables["en"]), lang  # no key missing in a language
        assert all(text.strip() for text in table.values()), lang
    differ = [k for k in tables["en"] if tables["en"][k] != tables["hu"][k]]
    assert len(differ) == len(tables["en"]) - 1  # translated, except "{tool}: {error}"
    script = (STATIC / "chat.js").read_text(encoding="utf-8")
    html = (STATIC / "chat.html").read_text(encoding="utf-8")
    calls = re.findall(
        r'\bt\((?:[\w.]+ \? )?"(\w+)"(?: : "(\w+)")?', script
    )  # t("key"), t(c ? "a" : "b")
    used = {key for call in calls for key in call if key}
    used |= set(re.findall(r'data-i18n(?:-[\w-]+)?="(\w+)"', html))
    assert used <= set(tables["en"])  # every key the page asks for has its strings
    assert len(used) >= 40
    for key, text in tables["en"].items():  # no English line written into the script itself
        if len(text) > 12 and "{" not in text:
            assert text not in script, key


def test_P4_the_server_passes_the_domain_language_and_the_string_tables() -> None:
    page = ChatPage(assistant_id="g", lang="hu", strings={"de": {"send": "Senden"}})
    html = TestClient(create_app(page)).get("/chat").text
    assert _config(html)["lang"] == "hu"
    assert html.startswith('<!doctype html>\n<html lang="hu">')  # until the script picks one
    tables = _strings(html)
    assert tables["hu"]["send"] == "Küldés"
    assert tables["de"] == {"send": "Senden"}  # a table of the application's, keys from English
    assert "Ehhez a csevegőoldalhoz JavaScript kell." in html  # <noscript> in the page's language
    plain = TestClient(create_app(ChatPage(assistant_id="g"))).get("/chat").text
    assert '<html lang="en">' in plain
    assert "This chat page needs JavaScript." in plain


def test_P4_the_hospital_page_falls_back_to_the_domains_language() -> None:
    from toolweave_korhaz import korhaz_domain
    from toolweave_korhaz.app import PAGE

    assert PAGE.lang == korhaz_domain().default_language == "hu"


def test_page_title_cannot_break_out_of_the_config_block() -> None:
    evil = "</script><script>alert(1)</script>"
    html = TestClient(create_app(ChatPage(assistant_id="g", title=evil))).get("/chat").text
    assert "<script>alert(1)" not in html
    assert _config(html)["title"] == evil  # still the exact text for the page's script


def test_static_files_are_served_and_nothing_outside_them() -> None:
    client = TestClient(create_app(ChatPage(assistant_id="g")))
    for name in ("chat.js", "aitools.js", "chat.css"):
        reply = client.get(f"/chat/static/{name}")
        assert reply.status_code == 200, name
    assert "AiTools" in client.get("/chat/static/aitools.js").text
    assert client.get("/chat/static/../page.py").status_code == 404
    assert client.get("/chat/static/%2e%2e/page.py").status_code == 404


def test_W7_each_client_script_is_its_own_file_in_its_own_guarded_scope() -> None:
    scripts = [
        ClientScript.from_file("fill_appointment_form", TOOLS / "fill_appointment_form.js"),
        ClientScript.from_file("slow_echo", TOOLS / "slow_echo.js"),
    ]
    client = TestClient(create_app(ChatPage(assistant_id="g", client_scripts=scripts)))
    html = client.get("/chat").text
    tags = re.findall(r'<script src="(/chat/tools/[^"]+)" data-tool="([^"]+)" defer>', html)
    assert tags == [(f"/chat/tools/{s.tool_id}.js", s.tool_id) for s in scripts]  # in order
    assert html.index("aitools.js") < html.index("/chat/tools/") < html.index("chat.js")
    assert _config(html)["clientTools"] == {  # id -> title (none here: the id)
        "fill_appointment_form": "fill_appointment_form",
        "slow_echo": "slow_echo",
    }
    for script in scripts:
        reply = client.get(f"/chat/tools/{script.tool_id}.js")
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/javascript")
        assert script.source in reply.text
        assert f'window.AiTools.failed("{script.tool_id}", err)' in reply.text
        other = next(s for s in scripts if s is not script)
        assert other.source not in reply.text  # one script, one file
    assert client.get("/chat/tools.js").status_code == 404  # no joined file any more
    assert client.get("/chat/tools/nope.js").status_code == 404


def test_W7_a_failed_client_script_reported_by_the_page_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = ChatPage(assistant_id="g", client_scripts=[ClientScript("broken", "AiTools.x(")])
    client = TestClient(create_app(page))
    with caplog.at_level("WARNING", logger="toolweave.web.page"):
        reply = client.post(
            "/chat/tools/failed", json={"tool_id": "broken", "error": "Unexpected token ')'"}
        )
    assert reply.status_code == 204
    assert "client script of tool 'broken' failed in the page: Unexpected token ')'" in (
        caplog.text
    )
    for bad in ({"tool_id": "not_a_tool", "error": "x"}, "no json"):
        kwargs = {"json": bad} if isinstance(bad, dict) else {"content": bad}
        assert client.post("/chat/tools/failed", **kwargs).status_code == 400  # type: ignore[arg-type]


def test_W7_a_page_without_client_scripts_loads_none() -> None:
    html = TestClient(create_app(ChatPage(assistant_id="g"))).get("/chat").text
    assert "/chat/tools/" not in html
    assert _config(html)["clientTools"] == {}


def test_page_under_a_mount_prefix_points_its_assets_and_api_there() -> None:
    app = Starlette(routes=[Mount("/lg", routes=chat_routes(ChatPage(assistant_id="g")))])
    html = TestClient(app).get("/lg/chat").text
    assert 'src="/lg/chat/static/chat.js"' in html
    assert _config(html)["pageUrl"] == "/lg/chat"
    assert _config(html)["apiUrl"] == "/lg"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"assistant_id": " "}, "assistant_id"),
        ({"assistant_id": "g", "client_tool_timeout_s": 0}, "client_tool_timeout_s"),
        (
            {
                "assistant_id": "g",
                "client_scripts": [ClientScript("x", "1"), ClientScript("x", "2")],
            },
            "names a tool twice",
        ),
    ],
)
def test_bad_page_configuration_is_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ChatPage(**kwargs)  # type: ignore[arg-type]


def test_missing_client_script_file_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="client script of tool 'x' cannot be read"):
        ClientScript.from_file("x", TOOLS / "missing.js")


def test_bad_page_path_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="must start and not end"):
        chat_routes(ChatPage(assistant_id="g"), path="/chat/")


def test_hospital_page_has_the_appointment_form_the_client_tool_fills() -> None:
    from toolweave_korhaz.app import app

    html = TestClient(app).get("/chat").text
    assert _config(html)["assistantId"] == "korhaz"
    assert 'id="appointment-department"' in html
    assert 'id="appointment-day"' in html
    assert 'for="appointment-department"' in html  # labelled fields
    assert '<option value="Kardiológia">' in html


def test_W3_hospital_page_loads_the_client_and_all_scope_scripts_only() -> None:
    from toolweave_korhaz.app import app

    client = TestClient(app)
    assert _config(client.get("/chat").text)["clientTools"] == {
        "fill_appointment_form": "Appointment form",  # CLIENT, said by its name (P4)
        "format_date": "Date for your locale",  # ALL
    }  # SERVER: check_appointment_slots never in the page
    assert (
        'AiTools.register("fill_appointment_form"'
        in client.get("/chat/tools/fill_appointment_form.js").text
    )
    assert 'AiTools.register("format_date"' in client.get("/chat/tools/format_date.js").text
    assert client.get("/chat/tools/check_appointment_slots.js").status_code == 404


def test_importing_toolweave_does_not_import_starlette() -> None:
    code = (
        "import sys, toolweave, toolweave_korhaz, toolweave_korhaz.studio; "
        "print('starlette' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False", out.stderr


def test_R6_documents_merge_reads_the_plain_dicts_of_the_server_state_api() -> None:
    # GET /threads/{id}/state replays the documents channel with models as dicts.
    stored = UniqueTextDocument(
        document_id="d", page=1, sentence_number=1, text="a", sentence_score=1
    )
    as_dict = stored.model_dump() | {"sentence_score": 2.0}
    merged = merge_documents([stored], [as_dict])
    assert merged == [stored.model_copy(update={"sentence_score": 2.0})]
    assert all(isinstance(doc, UniqueTextDocument) for doc in merged)
