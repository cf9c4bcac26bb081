"""The helpdesk's side panel on the chat page: form HR-01 "Wniosek urlopowy".

The CLIENT tool ``fill_leave_request_form`` fills ``#leave-start``, ``#leave-end`` and
``#leave-type`` from the conversation; submitting the form sends the request as a chat
message. Plain HTML: :mod:`toolweave_pomoc.app` puts it on the page.
"""

from __future__ import annotations

from html import escape

from toolweave_pomoc.ai_tools import LEAVE_TYPES

LEAVE_MESSAGE = "Wniosek urlopowy HR-01: {leave_type}, od {start} do {end}"
"""What submitting the form sends to the chat; ``{field}`` names the form's fields."""


def leave_panel() -> str:
    """The leave request form, with the leave types of HR-01 to choose from."""
    options = "\n".join(
        f'    <option value="{escape(kind)}">{escape(kind)}</option>' for kind in LEAVE_TYPES
    )
    return f"""<h2 id="leave-heading">Wniosek urlopowy (HR-01)</h2>
<p>Napisz na czacie, na przykład „Wypełnij mi wniosek urlopowy od 2 do 6 sierpnia
2027”, a asystent wypełni ten formularz w przeglądarce; sprawdź go i wyślij.</p>
<form id="leave-form" aria-labelledby="leave-heading"
      data-chat-template="{escape(LEAVE_MESSAGE)}">
  <label for="leave-start">Pierwszy dzień urlopu</label>
  <input id="leave-start" name="start" type="date" required>
  <label for="leave-end">Ostatni dzień urlopu</label>
  <input id="leave-end" name="end" type="date" required>
  <label for="leave-type">Rodzaj urlopu</label>
  <select id="leave-type" name="leave_type">
{options}
  </select>
  <button type="submit">Wyślij wniosek</button>
</form>"""


__all__ = ["LEAVE_MESSAGE", "leave_panel"]
