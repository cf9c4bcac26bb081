"""The hospital's side panel on the chat page: an appointment-request form.

The CLIENT tool that fills it from the conversation sets ``#appointment-department``
and ``#appointment-day``; submitting the form sends the request as a chat message.
Plain HTML (no Starlette here): :mod:`toolweave_korhaz.app` puts it on the page.
"""

from __future__ import annotations

from html import escape

from toolweave_korhaz.departments import departments

APPOINTMENT_MESSAGE = "Appointment request: {department}, preferred day: {day}"
"""What submitting the form sends to the chat; ``{field}`` names the form's fields."""


def appointment_panel() -> str:
    """The appointment-request form, with the known departments offered as suggestions."""
    options = "\n".join(
        f'    <option value="{escape(dept.name_hu)}">{escape(dept.name_en)}</option>'
        for dept in departments()
    )
    return f"""<h2 id="appointment-heading">Appointment request</h2>
<p>Ask in the chat, for example “Szeretnék időpontot kérni a kardiológiára hétfőre” or
“Please fill the appointment form: cardiology, Monday”, and the assistant fills this
form in your browser; check it and send it.</p>
<form id="appointment-form" aria-labelledby="appointment-heading"
      data-chat-template="{escape(APPOINTMENT_MESSAGE)}">
  <label for="appointment-department">Department</label>
  <input id="appointment-department" name="department" list="appointment-departments"
         autocomplete="off" required>
  <datalist id="appointment-departments">
{options}
  </datalist>
  <label for="appointment-day">Preferred day</label>
  <input id="appointment-day" name="day" autocomplete="off" required
         placeholder="e.g. 2026-12-08 or Tuesday">
  <button type="submit">Request appointment</button>
</form>"""
