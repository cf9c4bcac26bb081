"""The library's own sentences for people, by language, and a domain's own (P4, T10).

Everything toolweave itself says to a person (the "no information" answer, the notes on
an action done already or not done, the question for a missing input, the command
line's lines) is one entry of :data:`LIBRARY_TEXTS`: a key, then a text per ISO 639-1
language. The library has English, Hungarian and Polish; a domain in another language,
or one that words them its own way, gives its own in ``Domain(texts=...)``:

Example:
    >>> from toolweave import Domain
    >>> domain = Domain(name="office", texts={
    ...     "no_information": {"de": "Dazu habe ich in den Quellen nichts gefunden."}})
    >>> text_for("no_information", "de", domain.texts)
    'Dazu habe ich in den Quellen nichts gefunden.'
    >>> text_for("no_information", "fr", domain.texts)  # neither has French: English
    'I found no information about this in the available sources.'
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter

from toolweave.state.errors import ConfigurationError

Texts = Mapping[str, Mapping[str, str]]
"""Sentences for people: key of :data:`LIBRARY_TEXTS` → language → text (``{name}``
placeholders as the library's English text has them)."""

# fmt: off
LIBRARY_TEXTS: Texts = {
    # -- answers (A7, R9) ---------------------------------------------------------------
    "no_information": {
        "en": "I found no information about this in the available sources.",
        "hu": "Nem találtam erről információt az elérhető forrásokban.",
        "pl": "Nie znaleziono informacji na ten temat w dostępnych źródłach.",
    },
    "closest_pages": {  # after a "no information" answer whose sentences were dropped (R9)
        "en": "The closest pages I found: {pages}",
        "hu": "A legközelebbi oldalak, amelyeket találtam: {pages}",
        "pl": "Najbliższe strony, które znalazłem: {pages}",
    },
    # -- clarification (Q1, Q2) ---------------------------------------------------------
    "ask_for_input": {  # the question for a required input the message did not fill (Q1)
        "en": "Which {field}?", "hu": "Kérem, adja meg: {field}.", "pl": "Proszę podać: {field}.",
    },
    "for_example": {  # added to it for a field of a set form (a ``pattern``)
        "en": " (for example {example})", "hu": " (például {example})",
        "pl": " (na przykład {example})",
    },
    "clarification_limit": {  # the clarification rounds are used up (Q2)
        "en": "I still need more information to answer, but I have asked too many questions "
        "already. Please ask again with the details included. (Last question: {question})",
        "hu": "A válaszhoz még több információ kellene, de már túl sok kérdést tettem fel. "
        "Kérem, tegye fel újra a kérdést a részletekkel együtt. (Utolsó kérdés: {question})",
        "pl": "Do odpowiedzi potrzeba jeszcze więcej informacji, ale padło już zbyt wiele pytań. "
        "Proszę zadać pytanie ponownie, podając szczegóły. (Ostatnie pytanie: {question})",
    },
    "cancelled": {  # the person dropped the open question ("never mind", Q2)
        "en": "All right, I have dropped that question. What else can I help you with?",
        "hu": "Rendben, ezt a kérdést elengedtem. Miben segíthetek még?",
        "pl": "Dobrze, pomijam to pytanie. W czym jeszcze mogę pomóc?",
    },
    # -- actions (S5, Q6, R7) -----------------------------------------------------------
    "sent_again": {  # a repeat of a message whose run acted: its answer again
        "en": "This message was answered already, and what it asked for was done then; "
        "here is that answer again. Nothing was done a second time.",
        "hu": "Erre az üzenetre már válaszoltam, és amit kért, akkor megtörtént; "
        "itt van újra az akkori válasz. Semmi sem történt meg másodszor.",
        "pl": "Na tę wiadomość już odpowiedziano, a to, o co prosiła, zostało wtedy wykonane; "
        "oto ta sama odpowiedź. Nic nie wykonano po raz drugi.",
    },
    "kept_effect": {  # an action kept from before an amendment; ``{said}``: its result
        "en": "Done before the request was amended, and not done again: {said} "
        "The amendment does not change this.",
        "hu": "Ez a kérés módosítása előtt már megtörtént, és nem történt meg újra: {said} "
        "A módosítás ezen nem változtat.",
        "pl": "Wykonano to przed zmianą prośby i nie wykonano ponownie: {said} "
        "Zmiana prośby tego nie zmienia.",
    },
    "kept_effect_unsaid": {  # the same for an action whose result has no text
        "en": "Something was done before the request was amended ({tool}), and not done "
        "again. The amendment does not change it.",
        "hu": "A kérés módosítása előtt már történt valami ({tool}), és nem történt meg újra. "
        "A módosítás ezen nem változtat.",
        "pl": "Przed zmianą prośby coś już wykonano ({tool}) i nie wykonano ponownie. "
        "Zmiana prośby tego nie zmienia.",
    },
    "failed_effect": {  # a tool that acts raised: not done, so asked again it acts (R7)
        "en": "This was not done: {tool} failed ({error}). Please ask again.",
        "hu": "Ez nem történt meg: a(z) {tool} lépés nem sikerült ({error}). Kérem, kérje újra.",
        "pl": "Tego nie wykonano: krok {tool} się nie powiódł ({error}). "
        "Proszę poprosić ponownie.",
    },
    "unsure_effect": {  # a tool that acts got no answer in time: maybe done (R7, S5, Q6)
        "en": "This may or may not have been done: {tool} got no answer ({error}). Ask again "
        "with the same words: the retry is sent as the same request, not a new one.",
        "hu": "Nem biztos, hogy ez megtörtént: a(z) {tool} lépés nem kapott választ ({error}). "
        "Kérje újra ugyanazokkal a szavakkal: az ismétlés ugyanaz a kérés lesz, nem új.",
        "pl": "Nie wiadomo, czy to wykonano: krok {tool} nie dostał odpowiedzi ({error}). "
        "Proszę poprosić ponownie tymi samymi słowami: ponowienie będzie tą samą prośbą, "
        "nie nową.",
    },
    "done_already": {  # an action kept from an earlier run whose result had no text
        "en": "Done already ({tool}), and not done again.",
        "hu": "Ez már megtörtént ({tool}), és nem történt meg újra.",
        "pl": "Już wykonano ({tool}) i nie wykonano ponownie.",
    },
    "client_only": {  # a tool that runs only in the chat page, asked where there is none (W3)
        "en": "This can only be done in the chat page ({tool}); it was not done here.",
        "hu": "Ez csak a csevegőoldalon végezhető el ({tool}); itt nem történt meg.",
        "pl": "To można zrobić tylko na stronie czatu ({tool}); tutaj tego nie zrobiono.",
    },
    "still_running": {  # a cancelled run's call of a tool that acts has not ended yet
        "en": "This is still being done: {tool} has not finished yet. "
        "Please send the same message again in a moment for its result.",
        "hu": "Ez még folyamatban van: a(z) {tool} lépés még nem fejeződött be. "
        "Kérem, küldje el ugyanezt az üzenetet egy kis idő múlva az eredményéért.",
        "pl": "To jest jeszcze w toku: krok {tool} jeszcze się nie zakończył. "
        "Proszę za chwilę wysłać tę samą wiadomość ponownie, aby poznać wynik.",
    },
    # -- sources (R9) -------------------------------------------------------------------
    "sources": {"en": "Sources:", "hu": "Források:", "pl": "Źródła:"},
    "page": {"en": "p. {pages}", "hu": "{pages}. oldal", "pl": "s. {pages}"},
    # -- the command line (P4) ----------------------------------------------------------
    "assistant": {
        "en": "answers come from {label}", "hu": "a válaszokat adja: {label}",
        "pl": "odpowiedzi podaje: {label}",
    },
    "offline": {
        "en": "answers come from the offline model (no LLM: lexical routing, extractive "
        "answers)",
        "hu": "a válaszokat az offline modell adja (nincs LLM: szavak szerinti "
        "eszközválasztás, a dokumentumokból kiemelt válaszok)",
        "pl": "odpowiedzi podaje model offline (bez LLM: wybór narzędzi po słowach, "
        "odpowiedzi wyjęte z dokumentów)",
    },
    "reply_hint": {
        "en": '(reply with: toolweave ask --thread {thread} --domain {domain}{more} "...")',
        "hu": "(válaszoljon így: toolweave ask --thread {thread} --domain {domain}"
        '{more} "...")',
        "pl": "(odpowiedz tak: toolweave ask --thread {thread} --domain {domain}"
        '{more} "...")',
    },
    "chat_reply_hint": {
        "en": "(reply to it, or ask something else: a new question gets its answer)",
        "hu": "(válaszoljon rá, vagy kérdezzen mást: az új kérdésre új választ kap)",
        "pl": "(odpowiedz albo zapytaj o coś innego: nowe pytanie dostanie odpowiedź)",
    },
    "finishing": {
        "en": "(thread {thread}: finishing the run that stopped mid-way: {question})",
        "hu": "({thread} beszélgetés: befejezem a félbemaradt választ erre: {question})",
        "pl": "(rozmowa {thread}: kończę przerwaną odpowiedź na: {question})",
    },
    "finishing_unknown": {
        "en": "(thread {thread}: finishing the run that stopped mid-way)",
        "hu": "({thread} beszélgetés: befejezem a félbemaradt választ)",
        "pl": "(rozmowa {thread}: kończę przerwaną odpowiedź)",
    },
    "chat_thread": {
        "en": "conversation {thread} (continue it with: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")',
        "hu": "beszélgetés: {thread} (folytatás: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")',
        "pl": "rozmowa: {thread} (dalej: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")',
    },
    "chat_leave": {
        "en": 'type "exit" or press Ctrl-D to leave', "hu": 'kilépés: "exit" vagy Ctrl-D',
        "pl": 'wyjście: "exit" lub Ctrl-D',
    },
    "prompt": {"en": "you> ", "hu": "ön> ", "pl": "ty> "},
    "split": {
        "en": "Split the question into {count} parts", "hu": "A kérdést {count} részre bontottam",
        "pl": "Pytanie podzielone na {count} części",
    },
    "adjusted": {
        "en": "Adjusted the question", "hu": "Pontosítottam a kérdést",
        "pl": "Pytanie doprecyzowane",
    },
    "one_more_step": {
        "en": "One more step is needed", "hu": "Még egy lépés kell",
        "pl": "Potrzebny jeszcze jeden krok",
    },
    "looking_further": {
        "en": "Looking further: the first pages did not say it all",
        "hu": "Tovább keresek: az első oldalak nem mondtak el mindent",
        "pl": "Szukam dalej: pierwsze strony nie powiedziały wszystkiego",
    },
    "model_retry": {
        "en": "The model did not answer; trying again",
        "hu": "A modell nem válaszolt; újra próbálom",
        "pl": "Model nie odpowiedział; próbuję ponownie",
    },
    "reply_refused": {
        "en": "(the reply did not reach {tools}, which asked: its gate refused the user data "
        "this reply came with (T4). --user-data is never stored: give it with every reply, "
        "then ask again)",
        "hu": "(a válasz nem jutott el ide: {tools}, pedig ez kérdezett: a kapuja nem fogadta "
        "el a válasz felhasználói adatait (T4). A --user-data nincs tárolva: adja meg minden "
        "válasszal, és kérdezzen újra)",
        "pl": "(odpowiedź nie dotarła do {tools}, które pytało: bramka odrzuciła dane "
        "użytkownika tej odpowiedzi (T4). --user-data nie jest zapisywane: podaj je z "
        "każdą odpowiedzią i zapytaj ponownie)",
    },
}
"""Every sentence the library says to a person, by key and language (English always)."""
# fmt: on


def text_for(key: str, lang: str | None, own: Texts | None = None, **values: str) -> str:
    """The sentence ``key`` in ``lang`` with ``values`` filled in.

    The domain's own text in ``lang`` first, then the library's, then the domain's
    English, then the library's English. Without ``values`` the template is returned
    as it is (placeholders kept, for a caller that fills them later).
    """
    lang = lang or "en"
    mine = (own or {}).get(key) or {}
    library = LIBRARY_TEXTS[key]
    template = mine.get(lang) or library.get(lang) or mine.get("en") or library["en"]
    return template.format(**values) if values or not _placeholders(template) else template


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def check_texts(texts: Texts, *, owner: str) -> None:
    """Raise :class:`ConfigurationError` for a key the library does not say or a bad text.

    A text may leave out the English text's placeholders but not name others: a
    ``{name}`` the library does not fill would fail the run that says it.
    """
    for key, by_language in texts.items():
        if key not in LIBRARY_TEXTS:
            known = ", ".join(sorted(LIBRARY_TEXTS))
            raise ConfigurationError(
                f"{owner}: texts has no key {key!r}; the library's sentences are: {known} "
                "(toolweave.LIBRARY_TEXTS shows each with its placeholders)"
            )
        allowed = _placeholders(LIBRARY_TEXTS[key]["en"])
        for lang, text in by_language.items():
            try:
                extra = _placeholders(text) - allowed
            except ValueError as error:  # an unmatched brace
                raise ConfigurationError(
                    f"{owner}: texts[{key!r}][{lang!r}] is not a format string ({error}); "
                    "write a literal brace as {{ or }}"
                ) from error
            if extra:
                raise ConfigurationError(
                    f"{owner}: texts[{key!r}][{lang!r}] names {sorted(extra)}, which the "
                    f"library does not fill; it fills {sorted(allowed) or 'nothing'}"
                )
