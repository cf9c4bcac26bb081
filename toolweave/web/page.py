"""The chat page as Starlette routes: the HTML, its static files, the tools' client scripts (W7)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from toolweave.graph.validation import parse_user_data
from toolweave.pauses import page_pauses
from toolweave.state.errors import ConfigurationError
from toolweave.tools.ai.orchestration import ai_definitions, client_scripts

logger = logging.getLogger(__name__)

STATIC_DIR = Path(str(files("toolweave.web") / "static"))
"""The page's static files, shipped as package data."""

CONFIG_SLOT = "<!--toolweave:config-->"
PANEL_SLOT = "<!--toolweave:panel-->"
TITLE_SLOT = "<!--toolweave:title-->"
TOOLS_SLOT = "<!--toolweave:tools-->"
NOSCRIPT_SLOT = "<!--toolweave:noscript-->"
FALLBACK_LANG = "en"
"""The language of the page's own strings when neither the browser's nor the page's has any."""
MAX_REPORT_CHARS = 500
"""How much of a client script's failure the server logs (the page sends it)."""
ASSETS_SLOT = "{{assets}}"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'{connect}; frame-ancestors 'self'; base-uri 'none'; form-action 'self'"
)
"""Everything comes from the server itself: no CDN, no external font, works offline."""

DEFAULT_CLIENT_TOOL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ClientScript:
    """The browser implementation of one AI system tool (W4): ``AiTools.register(tool_id, ...)``."""

    tool_id: str
    source: str
    label: str = ""
    """Where the script came from (a file name), shown in a comment of its served file."""
    title: str = ""
    """What people call the tool (the AI tool's ``name``); the page's progress lines say
    it instead of the id (P4). Empty: the id."""

    @classmethod
    def from_file(cls, tool_id: str, path: Path) -> ClientScript:
        """The script in ``path``; a missing or non-UTF-8 file is a ConfigurationError."""
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(
                f"client script of tool {tool_id!r} cannot be read: {path} ({exc})"
            ) from exc
        return cls(tool_id=tool_id, source=source, label=path.name)


def client_scripts_for(tools: Iterable[object]) -> list[ClientScript]:
    """The client scripts of the AI system tools among ``tools`` (W4; SERVER scope: none)."""
    titles = {definition.id: definition.name for definition in ai_definitions(tools)}
    return [
        ClientScript(tool_id, source, title=titles.get(tool_id, ""))
        for tool_id, source in client_scripts(tools).items()
    ]


@dataclass(frozen=True)
class ChatPage:
    """What one chat page shows and talks to.

    Attributes:
        assistant_id: The graph id of ``langgraph.json`` (or an assistant id) the page runs;
            a ``?assistant=`` query parameter overrides it.
        title: The page title and heading.
        panel_html: Trusted HTML shown beside the chat; a form in it with
            ``data-chat-template="...{field}..."`` sends the template, filled, as a message.
        client_scripts: The client implementations the page loads.
        client_tool_timeout_s: How long the page waits for one client tool call.
        api_url: Where the LangGraph API is; empty: the server that serves the page.
        lang: The domain's language: the page's own strings are in the browser's language
            when toolweave has them, else in this one, else in English.
        strings: More string tables, by language then key (keys: ``static/strings.json``).
        user_data: ``lambda request: {...}`` giving the person's data for the gates and tools
            (T4, N3), sent as every run's context: never checkpointed, redacted (X4), the page
            never cached; ``None`` for none.
    """

    assistant_id: str
    title: str = "toolweave chat"
    panel_html: str = ""
    client_scripts: Sequence[ClientScript] = field(default_factory=tuple)
    client_tool_timeout_s: float = DEFAULT_CLIENT_TOOL_TIMEOUT_S
    api_url: str = ""
    lang: str = ""
    strings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    user_data: Callable[[Request], Mapping[str, Any] | None] | None = None

    def __post_init__(self) -> None:
        if not self.assistant_id.strip():
            raise ConfigurationError("ChatPage.assistant_id must not be empty")
        if not 0 < self.client_tool_timeout_s <= 3600:
            raise ConfigurationError(
                "ChatPage.client_tool_timeout_s must be between 0 and 3600 seconds, "
                f"got {self.client_tool_timeout_s}"
            )
        ids = [script.tool_id for script in self.client_scripts]
        if len(set(ids)) != len(ids):
            raise ConfigurationError(f"ChatPage.client_scripts names a tool twice: {ids}")


def _json_for_html(value: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``</script>``)."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def _template() -> str:
    return (STATIC_DIR / "chat.html").read_text(encoding="utf-8")


@cache
def _builtin_strings() -> dict[str, dict[str, str]]:
    tables: dict[str, dict[str, str]] = json.loads(
        (STATIC_DIR / "strings.json").read_text(encoding="utf-8")
    )
    return tables


def render_page(
    page: ChatPage, *, base: str, api_url: str, user_data: Mapping[str, Any] | None = None
) -> str:
    """The page's HTML with its config, title and panel filled in; bad ``user_data``: X5 error."""
    config = {
        "assistantId": page.assistant_id, "apiUrl": api_url,
        "clientToolTimeoutMs": round(page.client_tool_timeout_s * 1000), "title": page.title,
        "pageUrl": base,
        "clientTools": {s.tool_id: s.title or s.tool_id for s in page.client_scripts},
        "lang": page.lang,
    }  # fmt: skip
    if user_data:
        config["userData"] = parse_user_data(user_data)
    block = f'<script type="application/json" id="toolweave-config">{_json_for_html(config)}'
    # how the page answers each pause kind (Q7): "question" or "client_tools"
    kinds = _json_for_html(page_pauses())
    pauses = f'<script type="application/json" id="toolweave-pauses">{kinds}'
    tables = {lang: dict(table) for lang, table in _builtin_strings().items()}
    for key, table in page.strings.items():  # the page's own strings over toolweave's
        tables.setdefault(key, {}).update(table)
    strings = f'<script type="application/json" id="toolweave-strings">{_json_for_html(tables)}'
    lang = page.lang if page.lang in tables else FALLBACK_LANG  # until the script picks one
    return (
        _template()
        .replace(CONFIG_SLOT, block + "</script>" + pauses + "</script>" + strings + "</script>")
        .replace(NOSCRIPT_SLOT, escape(tables[lang].get("noscript") or tables["en"]["noscript"]))
        .replace(TITLE_SLOT, escape(page.title))
        .replace(PANEL_SLOT, page.panel_html)
        .replace(TOOLS_SLOT, "".join(_script_tag(base, s.tool_id) for s in page.client_scripts))
        .replace(ASSETS_SLOT, escape(base))
        .replace('lang="en"', f'lang="{escape(lang)}"', 1)
    )


def _script_tag(base: str, tool_id: str) -> str:
    src, tool = escape(f"{base}/tools/{quote(tool_id, safe='')}.js"), escape(tool_id)
    return f'\n  <script src="{src}" data-tool="{tool}" defer></script>'


def tool_script(script: ClientScript) -> str:
    """One tool's client script in a guarded scope of its own file (W7)."""
    label = json.dumps(script.tool_id)
    origin = script.label.replace("*/", "* /")
    return (
        f"/* toolweave: the client script of tool {label}{': ' + origin if origin else ''}"
        f" (W7) */\n(function () {{\n  try {{\n{script.source}\n  }} catch (err) {{\n"
        f"    window.AiTools.failed({label}, err);\n  }}\n}})();\n"
    )


def chat_routes(page: ChatPage, *, path: str = "/chat") -> list[BaseRoute]:
    """The page's routes, to add to any Starlette or FastAPI app.

    ``GET <path>`` is the page, ``<path>/static/...`` its files, ``GET <path>/tools/<id>.js``
    each client script and ``POST <path>/tools/failed`` where the page reports one that failed (W7).
    """
    if not path.startswith("/") or path.endswith("/"):
        raise ConfigurationError(f"the chat page path must start and not end with '/': {path!r}")
    connect = f" {page.api_url}" if page.api_url else ""
    headers = {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY.format(connect=connect),
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
        "Cache-Control": "no-cache",
    }  # fmt: skip
    scripts = {script.tool_id: tool_script(script) for script in page.client_scripts}
    static = StaticFiles(directory=STATIC_DIR, follow_symlink=False)

    async def chat(request: Request) -> Response:
        root = str(request.scope.get("root_path", "")).rstrip("/")  # under the server's mount
        data = None if page.user_data is None else page.user_data(request)
        html = render_page(page, base=root + path, api_url=page.api_url or root, user_data=data)
        private = {**headers, "Cache-Control": "no-store"} if data else headers
        return HTMLResponse(html, headers=private)

    async def tool(request: Request) -> Response:
        source = scripts.get(str(request.path_params["tool_id"]))
        if source is None:
            return Response("/* no such client script */", status_code=404, headers=headers)
        return Response(source, media_type="text/javascript", headers=headers)

    async def failed(request: Request) -> Response:
        try:
            report = await request.json()
        except ValueError:
            report = None
        tool_id = report.get("tool_id") if isinstance(report, dict) else None
        if tool_id not in scripts:
            return JSONResponse({"detail": "not a client tool of this page"}, status_code=400)
        error = str(report.get("error", ""))[:MAX_REPORT_CHARS] if report else ""
        logger.warning("client script of tool %r failed in the page: %s", tool_id, error)
        return Response(status_code=204, headers=headers)

    return [
        Route(path, chat, methods=["GET"], name="toolweave-chat"),
        Route(f"{path}/tools/failed", failed, methods=["POST"], name="toolweave-chat-failed"),
        Route(f"{path}/tools/{{tool_id}}.js", tool, methods=["GET"], name="toolweave-chat-tool"),
        Mount(f"{path}/static", app=static, name="toolweave-chat-static"),
    ]


def create_app(page: ChatPage, *, path: str = "/chat") -> Starlette:
    """A Starlette app serving ``page`` at ``path``, for ``langgraph.json``'s ``http.app``.

    Example:
        ``"http": {"app": "my_pkg.web:app"}`` with ``app = create_app(ChatPage(assistant_id="g"))``.
    """
    return Starlette(routes=chat_routes(page, path=path))
