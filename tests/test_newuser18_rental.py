"""The eighteenth new user: an English car rental desk, written from the README and docs alone.

``tests/newuser18_domain`` is the domain (nine English pages): a reservation (acts: a POST
to a back end started here on 127.0.0.1 under the call's idempotency key; customers only,
T4; asks for a missing branch, date or class, Q1, T13), a cancellation (acts; asks which
reservation when the customer has two), a price quote from a tariff (a finished answer,
R3) and the branches' hours (context, R2). The back end counts every POST and keeps one
reservation per key. The points of the round: a reservation is made once whatever way it
is sent twice, a question that only mentions a reservation reserves nothing, and English
follow-ups.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from newuser18_domain import rental_domain_and_tools, rental_store
from newuser18_domain.backend import Backend
from newuser18_domain.tools import BranchHours, PriceQuote, ReserveCar, ReserveRequest

from toolweave import RunContext, build_graph, pending_clarification, reply
from toolweave.llm.offline_extract import extract_request
from toolweave.llm.offline_routing import RoutingRule, score_tools

pytestmark = pytest.mark.network

CUSTOMER = RunContext(user_data={"customer_id": "CU-1001", "age": 30})
RESERVE = "Please reserve a compact car at the Airport branch from 12 March 2027 to 15 March 2027."
STORE = rental_store()


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    running = Backend().start()
    monkeypatch.setenv("RENTAL_API_URL", running.url)
    yield running
    running.stop()


def desk(**kwargs: Any) -> Any:
    domain, tools = rental_domain_and_tools(STORE)
    return build_graph(domain, tools, checkpointer=InMemorySaver(), **kwargs)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def ask(graph: Any, thread: str, text: str, context: Any = CUSTOMER) -> dict[str, Any]:
    out: dict[str, Any] = graph.invoke(
        {"messages": [HumanMessage(text)]}, cfg(thread), context=context
    )
    return out


def question_of(graph: Any, thread: str) -> str | None:
    pending = pending_clarification(graph, cfg(thread))
    return None if pending is None else str(pending["question"])


# --- library fixes met on the first reservation -------------------------------------------


def test_T6_two_date_fields_take_the_date_after_their_cue() -> None:
    filled = extract_request(RESERVE, ReserveRequest)
    assert filled is not None
    assert (filled["pickup"], filled["return_date"]) == ("2027-03-12", "2027-03-15")
    backwards = "Reserve a van until 20 May 2027, picking it up from 18 May 2027."
    filled = extract_request(backwards, ReserveRequest)
    assert filled is not None
    assert (filled["pickup"], filled["return_date"]) == ("2027-05-18", "2027-05-20")


def test_T6_a_later_date_field_without_cues_takes_a_date_the_earlier_did_not() -> None:
    from datetime import date

    from pydantic import BaseModel

    class Stay(BaseModel):
        arrival: date | None = None
        departure: date | None = None

    filled = extract_request("Stay 3 June 2027 - 5 June 2027, please.", Stay)
    assert filled == {"arrival": "2027-06-03", "departure": "2027-06-05"}


def test_A9_a_value_of_a_request_field_takes_nothing_from_the_share() -> None:
    tools = [ReserveCar(), PriceQuote(), BranchHours()]
    full = score_tools(RESERVE, tools)["reserve_car"]
    # "compact", "Airport", "March" say which, not what about: 43 % before, the act's
    # declared intent now explains the request (A9's terminal coverage)
    assert full.coverage >= RoutingRule().terminal_coverage


def test_A9_S5_a_reservation_that_states_everything_reserves_once(backend: Backend) -> None:
    graph = desk()
    out = ask(graph, "t1", RESERVE)
    assert out["answer"].startswith("Reserved: R-101, a compact car at the Airport branch")
    assert "from 2027-03-12 to 2027-03-15" in out["answer"]
    assert len(backend.reservations) == 1


def test_Q1_X3_a_tool_with_four_required_inputs_is_asked_for_each_and_acts_once(
    backend: Backend,
) -> None:
    graph = desk()  # Limits.max_clarification_rounds is 3: a round that filled one is free
    ask(graph, "t1", "I want to reserve a car.")
    assert question_of(graph, "t1") == "Which branch?"
    for reply_text, next_question in [
        ("Airport", "Which pick-up date?"),
        ("12 March 2027", "Which return date?"),
        ("15 March 2027", "Which car class?"),
    ]:
        ask(graph, "t1", reply_text)
        assert question_of(graph, "t1") == next_question
    out = ask(graph, "t1", "compact")
    assert out["answer"] == (
        "Reserved: R-101, a compact car at the Airport branch from 2027-03-12 to 2027-03-15."
    )
    again = reply_or_message(graph, "t1", "compact")  # the last reply sent twice
    assert "R-101" in again["answer"]
    assert len(backend.reservations) == 1
    assert len(backend.posts) == 1


def test_X3_replies_that_fill_nothing_are_still_bounded(backend: Backend) -> None:
    graph = desk()
    ask(graph, "t1", "I want to reserve a car.")
    for _ in range(5):
        out = ask(graph, "t1", "no idea")
        if question_of(graph, "t1") is None:
            break
    assert question_of(graph, "t1") is None
    assert "asked too many questions" in out["answer"]
    assert backend.posts == []


def test_Q2_T6_a_date_reply_fills_the_date_asked_not_an_earlier_one(backend: Backend) -> None:
    graph = desk()
    ask(graph, "t1", "Please reserve a van at the City branch from 18 May 2027.")
    assert question_of(graph, "t1") == "Which return date?"
    out = ask(graph, "t1", "20 May 2027")
    assert out["answer"] == (
        "Reserved: R-101, a van car at the City branch from 2027-05-18 to 2027-05-20."
    )


def reply_or_message(graph: Any, thread: str, text: str) -> dict[str, Any]:
    return ask(graph, thread, text)


# --- a reservation is made once, whatever way it is sent twice (S5, Q6) ---------------------


def test_S5_a_reservation_sent_again_retyped_is_made_once(backend: Backend) -> None:
    graph = desk()
    first = ask(graph, "t1", RESERVE)
    again = ask(graph, "t1", RESERVE.lower().removesuffix("."))
    assert "R-101" in first["answer"]
    assert "R-101" in again["answer"]
    assert len(backend.reservations) == 1


def test_S5_two_concurrent_runs_on_one_thread_reserve_once(backend: Backend) -> None:
    backend.post_delay = 0.5
    graph = desk()
    message = HumanMessage(RESERVE, id="m-1")
    outs: list[dict[str, Any]] = []

    def run() -> None:
        outs.append(graph.invoke({"messages": [message]}, cfg("t1"), context=CUSTOMER))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outs) == 2
    assert all("R-101" in out["answer"] for out in outs)
    assert len(backend.reservations) == 1


def test_S5_Q6_a_reservation_asked_again_after_a_timeout_keeps_its_key(backend: Backend) -> None:
    graph = desk()
    backend.fail_after_post = True  # the reservation is made, the answer is a 504
    first = ask(graph, "t1", RESERVE)
    assert "R-101" not in first["answer"]
    backend.fail_after_post = False
    again = ask(graph, "t1", RESERVE)  # as the answer told the customer to
    assert "R-101" in again["answer"]
    assert len({post["key"] for post in backend.posts}) == 1
    assert len(backend.reservations) == 1


def test_S5_Q2_a_resumed_clarification_answered_twice_reserves_once(backend: Backend) -> None:
    graph = desk()
    ask(graph, "t1", "Please reserve a compact car at the Airport branch from 12 March 2027.")
    assert question_of(graph, "t1") == "Which return date?"
    first = reply(graph, cfg("t1"), "15 March 2027", context=CUSTOMER)
    second = ask(graph, "t1", "15 March 2027")  # the reply sent again as a message
    assert "R-101" in first["answer"]
    assert "R-102" not in second.get("answer", "")
    assert len(backend.reservations) == 1


def test_T4_without_a_customer_id_nothing_is_reserved_nor_asked(backend: Backend) -> None:
    graph = desk()
    out = ask(graph, "t1", RESERVE, context=None)
    assert question_of(graph, "t1") is None
    assert "reserve_car" not in str(out["activated"])
    assert backend.posts == []


def test_T4_R3_an_under_21_customer_is_told_and_nothing_is_reserved(backend: Backend) -> None:
    graph = desk()
    young = RunContext(user_data={"customer_id": "CU-2002", "age": 19})
    out = ask(graph, "t1", RESERVE, context=young)
    assert out["answer"] == "Drivers under 21 cannot rent a car from us; nothing was reserved."
    assert backend.posts == []


# --- a question that mentions a reservation reserves nothing (A9) ---------------------------


@pytest.mark.parametrize(
    "question",
    [
        "How much is the deposit for a reservation?",
        "Can I cancel a reservation for free?",
        "Is it possible to reserve a car for a young driver?",
        "What happens if I reserve a car and arrive late?",
        "Do I need to reserve a car in advance?",
    ],
)
def test_A9_a_question_that_mentions_a_reservation_never_reserves_nor_cancels(
    backend: Backend, question: str
) -> None:
    graph = desk()
    ask(
        graph,
        "t1",
        "Please reserve a compact car at the Airport branch from 1 May 2027 to 3 May 2027.",
    )
    ask(graph, "t1", "Please reserve a van at the Station branch from 4 June 2027 to 6 June 2027.")
    out = ask(graph, "t2", question)
    assert question_of(graph, "t2") is None
    assert not any(n in str(out["activated"]) for n in ("reserve_car", "cancel_reservation"))
    assert len(backend.posts) == 2


def test_A9_the_deposit_question_is_answered_from_the_deposit_page(backend: Backend) -> None:
    out = ask(desk(), "t1", "How much is the deposit for a reservation?")
    assert "only at pick-up, never when you reserve" in out["answer"]


# --- cancelling asks which reservation (Q1, Q2, S5) -----------------------------------------


def test_Q1_cancelling_with_two_reservations_asks_which_and_cancels_the_one_chosen(
    backend: Backend,
) -> None:
    graph = desk()
    ask(
        graph,
        "a",
        "Please reserve a compact car at the Airport branch from 1 May 2027 to 3 May 2027.",
    )
    ask(graph, "b", "Please reserve a van at the Station branch from 4 June 2027 to 6 June 2027.")
    ask(graph, "t1", "Please cancel my reservation.")
    pending = pending_clarification(graph, cfg("t1"))
    assert pending is not None
    assert pending["question"] == "Which reservation should I cancel?"
    assert [c.split(":")[0] for c in pending["choices"]] == ["R-101", "R-102"]
    out = reply(graph, cfg("t1"), "2", context=CUSTOMER)
    assert out["answer"].startswith("Cancelled: R-102")
    ask(graph, "t1", "2")  # the reply sent again
    cancels = [p for p in backend.posts if p["path"].endswith("/cancel")]
    assert [p["path"] for p in cancels] == ["/reservations/R-102/cancel"]
    assert backend.reservations["R-101"]["status"] == "active"


def test_Q1_cancelling_the_only_reservation_asks_nothing(backend: Backend) -> None:
    graph = desk()
    ask(graph, "a", RESERVE)
    out = ask(graph, "t1", "Please cancel my reservation.")
    assert out["answer"].startswith("Cancelled: R-101")
    assert backend.reservations["R-101"]["status"] == "cancelled"


# --- English follow-ups (A1) ------------------------------------------------------------------


def test_A1_and_for_a_week_quotes_the_same_class_for_seven_days(backend: Backend) -> None:
    graph = desk()
    assert ask(graph, "t1", "How much is a compact car for 3 days?")["answer"] == (
        "A compact car for 3 days costs 147.00 EUR (49 EUR a day)."
    )
    out = ask(graph, "t1", "and for a week?")
    assert out["answer"] == (
        "A compact car for 7 days costs 308.70 EUR (49 EUR a day, 10% weekly discount)."
    )
    assert ask(graph, "t1", "and an SUV?")["answer"].startswith("A SUV car for 7 days")


def test_A1_a_phrase_takes_the_place_of_the_one_its_function_word_opens() -> None:
    from toolweave.llm.offline_followup import resolve_followup

    assert resolve_followup("and for a week?", "How much is a compact car for 3 days?") == (
        "How much is a compact car for a week?"
    )
    assert resolve_followup(
        "and at the City branch?", "Is parking free at the Airport branch?"
    ) == ("Is parking free at the City branch?")


def test_A1_Q2_make_it_friday_instead_keeps_the_request_and_reserves_nothing_new(
    backend: Backend,
) -> None:
    graph = desk()
    ask(graph, "t1", "I want to reserve a compact car at the City branch from 12 March 2027.")
    assert question_of(graph, "t1") == "Which return date?"
    out = ask(graph, "t1", "Make it Friday instead.")
    normalized = [e for e in out["ledger"] if e.kind == "normalized"]
    assert "Make branch" not in normalized[-1].reason  # "Make" is no branch's name
    assert "City" in normalized[-1].reason
    assert question_of(graph, "t1") == "Which pick-up date?"  # Friday of which week?
    assert backend.posts == []


def test_S5_make_it_friday_after_a_reservation_reserves_nothing_more(backend: Backend) -> None:
    graph = desk()
    ask(graph, "t1", RESERVE)
    ask(graph, "t1", "Make it Friday instead.")
    ask(graph, "t1", "Make it 19 March 2027 instead.")
    assert len(backend.posts) == 1


# --- a question whether to act is advice, not a request (A9) ---------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Should I reserve a car before I travel?",
        "Do I have to reserve a car for the airport?",
        "Should I cancel my reservation if my flight is late?",
    ],
)
def test_A9_a_question_whether_to_act_reserves_and_cancels_nothing(
    backend: Backend, question: str
) -> None:
    graph = desk()
    ask(graph, "a", RESERVE)
    out = ask(graph, "t1", question)
    assert question_of(graph, "t1") is None
    assert not any(n in str(out["activated"]) for n in ("reserve_car", "cancel_reservation"))
    assert len(backend.posts) == 1


def test_A9_a_models_yes_to_a_question_whether_to_act_does_not_act() -> None:
    from toolweave import ChatbotTool, Domain, EmptyRequest, ToolCallContext, ToolResult
    from toolweave.testing import FunctionAssistant

    booked: list[str] = []

    class BookTable(ChatbotTool[EmptyRequest]):
        name = "book_table"
        side_effects = True
        returns_answer = True
        executable_instruction = "book_table: true when the user asks to book a table."
        routing_examples = ("Please book a table for two.",)

        def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
            booked.append(ctx.idempotency_key)
            return ToolResult.as_answer(self.name, "Booked.")

    assistant = FunctionAssistant(route=lambda text, tools: ["book_table"])
    graph = build_graph(Domain(name="bistro"), [BookTable()], assistant=assistant)
    out = graph.invoke({"messages": [("human", "Do I need to book a table on Sundays?")]})
    assert booked == []
    assert any(e.verdict == "a9_acting_in_doubt" for e in out["ledger"])
    assert graph.invoke({"messages": [("human", "Please book a table for two.")]})["answer"] == (
        "Booked."
    )
    assert len(booked) == 1


# --- gaps left (strict xfail) ---------------------------------------------------------------


def _desk_with(replacement: Any) -> Any:
    domain, tools = rental_domain_and_tools(STORE)
    tools = [replacement if t.name == replacement.name else t for t in tools]
    return build_graph(domain, tools, checkpointer=InMemorySaver())


def test_T5_A8_of_two_twin_tools_the_one_whose_name_the_task_names_is_routed(
    backend: Backend,
) -> None:
    from newuser18_domain.tools import CancelReservation

    class Worded(CancelReservation):
        description = "Cancels one of the customer's car reservations."
        executable_instruction = (
            "cancel_reservation: true when the user asks to cancel their car reservation."
        )
        routing_examples = ("Please cancel my reservation.", "Cancel my booking, please.")

    # "reserve" and "reservation" share a stem and both tools have "car": twins by their
    # words, but the task names all of reserve_car's name and not cancel_reservation's
    graph = _desk_with(Worded())
    ask(graph, "t1", "I want to reserve a car.")
    assert question_of(graph, "t1") == "Which branch?"
    ask(graph, "t2", RESERVE)
    out = ask(graph, "t3", "Please cancel my car reservation.")
    assert out["answer"].startswith("Cancelled: R-101")


@pytest.mark.xfail(
    strict=True,
    reason="Gap (T5, A9): a context tool whose description names the branches ('Airport, City "
    "and Station') wins the near tie over the act ('of the near ties a context tool first'), "
    "and 'reserve' alone weighs less than min_extra: the hours answer a reservation. Worked "
    "around in the domain: the description names no branch.",
)
def test_T5_a_context_tool_naming_the_branches_does_not_take_a_reservation(
    backend: Backend,
) -> None:
    class Named(BranchHours):
        description = "Opening hours and address of the Airport, City and Station branches."

    graph = _desk_with(Named())
    ask(graph, "t1", "Please reserve a van at the City branch from 18 May 2027.")
    assert question_of(graph, "t1") == "Which return date?"


# --- a follow-up of a reservation is no second reservation (A1, A9, S5) --------------------


@pytest.mark.parametrize("follow_up", ["and for a week?", "and an SUV?", "and at the City branch?"])
def test_A9_S5_a_follow_up_of_a_reservation_reserves_nothing_more(
    backend: Backend, follow_up: str
) -> None:
    graph = desk()
    ask(graph, "t1", RESERVE)
    out = ask(graph, "t1", follow_up)
    assert question_of(graph, "t1") is None  # no "Which car class?" whose reply reserves
    assert "reserve_car" not in str(out["activated"])
    doubted = [e for e in out["ledger"] if e.verdict == "a9_acting_in_doubt"]
    assert doubted
    assert "borrows" in doubted[0].reason + str(doubted[0].details)
    assert len(backend.posts) == 1


def test_A9_S5_asking_for_the_act_again_in_ones_own_words_acts(backend: Backend) -> None:
    graph = desk()
    ask(graph, "t1", RESERVE)
    out = ask(
        graph,
        "t1",
        "Reserve an SUV too, at the Airport branch from 12 March 2027 to 15 March 2027.",
    )
    assert out["answer"].startswith("Reserved: R-102, a SUV car")
    assert len(backend.reservations) == 2


def test_S5_a_reservation_sent_by_ainvoke_then_again_by_invoke_is_made_once(
    backend: Backend,
) -> None:
    import asyncio

    graph = desk()
    message = {"messages": [HumanMessage(RESERVE)]}
    first = asyncio.run(graph.ainvoke(message, cfg("t1"), context=CUSTOMER))
    again = ask(graph, "t1", RESERVE)
    assert "R-101" in first["answer"]
    assert "R-101" in again["answer"]
    assert len(backend.posts) == 1


def test_A9_what_reads_as_a_question_whether_to_act() -> None:
    from toolweave.llm.offline_routing import asks_whether_to

    for advice in (
        "Should I reserve a car before I travel?",
        "Do I need to book a table on Sundays?",
        "Do we have to renew the loan?",
        "Is it necessary to reserve in advance?",
        "Czy trzeba rezerwować miejsce na rower?",
        "Faut-il réserver ?",
    ):
        assert asks_whether_to(advice), advice
    for request in (
        "Please reserve a compact car at the Airport branch.",
        "I need to reserve a car for Friday.",
        "Can you book a table for two?",
        "Shall we book the table for 8?",
        "Chcę zarezerwować miejsce na rower.",
    ):
        assert not asks_whether_to(request), request
