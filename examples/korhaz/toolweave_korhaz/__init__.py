"""The bundled example domain ``korhaz``: a hospital assistant with its tools and corpus.

>>> from toolweave_korhaz import korhaz_domain, korhaz_tools
>>> domain, tools = korhaz_domain(), korhaz_tools()
"""

from __future__ import annotations

from typing import Any

from toolweave.tools.base import ChatbotTool
from toolweave.tools.domain import Domain
from toolweave.tools.search.context_search import ContextSearchTool
from toolweave.tools.search.neighbor_search import NeighborPageSearchTool
from toolweave.tools.search.protocol import DocumentStore, PageGraphStore
from toolweave.tools.search.retrieval import RetrievalTool
from toolweave_korhaz.callbacks import (
    CALLBACK_REQUEST,
    CallbackLedger,
    CallbackRecord,
    CallbackRequestTool,
)
from toolweave_korhaz.coordinators import (
    MEDICATION_ADVICE,
    DoctorFinderCoordinator,
    DrugInteractionCoordinator,
)
from toolweave_korhaz.corpus import (
    DOMAIN_NAME,
    korhaz_corpus,
    load_korhaz_store,
    parse_markdown_document,
)
from toolweave_korhaz.deep import (
    CONTEXT_SEARCH_TOOL_NAME,
    NEIGHBOR_SEARCH_TOOL_NAME,
    KorhazDeepSearch,
    deep_fallback,
)
from toolweave_korhaz.examples import EXAMPLE_QUESTIONS, ExampleQuestion
from toolweave_korhaz.lookup_tools import DoctorDirectoryTool, SubstanceLookupTool
from toolweave_korhaz.progress_messages import PROGRESS_MESSAGES
from toolweave_korhaz.tools import (
    DepartmentInfoRequest,
    DepartmentInfoTool,
    EmergencyNumbersTool,
)
from toolweave_korhaz.withheld import callback_kind, emergency_kind

RETRIEVAL_TOOL_NAME = "korhaz_search"
"""Name of the domain's default RAG retrieval tool (A5)."""

SYSTEM_PROMPT = (
    "You are the information assistant of Példa Hospital (Példa Kórház), Budapest. "
    "Answer patients' and visitors' questions precisely and briefly from the context: "
    "departments, consultation and visiting hours, admission, parking, pharmacy, services. "
    "Quote times, phone numbers, floors and prices exactly as the context gives them. "
    "If the context does not hold the answer, say so and give the switchboard number "
    "+36 1 555 0100. Do not give medical advice; in an emergency tell the user to call 112. "
    "Answer in the user's language."
)


def korhaz_domain() -> Domain:
    """The ``korhaz`` domain: default retrieval ``korhaz_search``, deep fallback (D1-D7).

    When the gatekeeper finds the retrieved context short, ``korhaz_deep_search``
    reads the neighbour pages, then searches the whole corpus (small talk excluded).
    """
    return Domain(
        name=DOMAIN_NAME,
        system_prompt=SYSTEM_PROMPT,
        default_retrieval_tool=RETRIEVAL_TOOL_NAME,
        default_language="hu",
        description="Example hospital (Példa Kórház): departments, visiting hours, admission, "
        "parking, pharmacy; Hungarian and English.",
        deep_fallback=deep_fallback(),
        progress_messages=PROGRESS_MESSAGES,
        # never a generated medical yes or no, nor a generated answer to an emergency (A7)
        withheld=(MEDICATION_ADVICE, emergency_kind(), callback_kind()),
    )


def korhaz_tools(
    store: DocumentStore | None = None, *, callbacks: CallbackLedger | None = None
) -> list[ChatbotTool[Any]]:
    """The domain's tools: ``department_info``, ``emergency_numbers``, ``korhaz_search`` and more.

    The coordinators ``drug_interaction`` and ``doctor_finder`` come with the
    forced-only lookups they use, ``substance_lookup`` and ``doctor_directory``;
    the deep-search coordinator ``korhaz_deep_search`` with its forced-only
    search tools ``korhaz_neighbor_search`` and ``korhaz_context_search`` (when
    the store can walk pages, as the default SQLite store can).

    Args:
        store: The store ``korhaz_search`` searches; ``None`` builds an in-memory
            store from the bundled corpus.
        callbacks: Where ``callback_request`` records callback requests, one per
            idempotency key (Q6); ``None``: an in-memory ledger.

    Returns:
        New tool instances (singletons for the caller to share).
    """
    if store is None:
        store = load_korhaz_store()
    deep: list[ChatbotTool[Any]] = [KorhazDeepSearch()]
    if isinstance(store, PageGraphStore):
        deep += [
            NeighborPageSearchTool(NEIGHBOR_SEARCH_TOOL_NAME, DOMAIN_NAME, store, k=1),
            ContextSearchTool(CONTEXT_SEARCH_TOOL_NAME, DOMAIN_NAME, store),
        ]
    return [
        DepartmentInfoTool(),
        EmergencyNumbersTool(),
        RetrievalTool(RETRIEVAL_TOOL_NAME, DOMAIN_NAME, store),
        DrugInteractionCoordinator(),
        SubstanceLookupTool(),
        DoctorFinderCoordinator(RETRIEVAL_TOOL_NAME),
        DoctorDirectoryTool(),
        CallbackRequestTool(callbacks),
        *deep,
    ]


__all__ = [
    "CALLBACK_REQUEST",
    "CONTEXT_SEARCH_TOOL_NAME",
    "DOMAIN_NAME",
    "EXAMPLE_QUESTIONS",
    "NEIGHBOR_SEARCH_TOOL_NAME",
    "RETRIEVAL_TOOL_NAME",
    "SYSTEM_PROMPT",
    "CallbackLedger",
    "CallbackRecord",
    "CallbackRequestTool",
    "DepartmentInfoRequest",
    "DepartmentInfoTool",
    "EmergencyNumbersTool",
    "ExampleQuestion",
    "KorhazDeepSearch",
    "korhaz_corpus",
    "korhaz_domain",
    "korhaz_tools",
    "load_korhaz_store",
    "parse_markdown_document",
]
