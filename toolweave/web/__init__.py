"""The web chat page, served by the LangGraph server itself (``langgraph.json`` ``http.app``).

Needs Starlette (it comes with the LangGraph server); nothing else in toolweave imports
it. :func:`create_app` or :func:`chat_routes` put the page in front of any graph.
"""

from toolweave.web.page import ChatPage as ChatPage
from toolweave.web.page import ClientScript as ClientScript
from toolweave.web.page import chat_routes as chat_routes
from toolweave.web.page import client_scripts_for as client_scripts_for
from toolweave.web.page import create_app as create_app
from toolweave.web.page import render_page as render_page
