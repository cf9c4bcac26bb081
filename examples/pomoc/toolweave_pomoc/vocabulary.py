"""The helpdesk's own vocabulary, for the test that keeps it out of the library (G1).

Issue 36 item 3: a test reads each example domain's words (its tool names, place and
person names, distinctive nouns of its documents) and fails when one appears in the
library's code outside docstrings and comments.
"""

from __future__ import annotations

TOOL_NAMES = frozenset(
    {
        "holiday_calendar",
        "leave_balance",
        "it_account_help",
        "phone_directory",
        "invoice_approval",
        "leave_planner",
        "fill_leave_request_form",
        "pomoc_search",
    }
)
"""The names of the domain's own tools (the document tools' generic names excluded)."""

NAMES = frozenset({"Lumena", "PlusWorkflow", "Comarch", "FortiClient", "MedPunkt", "Travelia"})
"""The company's and its systems' and suppliers' names."""

NOUNS = frozenset(
    {
        "urlop",
        "urlopu",
        "delegacja",
        "delegacji",
        "faktura",
        "faktury",
        "kancelaria",
        "zastępstwa",
        "ryczałt",
        "wniosek",
        "zwolnienie",
        "kadry",
        "wigilia",
    }
)
"""Distinctive nouns of the helpdesk's documents."""

VOCABULARY = TOOL_NAMES | NAMES | NOUNS
"""Every word above."""

__all__ = ["NAMES", "NOUNS", "TOOL_NAMES", "VOCABULARY"]
