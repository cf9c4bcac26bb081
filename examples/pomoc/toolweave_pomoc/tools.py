"""The helpdesk's own tools, one per result kind (SPEC R2-R5, T3, T4, Q1).

- ``holiday_calendar``: the 2027 days off as context (R2).
- ``leave_balance``: the logged-in employee's leave as guaranteed context (R5),
  gated on ``employee_id`` in the user data (T4).
- ``it_account_help``: how to reset the password of an account; asks which account
  when the question does not say (Q1), then streams the steps (R4).
- ``phone_directory``: a unit's internal extension as a finished answer (R3).
- ``invoice_approval``: who approves an invoice of a given amount, a finished answer
  offered only in the document-workflow system ``obieg`` (T3).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    fold,
    words,
)
from toolweave_pomoc import calendar
from toolweave_pomoc.corpus import DATA_DIR, DOMAIN_NAME, document
from toolweave_pomoc.dates import date_range, dates_in, months_in
from toolweave_pomoc.language import user_language

WORKING_DAYS_LINE = "Dni robocze w tym okresie (do wzięcia urlopu): "
"""How the calendar states a period's working days; the leave planner reads it (K3)."""


def _lang(ctx: ToolCallContext) -> str:
    return user_language(ctx)


def _source(document_id: str, text: str, page: int = 1) -> UniqueTextDocument:
    doc = document(document_id)
    return UniqueTextDocument(
        document_id=doc.document_id,
        document_name=doc.title,
        document_url=doc.url,
        page=page,
        text=text,
    )


def calendar_description() -> str:
    """What the calendar knows, every holiday named in both languages (the routing's words)."""
    names = "; ".join(f"{d.name} ({d.name_en})" for d in calendar.days_off() if not d.company)
    return (
        "Kalendarz świąt i dni wolnych 2027: święta, dni wolne od pracy, dni robocze. "
        f"Holiday calendar 2027: public holidays, company days off, working days. {names}."
    )


class HolidayCalendarTool(ChatbotTool[EmptyRequest]):
    """R2: the holidays and days off a question asks about, from the 2027 calendar."""

    name = "holiday_calendar"
    domain = DOMAIN_NAME
    description = calendar_description()
    executable_instruction = (
        "holiday_calendar: true when the user asks when a holiday (święto) is, whether a "
        "date is a day off (dzień wolny) or a working day (dzień roboczy), or which days "
        "off a month or the year has (kalendarz świąt, Boże Ciało, Wigilia, Easter)."
    )
    progress_messages = MappingProxyType(
        {"FETCHING_DATA": {"pl": "Sprawdzam kalendarz", "en": "Checking the calendar"}}
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The lines of the calendar the question needs, as context; none: not mine (R1)."""
        ctx.progress("FETCHING_DATA")
        lines = calendar_lines(ctx.text, _lang(ctx))
        if not lines:
            return None
        docs = [_source("kalendarz-swiat", line) for line in lines]
        return ToolResult.as_context(self.name, docs)


YEAR_WORDS = frozenset({"2027", "rok", "roku", "year", "kalendarz", "calendar"})
"""Words that ask about the whole year (folded): the calendar then gives all of it."""


def calendar_lines(text: str, lang: str) -> list[str]:
    """What the calendar says about the period, dates, holidays or month a text names.

    Returns:
        The lines, none when the text names no date, holiday, month or the year.
    """
    period = date_range(text)
    if period is not None:
        return period_lines(*period, lang=lang)
    named = dates_in(text)
    if named:
        return [line for day in named for line in day_lines(day, lang)]
    holidays = calendar.named_in(text)
    if holidays:
        return [line for d in holidays for line in day_lines(d.date, lang)]
    months = months_in(text)
    if months:
        return [d.label(lang) for d in calendar.days_off() if d.date.month in months]
    if not {fold(w) for w in words(text)} & YEAR_WORDS:
        return []
    total = calendar.year_working_days()
    lines = [d.label(lang) for d in calendar.days_off()]
    lines.append(
        f"Working days in 2027: {total}."
        if lang == "en"
        else f"W 2027 roku jest {total} dni roboczych."
    )
    return lines


def day_lines(day: dt.date, lang: str) -> list[str]:
    """One day: a holiday (and the day off given for it), a weekend or a working day."""
    off = calendar.day_off(day)
    name = calendar.weekday(day, lang)
    if off is None:
        kind = (
            ("working day" if lang == "en" else "dzień roboczy")
            if day.weekday() < 5
            else ("weekend" if lang == "en" else "weekend, dzień wolny")
        )
        return [f"{day.isoformat()} ({name}): {kind}."]
    lines = [off.label(lang) + (" - day off." if lang == "en" else " - dzień wolny.")]
    substitute = calendar.substitute_for(off)
    if substitute is not None:
        lines.append(substitute.label(lang) + ".")
    return lines


def period_lines(first: dt.date, last: dt.date, *, lang: str) -> list[str]:
    """The days off of a period and how many working days it has."""
    lines = [d.label(lang) + "." for d in calendar.days_off() if first <= d.date <= last]
    count = calendar.working_days(first, last)
    span = f"{first.isoformat()} - {last.isoformat()}"
    if lang == "en":
        lines.append(f"Working days from {span} (leave days needed): {count}.")
    lines.append(f"{WORKING_DAYS_LINE}{count} ({span}).")
    return lines


@dataclass(frozen=True)
class LeaveAccount:
    """One employee's leave in the current year."""

    name: str
    entitlement: int
    carried_over: int
    taken: int
    planned: int
    on_demand_used: int

    @property
    def remaining(self) -> int:
        """Days of leave still to take: entitlement and carried-over days less those taken."""
        return self.entitlement + self.carried_over - self.taken


ON_DEMAND_DAYS = 4
"""Days of leave on demand a year (urlop na żądanie), part of the entitlement."""


@cache
def leave_accounts() -> Mapping[str, LeaveAccount]:
    """The HR system's leave accounts by employee id (a table here)."""
    data = json.loads((DATA_DIR / "employees.json").read_text(encoding="utf-8"))
    return {key: LeaveAccount(**value) for key, value in data.items()}


def employee_id(user_data: Mapping[str, Any] | None) -> str | None:
    """The logged-in employee's id from the user data, if any."""
    value = (user_data or {}).get("employee_id")
    return value if isinstance(value, str) and value else None


class LeaveBalanceTool(ChatbotTool[EmptyRequest]):
    """R5, T4: the logged-in employee's leave balance, always in the answer."""

    name = "leave_balance"
    domain = DOMAIN_NAME
    description = (
        "Saldo urlopu zalogowanego pracownika: ile dni urlopu zostało, urlop na żądanie. "
        "The logged-in employee's leave balance: days of leave left."
    )
    executable_instruction = (
        "leave_balance: true when the user asks how many days of their own leave "
        "(urlop, wolne) they have left, used or planned (ile mi zostało, saldo urlopu, "
        "my vacation days)."
    )
    progress_messages = MappingProxyType(
        {"FETCHING_DATA": {"pl": "Sprawdzam saldo urlopu", "en": "Checking your leave balance"}}
    )

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        """T4: only for a logged-in employee (``employee_id`` in the user data)."""
        return employee_id(user_data) is not None

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The employee's balance as guaranteed context; an unknown id is not mine (R1)."""
        ctx.progress("FETCHING_DATA")
        account = leave_accounts().get(employee_id(ctx.user_data) or "")
        if account is None:
            return None
        return ToolResult.as_guaranteed_context(self.name, balance_text(account, _lang(ctx)))

    def result_text(self, text: str, *, user_lang: str) -> str:
        """The balance reads as it is (R10)."""
        return text


def balance_text(account: LeaveAccount, lang: str) -> str:
    """The balance in a sentence of the user's language."""
    on_demand = ON_DEMAND_DAYS - account.on_demand_used
    if lang == "en":
        return (
            f"Leave balance of {account.name}: {account.remaining} days of leave left "
            f"({account.entitlement} a year + {account.carried_over} carried over - "
            f"{account.taken} taken); leave on demand: {on_demand} of {ON_DEMAND_DAYS} days left; "
            f"planned: {account.planned} days."
        )
    return (
        f"Saldo urlopu ({account.name}): zostało {account.remaining} dni urlopu "
        f"({account.entitlement} dni wymiaru + {account.carried_over} dni zaległych - "
        f"{account.taken} wykorzystanych); urlop na żądanie: zostały {on_demand} z "
        f"{ON_DEMAND_DAYS} dni; zaplanowane: {account.planned} dni."
    )


Account = Literal["email", "vpn", "erp"]

ACCOUNT_WORDS: Mapping[Account, tuple[str, ...]] = {
    "email": (
        *("email", "mail", "maila", "mailem", "poczta", "poczty", "poczcie", "pocztę"),
        *("outlook", "domenowe", "domenowego", "windows", "komputer", "komputera"),
    ),
    "vpn": ("vpn", "forticlient", "authenticator", "vpna"),
    "erp": ("erp", "comarch", "xl"),
}
"""The words that name each account, as employees write them (folded when matched)."""

ACCOUNT_CHOICES: Mapping[str, tuple[str, ...]] = {
    "pl": ("poczta e-mail", "VPN", "ERP"),
    "en": ("e-mail", "VPN", "ERP"),
}
"""The clarification's choices by language, in the order of :data:`ACCOUNT_WORDS`."""


@cache
def reset_steps() -> Mapping[str, Mapping[str, tuple[str, ...]]]:
    """The reset steps of each account by language (``data/it_accounts.json``)."""
    data = json.loads((DATA_DIR / "it_accounts.json").read_text(encoding="utf-8"))
    return {acc: {lang: tuple(steps) for lang, steps in by.items()} for acc, by in data.items()}


ABOUT_ACCESS = ("hasł", "hasl", "password", "konto", "konta", "account", "login", "logow",
                "zablokow", "locked", "reset", "odblokow", "unlock")  # fmt: skip
"""Word beginnings of a question about getting into an account: the tool's subject. A
question without one (the VPN server's address, an error code) is not the tool's, even
when it names an account; it gets the documents' answer, not "which account?" (Q1)."""


def about_access(text: str) -> bool:
    """Whether ``text`` asks about a password or a locked account (the tool's subject)."""
    return any(fold(w).startswith(ABOUT_ACCESS) for w in words(text))


def account_in(text: str) -> Account | None:
    """The account a text names, or ``None`` when it names none or more than one."""
    said = {fold(w) for w in words(text)}
    found = [acc for acc, names in ACCOUNT_WORDS.items() if said & {fold(n) for n in names}]
    return found[0] if len(found) == 1 else None


class AccountRequest(BaseModel):
    """Which account the user means."""

    account: Account | None = Field(
        default=None,
        description="The account whose password the user asks about: email, vpn or erp.",
        examples=["email", "vpn", "erp"],
    )


class ItAccountHelpTool(ClarifiableTool[AccountRequest]):
    """Q1, R4: asks which account when the question does not say, then streams the steps."""

    name = "it_account_help"
    domain = DOMAIN_NAME
    request_model = AccountRequest
    returns_answer = True
    description = (
        "Reset hasła i odblokowanie konta: poczta e-mail, VPN, ERP. "
        "Password reset and locked accounts: e-mail, VPN, ERP."
    )
    instruction = "Fill account with email, vpn or erp when the user names the account."
    executable_instruction = (
        "it_account_help: true when the user forgot, wants to reset or change a password "
        "(hasło, zapomniałem hasła, nie pamiętam hasła, resetować) or their account is locked "
        "(konto zablokowane), for e-mail, VPN or ERP."
    )
    routing_examples = (
        "Chcę ustawić nowe hasło do skrzynki pocztowej.",
        "Nie pamiętam hasła do VPN.",
        "I forgot my ERP password.",
    )
    not_for = ("Jaki jest adres serwera VPN?", "Co oznacza błąd VPN?")

    def execute(self, request: AccountRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The steps for the named account, or the question which account (Q1).

        Not about a password or a locked account: not mine (R1), whatever account it
        names; the retrieval answers it. About one, with no account named: ask.
        """
        question_text = ctx.task.task_prompt or ctx.text
        if not about_access(question_text):
            return None
        account = request.account or account_in(ctx.text)
        if account is None:
            lang = _lang(ctx)
            question = (
                "Which account is it about: e-mail, VPN or ERP?"
                if lang == "en"
                else "Którego konta dotyczy pytanie: poczta e-mail, VPN czy ERP?"
            )
            return ToolResult.clarification(self.name, question, list(ACCOUNT_CHOICES[lang]))
        return self._stream(account, ctx)

    def execute_with_clarification(
        self, request: AccountRequest, ctx: ToolCallContext, reply: str
    ) -> ToolResult | None:
        """Q2: the reply names the account; a reply naming none is not mine (R1)."""
        account = account_in(reply) or request.account
        return None if account is None else self._stream(account, ctx)

    def _stream(self, account: Account, ctx: ToolCallContext) -> ToolResult:
        steps = reset_steps()[account][_lang(ctx)]
        ctx.stream_answer(_lines(steps))
        return ToolResult.as_answered(self.name, [_source("reset-hasla", " ".join(steps))])


def _lines(steps: tuple[str, ...]) -> Iterator[str]:
    for number, step in enumerate(steps, 1):
        yield f"{number}. {step}\n"


@dataclass(frozen=True)
class Unit:
    """One unit of the phone directory."""

    unit: str
    unit_en: str
    extension: str
    email: str | None
    words: tuple[str, ...]

    def line(self, lang: str) -> str:
        """The unit's line: "Dział kadr: telefon wewnętrzny 2200, e-mail kadry@example.pl"."""
        if lang == "en":
            mail = f", e-mail {self.email}" if self.email else ""
            return f"{self.unit_en} ({self.unit}): extension {self.extension}{mail}."
        mail = f", e-mail {self.email}" if self.email else ""
        return f"{self.unit}: telefon wewnętrzny {self.extension}{mail}."


@cache
def units() -> tuple[Unit, ...]:
    """The phone directory (``data/contacts.json``)."""
    data = json.loads((DATA_DIR / "contacts.json").read_text(encoding="utf-8"))
    return tuple(Unit(**{**row, "words": tuple(row["words"])}) for row in data)


def units_in(text: str) -> list[Unit]:
    """The units a text names, by their words or a typo-free prefix of six letters."""
    said = {fold(w) for w in words(text)}
    prefixes = {w[:6] for w in said if len(w) >= 6}

    def named(unit: Unit) -> bool:
        own = {fold(w) for w in unit.words}
        return bool(said & own) or any(w[:6] in prefixes for w in own if len(w) >= 6)

    return [unit for unit in units() if named(unit)]


class PhoneDirectoryTool(ChatbotTool[EmptyRequest]):
    """R3: a unit's internal extension and e-mail, a finished answer."""

    name = "phone_directory"
    domain = DOMAIN_NAME
    returns_answer = True
    description = (
        "Numery wewnętrzne i e-maile działów: kadry, płace, księgowość, IT, recepcja, prawny. "
        "Internal phone extensions and e-mail addresses of the company's units."
    )
    executable_instruction = (
        "phone_directory: true when the user asks for the internal phone number (numer "
        "wewnętrzny, telefon, extension) or the e-mail address of a unit (dział kadr, płac, "
        "księgowości, Helpdesk IT, recepcja, kancelaria, dział prawny, BHP, administracja)."
    )
    routing_examples = (
        "Podaj numer wewnętrzny działu płac.",
        "Pod jaki numer dzwonić do działu BHP?",
        "What is the IT helpdesk's extension?",
    )
    not_for = ("Jaki jest adres serwera VPN?", "Gdzie wysłać fakturę?")

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The named units' lines; a question naming no unit is not mine (R1)."""
        found = units_in(ctx.text)
        if not found:
            return None
        text = "\n".join(unit.line(_lang(ctx)) for unit in found)
        return ToolResult.as_answer(self.name, text, sources=[_source("kontakty", text)])


APPROVERS = {
    "pl": ("kierownik działu", "dyrektor finansowy", "prezes zarządu"),
    "en": ("the head of department", "the finance director", "the CEO (prezes zarządu)"),
}
"""Who approves an invoice, in the order they approve."""

THRESHOLDS = (5_000, 50_000)
"""Net amounts in PLN above which the next approver joins (page "Obieg faktur kosztowych")."""

_AMOUNT = re.compile(
    r"(\d{1,3}(?:[ \u00a0.,]\d{3})+|\d+)(?:[.,]\d{1,2})?\s*(tys|k\b)?", re.IGNORECASE
)


def amount_in(text: str) -> int | None:
    """The largest amount of money a text names ("12 000 zł", "3 tys.", "80,000 PLN")."""
    found = []
    for digits, thousands in _AMOUNT.findall(text):
        value = int(re.sub(r"\D", "", digits))
        found.append(value * 1000 if thousands else value)
    return max(found) if found else None


def approvers(amount: int) -> int:
    """How many approvers an invoice of ``amount`` needs (1-3)."""
    return 1 + sum(amount > limit for limit in THRESHOLDS)


class InvoiceApprovalTool(ChatbotTool[EmptyRequest]):
    """R3, T3: who approves an invoice, offered only in the workflow system ``obieg``."""

    name = "invoice_approval"
    domain = DOMAIN_NAME
    eligible_system = "obieg"
    returns_answer = True
    description = (
        "Ścieżka akceptacji faktury kosztowej według kwoty. "
        "Who approves a cost invoice, by its amount."
    )
    executable_instruction = (
        "invoice_approval: true when the user asks who approves (akceptuje, zatwierdza) an "
        "invoice (faktura) of an amount, or the invoice's approval path (ścieżka akceptacji)."
    )
    routing_examples = (
        "Kto akceptuje fakturę na 12 000 zł?",
        "Who approves an invoice of 8,000 PLN?",
    )
    not_for = (
        "W jakim terminie trzeba opisać fakturę?",
        "Na jaki adres wysyła się faktury od kontrahentów?",
    )

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """The approvers for the named amount; a question without one is not mine (R1)."""
        amount = amount_in(ctx.text)
        if amount is None:
            return None
        lang = _lang(ctx)
        chain = ", ".join(APPROVERS[lang][: approvers(amount)])
        written = f"{amount:,}".replace(",", " ")
        text = (
            f"An invoice of {written} PLN net is approved by: {chain}."
            if lang == "en"
            else f"Fakturę na {written} zł netto akceptuje kolejno: {chain}."
        )
        return ToolResult.as_answer(self.name, text, sources=[_source("obieg-faktur", text)])


__all__ = [
    "HolidayCalendarTool",
    "InvoiceApprovalTool",
    "ItAccountHelpTool",
    "LeaveBalanceTool",
    "PhoneDirectoryTool",
    "amount_in",
    "calendar_lines",
    "leave_accounts",
]
