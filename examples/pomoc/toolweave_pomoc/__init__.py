"""The second example domain ``pomoc``: a company helpdesk in Polish (SPEC G1, §19).

>>> from toolweave_pomoc import pomoc_domain_and_tools
>>> domain, tools = pomoc_domain_and_tools()
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolweave import ChatbotTool, Domain, as_chatbot_tools, documents_domain
from toolweave_pomoc.ai_tools import pomoc_ai_tools
from toolweave_pomoc.corpus import DOMAIN_NAME, load_store
from toolweave_pomoc.planner import LeavePlannerCoordinator
from toolweave_pomoc.tools import (
    HolidayCalendarTool,
    InvoiceApprovalTool,
    ItAccountHelpTool,
    LeaveBalanceTool,
    PhoneDirectoryTool,
)

SYSTEM_PROMPT = (
    "Jesteś asystentem Pomoc działu wsparcia firmy Lumena Sp. z o.o. w Poznaniu. "
    "Odpowiadasz pracownikom krótko i dokładnie na podstawie kontekstu: urlopy, "
    "zwolnienia, praca zdalna, konta IT, VPN, sprzęt, obieg dokumentów i faktur, "
    "delegacje, biuro. Podawaj liczby, terminy, numery wewnętrzne i adresy dokładnie tak "
    "jak w kontekście. Jeśli kontekst nie zawiera odpowiedzi, powiedz to i podaj numer "
    "Helpdesku IT 2100 albo działu kadr 2200. Odpowiadaj w języku użytkownika."
)
"""The answer prompt: who the assistant is and how it answers (in Polish, as the domain)."""

PROGRESS_MESSAGES = {
    "SEARCHING": {"pl": "Szukam w dokumentach", "en": "Searching the documents"},
}
"""Progress lines of the domain in Polish and English (P4)."""


def pomoc_domain_and_tools() -> tuple[Domain, list[ChatbotTool[Any]]]:
    """The ``pomoc`` domain and its tools, its AI tool among them as a chatbot tool (W6).

    The documents' retrieval (``pomoc_search``) and deep fallback (``pomoc_deep_search``
    with its forced ``pomoc_neighbor_search`` and ``pomoc_context_search``, D1-D7) come from
    ``documents_domain`` over the bundled pages; the domain's own tools come beside them.
    """
    own: list[ChatbotTool[Any]] = [
        HolidayCalendarTool(),
        LeaveBalanceTool(),
        ItAccountHelpTool(),
        PhoneDirectoryTool(),
        InvoiceApprovalTool(),
        LeavePlannerCoordinator(),
        *as_chatbot_tools(pomoc_ai_tools(), domain=DOMAIN_NAME),
    ]
    base, tools = documents_domain(
        DOMAIN_NAME, load_store(), tools=own, system_prompt=SYSTEM_PROMPT, default_language="pl"
    )
    domain = dataclasses.replace(  # the fields documents_domain takes no argument for
        base,
        description="Example company helpdesk (Pomoc, Lumena Sp. z o.o.): leave, IT "
        "accounts, document and invoice workflow, business trips; Polish and English.",
        progress_messages=PROGRESS_MESSAGES,
    )
    return domain, tools


__all__ = ["DOMAIN_NAME", "SYSTEM_PROMPT", "pomoc_domain_and_tools"]
