"""File readers for ingestion: .txt, .md, .html and .pdf into a :class:`SourceDocument`."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import PurePath

from toolweave.tools.search.protocol import SourceDocument

PAGE_BREAK = "<!-- page -->"  # a markdown line holding only this starts a page

_FRONT_MATTER = re.compile(r"\A---\s*\n(?P<meta>.*?)\n---\s*\n", re.DOTALL)
_PAGE_SPLIT = re.compile(r"^\s*<!--\s*page\s*-->\s*$|\f", re.MULTILINE)
_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset"}
    | {"figcaption", "figure", "footer", "form", "header", "hr", "li", "main", "nav", "ol"}
    | {"p", "pre", "section", "table", "td", "th", "tr", "ul"}
)
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "head"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


class ReadError(Exception):
    """A file could not be read into a document; the message says why, in a few words."""


def decode(data: bytes) -> str:
    """Text from bytes: UTF-8 (with or without BOM), else Windows-1250 (Central European)."""
    for encoding in ("utf-8-sig", "cp1250"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ReadError("not a text file (neither UTF-8 nor Windows-1250)")


def _document(
    pages: list[str], document_id: str, name: str, url: str | None, lang: str | None = None
) -> SourceDocument:
    cleaned = tuple(page.strip() for page in pages)
    if not any(cleaned):
        raise ReadError("no text in the file")
    return SourceDocument(document_id, cleaned, name=name, url=url, lang=lang)


def _title_line(text: str) -> str | None:
    return next(
        (line[2:].strip() or None for line in text.splitlines() if line.startswith("# ")), None
    )


def read_text(data: bytes, *, document_id: str, name: str, url: str | None) -> SourceDocument:
    """A plain text file: form feeds separate pages."""
    text = decode(data)
    return _document(text.split("\f"), document_id, name, url)


def read_markdown(data: bytes, *, document_id: str, name: str, url: str | None) -> SourceDocument:
    """Markdown with an optional front matter; ``<!-- page -->`` lines or form feeds break pages."""
    text = decode(data)
    meta: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match is not None:
        for line in match.group("meta").splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip()
        text = text[match.end() :]
    pages = [page for page in _PAGE_SPLIT.split(text) if page.strip()]
    title = meta.get("title") or _title_line(text) or name
    return _document(pages, document_id, title, meta.get("url") or url, meta.get("lang") or None)


class _HtmlText(HTMLParser):
    """Collects an HTML page's title and visible text; headings become markdown headings."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.pages: list[list[str]] = [[]]
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag == "title":
            self._in_title = True
        elif tag in _HEADINGS:
            self.pages[-1].append("\n## ")
        elif tag in _BLOCK_TAGS:
            self.pages[-1].append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in _HEADINGS or tag in _BLOCK_TAGS:
            self.pages[-1].append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skipping:
            self.pages[-1].append(data)

    def handle_comment(self, data: str) -> None:
        if data.strip().lower() == "page":
            self.pages.append([])

    def texts(self) -> list[str]:
        """The pages' text: lines stripped, runs of blank space collapsed."""
        result = []
        for parts in self.pages:
            lines = (" ".join(line.split()) for line in "".join(parts).splitlines())
            result.append("\n".join(line for line in lines if line and line != "##"))
        return result


def read_html(data: bytes, *, document_id: str, name: str, url: str | None) -> SourceDocument:
    """HTML through the standard library parser: ``<title>``, visible text, no script/style."""
    parser = _HtmlText()
    parser.feed(decode(data))
    parser.close()
    title = " ".join(parser.title.split())
    return _document(parser.texts(), document_id, title or name, url)


def read_pdf(data: bytes, *, document_id: str, name: str, url: str | None) -> SourceDocument:
    """A PDF through pypdf: one page per PDF page (empty pages kept, so numbers match)."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ReadError("encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
        title = str(info.title or "").strip() if info is not None else ""
    except ReadError:
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        raise ReadError(f"broken PDF ({type(exc).__name__})") from exc
    if not any(page.strip() for page in pages):
        raise ReadError("no text in the PDF (scanned pages need OCR first)")
    return _document(pages, document_id, title or name, url)


Reader = Callable[..., SourceDocument]

READERS: dict[str, Reader] = {  # by lower-case file suffix
    ".txt": read_text, ".text": read_text, ".md": read_markdown, ".markdown": read_markdown,
    ".html": read_html, ".htm": read_html, ".pdf": read_pdf,
}  # fmt: skip


def read_document(
    filename: str, data: bytes, *, document_id: str, url: str | None = None
) -> SourceDocument:
    """Read one file's bytes into a document by the file's suffix (its stem: the fallback title).

    Raises:
        ReadError: Unsupported type, empty, undecodable or broken file.
    """
    path = PurePath(filename)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ReadError(f"unsupported file type {path.suffix or '(none)'!r}")
    if not data.strip():
        raise ReadError("empty file")
    return reader(data, document_id=document_id, name=path.stem, url=url)
