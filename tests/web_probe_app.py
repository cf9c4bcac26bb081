"""The chat pages of the browser tests' private server, with test client scripts (W4, W7).

``tests/test_web_page.py`` points a private ``langgraph dev`` at it:

- ``/chat``: the client-tool probe graph; the page loads ``tests/web_tools/*.js``
  each from ``/chat/tools/<id>.js`` like real tools' scripts;
- ``/broken``: the same, plus a script that does not parse and one that throws
  while loading (W7: each disables only its own tool);
- ``/example``: the seed's example tool (``tests/web_example_graph.py``), offline;
- ``/markers``: an answer that streams citation markers alone (``tests/web_markers_graph.py``);
- ``/cited``: an answer citing its sources in other words (``tests/web_cited_graph.py``).
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette

from toolweave.web import ChatPage, ClientScript, chat_routes
from toolweave_korhaz.chat_page import appointment_panel

TOOLS = Path(__file__).with_name("web_tools")


def _scripts(*names: str) -> list[ClientScript]:
    return [ClientScript.from_file(name, TOOLS / f"{name}.js") for name in names]


PROBE = ("fill_appointment_form", "slow_echo", "never_answers")

app = Starlette(
    routes=[
        *chat_routes(
            ChatPage(
                assistant_id="client_probe",
                title="client-tool probe",
                panel_html=appointment_panel(),
                client_scripts=_scripts(*PROBE),
            ),
            path="/chat",
        ),
        *chat_routes(
            ChatPage(
                assistant_id="client_probe",
                title="client-tool probe with broken scripts",
                panel_html=appointment_panel(),
                client_scripts=_scripts("broken_syntax", *PROBE, "throws_on_load"),
            ),
            path="/broken",
        ),
        *chat_routes(
            ChatPage(assistant_id="example_tool", title="The seed's example tool"), path="/example"
        ),
        *chat_routes(
            ChatPage(assistant_id="markers_answer", title="An answer of markers alone"),
            path="/markers",
        ),
        *chat_routes(
            ChatPage(assistant_id="cited_answer", title="An answer in other words"),
            path="/cited",
        ),
    ]
)
