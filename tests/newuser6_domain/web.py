"""The chat page for the shop's graph (``langgraph.json``'s ``http.app``)."""

from toolweave.web import ChatPage, create_app

app = create_app(ChatPage(assistant_id="bikeshop", title="Chainline Cycles"))
