"""A described emergency is never answered from generation alone (A7, A9).

A small model may say no to ``emergency_numbers`` for "Anyám összeesett és nem
lélegzik, mit tegyek?" and then generate an answer from whatever the search
found (the 1.5B model wrote nonsense for it). :func:`emergency_kind` is the domain's
withheld kind for such a question: when the offline routing rule gives the
question to ``emergency_numbers`` alone among the hospital's routable tools (its
routing question, its declared examples of described emergencies, its
``not_for`` questions), and no tool gave a finished answer, the run answers the
emergency numbers instead of generating one. The rule is the one the offline
model routes with, so a question it would not send to the emergency tool
(a ward's phone number, "Which number do I call to book an MRI?") is answered as
usual.
"""

from __future__ import annotations

from typing import Any

from toolweave import OfflineAssistant
from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import WithheldKind
from toolweave_korhaz.callbacks import CallbackRequestTool
from toolweave_korhaz.coordinators import DoctorFinderCoordinator, DrugInteractionCoordinator
from toolweave_korhaz.corpus import emergency_data
from toolweave_korhaz.tools import DepartmentInfoTool, EmergencyNumbersTool

EMERGENCY = "emergency"
"""The kind's name in the ledger: a described emergency no tool answered gets the numbers."""


def emergency_kind() -> WithheldKind:
    """The withheld kind ``emergency``, over new instances of the routable tools (texts only)."""
    tools: tuple[ChatbotTool[Any], ...] = (
        DepartmentInfoTool(),
        EmergencyNumbersTool(),
        DrugInteractionCoordinator(),
        DoctorFinderCoordinator(),
        CallbackRequestTool(),
    )
    rule = OfflineAssistant()

    def describes_emergency(question: str) -> bool:
        """Whether the offline routing rule sends ``question`` to ``emergency_numbers`` alone."""
        routed = {verdict.tool for verdict in rule.route(question, tools) if verdict.run}
        return routed == {EmergencyNumbersTool.name}

    return WithheldKind(
        name=EMERGENCY,
        applies=describes_emergency,
        texts={lang: "\n".join(lines) for lang, lines in emergency_data().items()},
    )
