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


TIMETABLE = [
    "# Ferry\n\nThe ferry runs all year.\n\n## Crossing times\n\nThere are two crossings a day:\n",
    "- morning boat: Monday to Friday 7:00\n- 17:30 on Saturdays\n\nEach trip takes an hour.\n",
    "## Tickets\n\n- 12 euros one way\n",
]


def test_D9_a_section_goes_on_over_a_page_break() -> None:
    from toolweave.tools.text import page_sections

    second, third = page_sections(TIMETABLE)[1:]
    assert second == [
        ("Crossing times", "morning boat: Monday to Friday 7:00"),  # a label of its own
        ("Crossing times", "Crossing times: 17:30 on Saturdays"),
        ("Crossing times", "Each trip takes an hour."),
    ]
    assert third == [("Tickets", "Tickets: 12 euros one way")]
    # one page alone still begins in no section
    assert sections(TIMETABLE[1])[1] == ("", "17:30 on Saturdays")


def test_D9_the_search_finds_a_continued_sections_item_by_its_heading() -> None:
    store = SqliteDocumentStore(embeddings=None)
    store.add_document("ferry", TIMETABLE, name="Ferry", lang="en")
    page_two = [d.text for d in store.page_sentences("ferry", 2)]
    assert "Crossing times: 17:30 on Saturdays" in page_two
    found = store.search("crossing times", limit=5)
    assert any(d.page == 2 and d.text.startswith("morning boat") for d in found)
