"""Every prompt the chat-model assistant sends, as named ``str.format`` templates."""

from __future__ import annotations

from collections.abc import Sequence

from toolweave.tools.texts import Texts, text_for

NORMALIZE_PROMPT = """\
You prepare a chatbot user's message for a retrieval and tool pipeline.
Return:
- question: the message as a standalone question. When the message is a follow-up
  that only makes sense with the earlier turns (for example "and on Friday?" or
  "és pénteken?"), rewrite it into a complete question that keeps everything the
  earlier question asked and replaces what the follow-up changes. Otherwise keep
  the message's wording. Keep the user's language.
- user_lang: the ISO 639-1 code of the language of the user's message; when it
  cannot be told, use "{default_lang}".
- important_words: the key words of the question (names, subjects, dates,
  numbers), as they appear in it, without stopwords.
- prompt_type: "factual", "procedural", "smalltalk" or "other".

Earlier turns of the conversation (oldest first; may be empty):
{history}"""

ROUTING_RULES = """\
In best_fit name the tool that fits the task best, or "none" when none fits (a
greeting, small talk, a pasted error, another subject). Then answer each tool's
question: null for no; for yes, run true and a reason: what in the task asks for
it. A second yes only when the task also asks what the first cannot do."""

TERMINAL_RULE = """\
A tool marked "ends the conversation" answers alone:
say yes to it only when the task clearly is what it is for (not when it merely
shares a word with it), and say why."""
"""Added to :data:`ROUTING_RULES` only when a candidate ends the run (A9; else waste, A10)."""

ROUTING_PROMPT = """\
Decide which tools must run for the user's task.
{rules}

Tools:
{tools}"""

FUSED_ROUTING_PROMPT = """\
Decide which tools must run for the user's task, and fill the request of each
tool that runs.
{rules}
With a yes, fill request from the user's text (following the tool's "fill:"
line, if any); a field the text does not state is null, never guessed.

Tools:
{tools}
{search}
{extraction_guidance}"""

SEARCH_RULE = """
Last, in search: up to 10 words in {language} that a page of the documents would
use for what the user asks (its name for the thing or the situation), not the
user's own words.
"""
"""Added to :data:`FUSED_ROUTING_PROMPT` when the routing reply asks for search words (D9)."""

EXTRACTION_SYSTEM_PROMPT = """\
Extract the parameters of a tool call from the user's text.
Fill only what the text states; every field the text does not state is null.
Tasks of the conversation (may be empty):
{tasks}
Instruction:
{instruction}"""

DECOMPOSITION_PROMPT = """\
Read the user's task for the coordinators below and fill each one's fields from
the task's text. Fill only what the text states, as it is written there; a
field the text does not state is null, an empty list or false, never guessed.

Coordinators:
{coordinators}"""

ANSWER_PROMPT = """\
Answer the user's question from the context below, in {language}.
Use only the context; when it does not contain the answer, say so briefly.
Be concise. {citing}
{guaranteed}
Context:
{context}"""

CITE_MARKERS = "Cite the numbers of the context passages you used, like [1]."
"""How the answer cites when written as free text: markers the answer node reads (R9)."""

CITE_SENTENCES = (
    "Give the answer as sentences; with each sentence, list in sources the numbers of "
    "the context passages that say it. Every time, number and name in a sentence must "
    "be written in a passage it lists."
)
"""How the answer cites in the constrained reply (R9): the ids are the schema's enum."""

ANSWER_RETRY_PROMPT = """\
Your earlier answer said the following, which the passages it cited do not say:
{failing}
Answer again with only what the passages say, each sentence with the passages
that say it."""
"""Added to :data:`ANSWER_PROMPT` when an answer is asked once more (R9)."""

ANSWER_PARTS_PROMPT = """\
The question has {count} parts. Answer each part, in this order, each from its
own passages and guaranteed context; do not leave a part out:
{parts}"""
"""Added to :data:`ANSWER_PROMPT` when a coordinator split the question into subtasks (S6)."""

ANSWER_CLARIFIED_PROMPT = """\
Before this answer the user was asked the following and replied. The replies are
part of the user's question: answer with them in mind, and do not ask these
questions again.
{exchanges}"""
"""Added to :data:`ANSWER_PROMPT` after a clarification round (Q8)."""

_LANGUAGES = {
    "hu": "Hungarian", "en": "English", "de": "German", "fr": "French", "es": "Spanish",
    "it": "Italian", "pl": "Polish", "ro": "Romanian", "sk": "Slovak",
}  # fmt: skip

NO_CONTEXT = "(none)"
"""What an empty context section says."""

GUARANTEED_PASSAGES = "Found for this question:"
"""The source line above the guaranteed texts when a citing answer numbers them (R5, R9).

It heads a tool's result for this person, a deep search's reading and a finished part of
a split question alike; "Your own data:" would misname the last two.
"""

GUARANTEED_SECTION = "\nGuaranteed context (always relevant):\n{guaranteed}\n"
"""The guaranteed context's section of :data:`ANSWER_PROMPT`; left out when it is empty (A10)."""


def no_information_answer(lang: str, texts: Texts | None = None) -> str:
    """The answer that says the sources do not cover the question, in ``lang`` (A7, R9)."""
    return text_for("no_information", lang, texts)


def closest_pages(lang: str, pages: Sequence[str], texts: Texts | None = None) -> str:
    """After a "no information" answer whose sentences were dropped: the pages they cited (R9)."""
    return text_for("closest_pages", lang, texts, pages="; ".join(pages))


def language_name(code: str) -> str:
    """English name of an ISO 639-1 ``code`` for prompts; the code itself when unknown."""
    return _LANGUAGES.get(code.lower(), f"the language with ISO 639-1 code {code!r}")


def normalize_system(*, history: str, default_lang: str) -> str:
    """The normalization system prompt (A1)."""
    return NORMALIZE_PROMPT.format(history=history or NO_CONTEXT, default_lang=default_lang)


def _rules(terminal: bool) -> str:
    return f"{ROUTING_RULES}\n{TERMINAL_RULE}" if terminal else ROUTING_RULES


def routing_system(*, tools: str, terminal: bool = False) -> str:
    """The routing system prompt (T5); ``terminal``: a candidate ends the run (A9)."""
    return ROUTING_PROMPT.format(rules=_rules(terminal), tools=tools)


def fused_routing_system(
    *,
    tools: str,
    extraction_guidance: str,
    terminal: bool = False,
    search_language: str | None = None,
) -> str:
    """The fused routing-and-extraction prompt (T5 + T7); ``search_language``: D9."""
    language = None if search_language is None else language_name(search_language)
    search = "" if language is None else SEARCH_RULE.format(language=language)
    text = FUSED_ROUTING_PROMPT.format(
        rules=_rules(terminal), tools=tools, search=search, extraction_guidance=extraction_guidance
    )
    return text.rstrip() if not extraction_guidance else text


def fill_extraction_prompt(prompt: str, *, tasks: str | None, instruction: str) -> str:
    """Replace ``{tasks}`` and ``{instruction}`` in an extraction prompt, other braces kept."""
    return prompt.replace("{tasks}", tasks or "").replace("{instruction}", instruction)


def decomposition_system(*, coordinators: str) -> str:
    """The system prompt of the coordinators' decomposition call (C1, M2)."""
    return DECOMPOSITION_PROMPT.format(coordinators=coordinators)


def answer_system(
    *,
    language: str,
    context: str,
    guaranteed: str,
    parts: Sequence[str] = (),
    exchanges: str = "",
    cited: bool = False,
    failing: Sequence[str] = (),
) -> str:
    """The final answer's instructions after the domain's system prompt (A7, S6, Q8, R9)."""
    sections = [
        ANSWER_PROMPT.format(
            language=language,
            context=context or NO_CONTEXT,
            guaranteed=GUARANTEED_SECTION.format(guaranteed=guaranteed) if guaranteed else "",
            citing=CITE_SENTENCES if cited else CITE_MARKERS,
        )
    ]
    if len(parts) > 1:
        sections.append(answer_parts_system(parts))
    if exchanges:
        sections.append(ANSWER_CLARIFIED_PROMPT.format(exchanges=exchanges))
    if failing:
        lines = "\n".join(f"- {sentence}" for sentence in failing)
        sections.append(ANSWER_RETRY_PROMPT.format(failing=lines))
    return "\n\n".join(sections)


def answer_parts_system(parts: Sequence[str]) -> str:
    """The parts section of the answer's instructions (S6): one numbered line per part."""
    lines = "\n".join(f"{n}. {part}" for n, part in enumerate(parts, start=1))
    return ANSWER_PARTS_PROMPT.format(count=len(parts), parts=lines)


JSON_MODE_SCHEMA_PROMPT = (
    "Reply with one JSON object and nothing else. It must match this JSON schema "
    "(use the property names exactly as written):\n{schema}"
)
"""Sent in ``json_mode`` (a server without ``json_schema`` support): the schema in words."""


def json_mode_schema(*, schema: str) -> str:
    """The system message that describes the reply's JSON schema in ``json_mode``."""
    return JSON_MODE_SCHEMA_PROMPT.format(schema=schema)


# -- the gatekeeper with search rewrites (D1, D8) ---------------------------------------

GATEKEEPER_SEARCH_PROMPT = """\
You check whether the context below is enough to answer the user's question
precisely. Return sufficient=true when it is. Otherwise return sufficient=false
and list in missing the pieces of information the context lacks, each as a
short standalone question in the user's language.
For each piece also give search: 1-3 other wordings of it in {documents_language},
as a document on the subject would word it (its terms for the thing, not the
user's words). In English, for "Can I bring my dog?", they would be ["pets allowed
in the building", "animal policy"]; write yours in {documents_language}.

Context:
{context}"""
"""The gatekeeper's system prompt: the verdict, and per missing piece its search rewrites."""

CONTEXT_LANGUAGE = "the language the context is written in"
"""How the gatekeeper prompt names the documents' language when it cannot be told."""


def gatekeeper_search_system(*, context: str, documents_language: str = "") -> str:
    """The gatekeeper's system prompt (D1) asking for each piece's rewrites (D8)."""
    return GATEKEEPER_SEARCH_PROMPT.format(
        context=context or NO_CONTEXT, documents_language=documents_language or CONTEXT_LANGUAGE
    )


READ_PAGE_PROMPT = """\
Answer the user's question from the passage below alone, in {language}, in one
full sentence that names what the facts are about. If the passage does not
answer it, return answer=null. Quote facts exactly (times, numbers, names); do
not add anything the passage does not say."""
"""The deep search's page reading (D3, D8): a full sentence, so a find keeps its subject."""


def read_page_system(*, language: str, passage: str) -> str:
    """The page-reading prompt of the deep-search tools (D3, D8)."""
    return f"{READ_PAGE_PROMPT.format(language=language)}\n\nPassage:\n{passage or NO_CONTEXT}"
