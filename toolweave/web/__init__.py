"""The web chat page, served by the LangGraph server itself (``langgraph.json`` ``http.app``).

This subpackage needs Starlette (it comes with ``langgraph-api``, the LangGraph
server); nothing else in toolweave imports it. :func:`create_app` or :func:`chat_routes`
put the page in front of any graph; the example package ``examples/korhaz`` serves its
hospital page that way (``toolweave_korhaz.app:app``).
"""

from toolweave.web.page import (
    ChatPage,
    ClientScript,
    chat_routes,
    client_scripts_for,
    create_app,
    render_page,
)

__all__ = [
    "ChatPage",
    "ClientScript",
    "chat_routes",
    "client_scripts_for",
    "create_app",
    "render_page",
]
