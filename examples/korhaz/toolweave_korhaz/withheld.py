"""The hospital's withheld kinds: questions never answered from generation alone (A7, A9).

A small model may say no to a finished-answer tool, or its routing reply may not
be read at all, and the run then generates an answer from whatever the search
found. Two kinds of question must not be answered so:

- a described emergency ("Anyám összeesett és nem lélegzik, mit tegyek?": the 1.5B
  model wrote nonsense for it) gets the emergency numbers (:func:`emergency_kind`);
- a callback request that no tool recorded ("Please ask cardiology to call me
  back.": the 1.5B model's answer was "Dr. Lengyel Márta … will call you back",
  a promise nobody stands behind) is told that no request was recorded, and where
  to call (:func:`callback_kind`).

A question is of a kind when the offline routing rule gives it to that kind's tool
alone among the hospital's routable tools (their routing questions, declared
examples and ``not_for`` questions; :func:`routed_alone`) and no tool gave a
finished answer. The rule is the one the offline model routes with, so a question
it would not send there (a ward's phone number, "Which number do I call to book an
MRI?", "How can I call the cardiology ward?") is answered as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolweave import DomainWords, OfflineAssistant
from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import WithheldKind
from toolweave_korhaz.callbacks import CallbackRequestTool
from toolweave_korhaz.coordinators import DoctorFinderCoordinator, DrugInteractionCoordinator
from toolweave_korhaz.corpus import DOMAIN_NAME, STOPWORDS, emergency_data
from toolweave_korhaz.tools import DepartmentInfoTool, EmergencyNumbersTool

EMERGENCY = "emergency"
"""The kind's name in the ledger: a described emergency no tool answered gets the numbers."""
CALLBACK = "callback"
"""The kind's name in the ledger: a callback request no tool recorded is told so."""
CALLBACK_NOT_RECORDED = {
    "hu": (
        "Ebben a beszélgetésben nem rögzítettem visszahívási kérést, így nem hívják vissza. "
        "Hívja közvetlenül az osztályt, vagy a kórház telefonközpontját, amely a nap 24 "
        "órájában hívható a +36 1 555 0100 számon."
    ),
    "en": (
        "No callback request was recorded in this conversation, so nobody will call you "
        "back. Please call the department directly, or the hospital switchboard, 24 hours "
        "a day on +36 1 555 0100."
    ),
}
"""What a callback request no tool recorded gets instead of a generated promise."""


def routed_alone(tool_name: str) -> Callable[[str], bool]:
    """Whether the offline routing rule sends a question to ``tool_name`` alone.

    Over new instances of the hospital's routable tools (their texts only: no
    gate, no ledger, no store), the domain's own words (its name, its store's stop
    words) left out as routing leaves them out.
    """
    tools: tuple[ChatbotTool[Any], ...] = (
        DepartmentInfoTool(),
        EmergencyNumbersTool(),
        DrugInteractionCoordinator(),
        DoctorFinderCoordinator(),
        CallbackRequestTool(),
    )
    own = DomainWords((DOMAIN_NAME,), stopwords=tuple(STOPWORDS))  # no evidence (N1)
    rule = OfflineAssistant().for_domain(own)

    def applies(question: str) -> bool:
        routed = {verdict.tool for verdict in rule.route(question, tools) if verdict.run}
        return routed == {tool_name}

    return applies


def emergency_kind() -> WithheldKind:
    """The withheld kind ``emergency``: the emergency numbers."""
    return WithheldKind(
        name=EMERGENCY,
        applies=routed_alone(EmergencyNumbersTool.name),
        texts={lang: "\n".join(lines) for lang, lines in emergency_data().items()},
    )


def callback_kind() -> WithheldKind:
    """The withheld kind ``callback``: no request was recorded, and where to call."""
    return WithheldKind(
        name=CALLBACK, applies=routed_alone(CallbackRequestTool.name), texts=CALLBACK_NOT_RECORDED
    )
