"""D9, R9: a list item under a section heading keeps its heading's subject.

A fee page lists "## Single room" then "- 14,000 Ft a night": the item alone says a price of
nothing. Stored as a sentence, it begins with its heading ("Single room: 14,000 Ft a
night"), unless it names the heading or has a label of its own; so the search, the model
reading the passage and the citation check all see whose figure it is. A page's title
(``#``) is the passage's label already and is not repeated. A neutral test domain (a guest
house).
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from toolweave import build_graph
from toolweave.domains.documents import documents_domain
from toolweave.tools.search import SqliteDocumentStore
from toolweave.tools.text import sections, split_sentences

FEES = """# Prices

Prices are per person.

## Single room

- 14,000 Ft a night, breakfast included

## Extra bed

- 6,000 Ft a night
- A cot for a baby is free.

1. Single room deposit: 5,000 Ft
"""


def test_D9_a_list_item_under_a_section_heading_begins_with_the_heading() -> None:
    assert split_sentences(FEES) == [
        "Prices are per person.",  # under the page's title: as written
        "Single room: 14,000 Ft a night, breakfast included",
        "Extra bed: 6,000 Ft a night",
        "Extra bed: A cot for a baby is free.",
        "Single room deposit: 5,000 Ft",  # an item with a label of its own
    ]


def test_D9_an_item_that_names_its_heading_and_prose_stay_as_written() -> None:
    page = "## Opening hours\n\nThe opening hours are 8-16.\n\n- Opening hours on Sunday: closed\n"
    assert [s for _, s in sections(page)] == [
        "The opening hours are 8-16.",
        "Opening hours on Sunday: closed",
    ]


def test_R9_D9_an_answer_from_a_list_item_says_whose_figure_it_is() -> None:
    store = SqliteDocumentStore(embeddings=None)
    store.add_document("fees", [FEES], name="Prices", lang="en")
    domain, tools = documents_domain("guesthouse", store)
    graph = build_graph(domain, tools)  # the offline model
    out = graph.invoke({"messages": [HumanMessage("How much is a single room?")]})
    assert "Single room: 14,000 Ft a night" in out["answer"]
    assert "6,000" not in out["answer"]
