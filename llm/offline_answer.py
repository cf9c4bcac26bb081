"""The offline model's answers (A7, S6, Q8, R9): :func:`answer_lines`."""

from __future__ import annotations

from collections.abc import Sequence

from toolweave.llm import offline_reading
from toolweave.llm.port import AnswerPart, AnswerRequest
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit


def answer_lines(
    request: AnswerRequest, max_sentences: int
) -> list[tuple[str, UniqueTextDocument | None]]:
    """The answer's lines, each with the document it quotes (``None``: guaranteed; S6, Q8)."""
    whole = AnswerPart(request.question, request.documents, request.guaranteed)
    replies = "" if request.parts else request.replies
    lines: list[tuple[str, UniqueTextDocument | None]] = []
    for part in request.parts or (whole,):
        lines += [(text.strip(), None) for text in part.guaranteed if text.strip()]
        picked = _read(part.prompt, part.documents, max_sentences, replies)
        if not picked and not part.guaranteed:
            picked = _read(part.prompt, request.documents, max_sentences, replies)
        lines += [(c.text, c.source) for c in picked]
    if request.parts and not lines:
        picked = _read(request.question, request.documents, max_sentences, request.replies)
        lines = [(c.text, c.source) for c in picked]
    if not request.parts and replies and not any(doc for _, doc in lines):
        # the replies in words the context does not use ("Cardiology" for a page
        # that says "Kardiológia"): the tool understood them; read the question alone
        lines += [
            (c.text, c.source) for c in _read(request.question, request.documents, max_sentences)
        ]
    lines += [(text.strip(), None) for text in request.guaranteed if text.strip()]
    kept: dict[str, UniqueTextDocument | None] = {}
    for text, doc in lines:  # each line once, where it first comes
        kept.setdefault(text, doc)
    return list(kept.items())


def _read(
    question: str, documents: Sequence[UniqueTextDocument], max_sentences: int, replies: str = ""
) -> list[offline_reading.Candidate[UniqueTextDocument]]:
    """The sentences answering ``question``, then each question it joins (S6); ``replies``: Q8."""
    picked = _pick(f"{question} {replies}".strip(), documents, max_sentences)
    clauses = offline_reading.question_parts(question)
    if len(clauses) < 2:
        return picked
    seen = {(id(c.source), c.text) for c in picked}
    for clause in clauses:
        for candidate in _pick(f"{clause} {replies}".strip(), documents, max_sentences):
            if (id(candidate.source), candidate.text) not in seen:
                seen.add((id(candidate.source), candidate.text))
                picked.append(candidate)
    return picked


def _pick(
    question: str, documents: Sequence[UniqueTextDocument], max_sentences: int
) -> list[offline_reading.Candidate[UniqueTextDocument]]:
    """The sentences that answer ``question``, in context order (none when none does)."""
    by_number = {
        (d.document_id, d.page, d.sentence_number): d.text.strip()
        for d in documents
        if d.sentence_number
    }
    candidates: list[offline_reading.Candidate[UniqueTextDocument]] = []
    for doc in documents:
        if doc.sentence_number:
            earlier = [
                by_number.get((doc.document_id, doc.page, doc.sentence_number - back))
                for back in range(1, offline_reading.ANTECEDENT_REACH + 1)
            ]
            runs: list[tuple[Sequence[str | None], str]] = [(earlier, doc.text.strip())]
        else:
            sentences = kit.split_sentences(doc.text)
            runs = [(sentences[:i][::-1], s) for i, s in enumerate(sentences)]
        for before, sentence in runs:
            if sentence:
                candidates.append(
                    offline_reading.Candidate(
                        doc,
                        sentence,
                        doc.document_name,
                        doc.sentence_score,
                        (before[0] or "") if before else "",
                        offline_reading.antecedent_of(sentence, before),
                    )
                )
    best = offline_reading.answering(question, candidates)[:max_sentences]
    order = {id(c): i for i, c in enumerate(candidates)}
    return sorted(best, key=lambda c: order[id(c)])
