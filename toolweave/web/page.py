"""The chat page as Starlette routes: the HTML, its static files and the tools' client scripts.

The page is plain static HTML, CSS and JavaScript shipped in this package (no build
step). The server fills one JSON config block into the HTML (assistant id, where
the LangGraph API is, the client-tool time limit) and serves the client scripts
of the AI system tools the page should run, concatenated, at ``<path>/tools.js``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from toolweave.pauses import page_pauses
from toolweave.state.errors import ConfigurationError
from toolweave.tools.ai.orchestration import client_scripts

STATIC_DIR = Path(str(files("toolweave.web") / "static"))
"""The page's static files, shipped as package data."""

CONFIG_SLOT = "<!--toolweave:config-->"
PANEL_SLOT = "<!--toolweave:panel-->"
TITLE_SLOT = "<!--toolweave:title-->"
ASSETS_SLOT = "{{assets}}"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'{connect}; frame-ancestors 'self'; base-uri 'none'; form-action 'self'"
)
"""Everything comes from the server itself: no CDN, no external font, works offline."""

DEFAULT_CLIENT_TOOL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ClientScript:
    """The browser implementation of one AI system tool (W4): JavaScript source.

    The script calls ``AiTools.register(tool_id, {execute(input) {...}})``.
    """

    tool_id: str
    """The id of the tool the script registers."""
    source: str
    """The script's text."""
    label: str = ""
    """Where the script came from (a file name), shown in a comment of ``tools.js``."""

    @classmethod
    def from_file(cls, tool_id: str, path: Path) -> ClientScript:
        """The script in ``path``.

        Raises:
            ConfigurationError: The file does not exist or cannot be read as UTF-8.
        """
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(
                f"client script of tool {tool_id!r} cannot be read: {path} ({exc})"
            ) from exc
        return cls(tool_id=tool_id, source=source, label=path.name)


def client_scripts_for(tools: Iterable[object]) -> list[ClientScript]:
    """The client scripts of the AI system tools among a domain's ``tools`` (W4).

    The page loads them from ``<path>/tools.js``; tools without a script (SERVER
    scope) are left out.
    """
    return [ClientScript(tool_id, source) for tool_id, source in client_scripts(tools).items()]


@dataclass(frozen=True)
class ChatPage:
    """What one chat page shows and talks to.

    Attributes:
        assistant_id: The graph id of ``langgraph.json`` (or an assistant id) the
            page runs; a ``?assistant=`` query parameter overrides it.
        title: The page title and heading.
        panel_html: Trusted HTML shown beside the chat (e.g. a form that client
            tools fill); a ``<form data-chat-template="...{field}...">`` in it sends
            the template, filled from the form's named fields, as a chat message.
        client_scripts: The client implementations the page loads.
        client_tool_timeout_s: How long the page waits for one client tool call
            before it answers the server with an error result.
        api_url: Where the LangGraph API is; empty means the server that serves
            the page (the same address, under the same mount prefix).
        lang: The page's language (the ``lang`` attribute of ``<html>``).
    """

    assistant_id: str
    title: str = "toolweave chat"
    panel_html: str = ""
    client_scripts: Sequence[ClientScript] = field(default_factory=tuple)
    client_tool_timeout_s: float = DEFAULT_CLIENT_TOOL_TIMEOUT_S
    api_url: str = ""
    lang: str = "en"

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


def _base(request: Request, path: str) -> str:
    """The page's own path, under whatever prefix the server mounts it at."""
    return str(request.scope.get("root_path", "")).rstrip("/") + path


@cache
def _template() -> str:
    return (STATIC_DIR / "chat.html").read_text(encoding="utf-8")


def render_page(page: ChatPage, *, base: str, api_url: str) -> str:
    """The page's HTML with its config, title and panel filled in.

    Args:
        page: What the page shows and talks to.
        base: The page's own URL path (assets are under ``<base>/static``).
        api_url: Where the page finds the LangGraph API.
    """
    config = {
        "assistantId": page.assistant_id,
        "apiUrl": api_url,
        "clientToolTimeoutMs": round(page.client_tool_timeout_s * 1000),
        "title": page.title,
    }
    block = f'<script type="application/json" id="toolweave-config">{_json_for_html(config)}'
    # how the page answers each pause kind (Q7): "question" or "client_tools"
    kinds = _json_for_html(page_pauses())
    pauses = f'<script type="application/json" id="toolweave-pauses">{kinds}'
    return (
        _template()
        .replace(CONFIG_SLOT, block + "</script>" + pauses + "</script>")
        .replace(TITLE_SLOT, escape(page.title))
        .replace(PANEL_SLOT, page.panel_html)
        .replace(ASSETS_SLOT, escape(base))
        .replace('lang="en"', f'lang="{escape(page.lang)}"', 1)
    )


def tools_script(scripts: Sequence[ClientScript]) -> str:
    """One JavaScript text running each tool's client script in its own scope.

    A script that throws while loading is reported in the browser console with the
    tool's id and does not stop the others.
    """
    parts = ["/* toolweave: client scripts of the AI system tools (W4) */"]
    for script in scripts:
        label = json.dumps(script.tool_id)
        origin = script.label.replace("*/", "* /")
        parts.append(
            f"/* tool {label}{': ' + origin if origin else ''} */\n"
            f"(function () {{\n  try {{\n{script.source}\n  }} catch (err) {{\n"
            f"    console.error('client script of tool ' + {label} + ' failed', err);\n"
            "  }\n})();"
        )
    return "\n\n".join(parts) + "\n"


def _headers(page: ChatPage) -> dict[str, str]:
    connect = f" {page.api_url}" if page.api_url else ""
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY.format(connect=connect),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-cache",
    }


def chat_routes(page: ChatPage, *, path: str = "/chat") -> list[BaseRoute]:
    """The page's routes, to add to any Starlette or FastAPI app.

    ``GET <path>`` is the page, ``<path>/static/...`` its files and
    ``GET <path>/tools.js`` the client scripts of ``page.client_scripts``.
    """
    if not path.startswith("/") or path.endswith("/"):
        raise ConfigurationError(f"the chat page path must start and not end with '/': {path!r}")
    headers = _headers(page)
    script = tools_script(page.client_scripts)

    async def chat(request: Request) -> Response:
        api_url = page.api_url or str(request.scope.get("root_path", "")).rstrip("/")
        html = render_page(page, base=_base(request, path), api_url=api_url)
        return HTMLResponse(html, headers=headers)

    async def tools(request: Request) -> Response:
        return Response(script, media_type="text/javascript", headers=headers)

    return [
        Route(path, chat, methods=["GET"], name="toolweave-chat"),
        Route(f"{path}/tools.js", tools, methods=["GET"], name="toolweave-chat-tools"),
        Mount(
            f"{path}/static",
            app=StaticFiles(directory=STATIC_DIR, follow_symlink=False),
            name="toolweave-chat-static",
        ),
    ]


def create_app(page: ChatPage, *, path: str = "/chat") -> Starlette:
    """A Starlette app serving ``page`` at ``path``, for ``langgraph.json``'s ``http.app``.

    Example:
        ``langgraph.json``: ``"http": {"app": "my_pkg.web:app"}`` with
        ``app = create_app(ChatPage(assistant_id="my_graph"))`` in ``my_pkg/web.py``;
        ``langgraph dev`` then serves the API and the page at one address.
    """
    return Starlette(routes=chat_routes(page, path=path))
