"""Ingestion: files and folders into a document store, reporting what was skipped and why."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolweave.state.errors import ConfigurationError
from toolweave.tools.search.protocol import DocumentStore, SourceDocument
from toolweave.tools.search.readers import READERS, ReadError, read_document

logger = logging.getLogger(__name__)

BATCH_PAGES = 2_000  # pages written per transaction
OPTIMIZE_AFTER_PAGES = 5_000  # after this many pages the store's index is merged
Progress = Callable[[int, int, str], None]  # (files done, files in total, file name)


@dataclass(frozen=True)
class Skipped:
    """A file that was not ingested, and why."""

    path: str
    reason: str


@dataclass
class IngestReport:
    """What an ingestion did."""

    domain: str | None = None
    ingested: list[str] = field(default_factory=list)  # paths stored, in order
    skipped: list[Skipped] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # ids dropped by ``replace=True``
    pages: int = 0
    sentences: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when nothing was skipped."""
        return not self.skipped


def collect_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[Skipped]]:
    """The files to read: given files, and supported unhidden files in given folders."""
    files: dict[Path, None] = {}
    skipped: list[Skipped] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in found.relative_to(path).parts)
                if not hidden and found.is_file() and found.suffix.lower() in READERS:
                    files.setdefault(found.resolve(), None)
        elif path.is_file():
            files.setdefault(path.resolve(), None)
        else:
            skipped.append(Skipped(str(raw), "no such file or folder"))
    return list(files), skipped


def read_path(path: Path) -> SourceDocument:
    """Read one file on disk into a document with id = its resolved path (``ReadError``)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReadError(f"cannot read ({exc.strerror or type(exc).__name__})") from exc
    resolved = path.resolve()
    return read_document(path.name, data, document_id=str(resolved), url=resolved.as_uri())


def _batches(
    files: Sequence[Path], report: IngestReport, progress: Progress | None
) -> Iterator[list[tuple[Path, SourceDocument]]]:
    batch: list[tuple[Path, SourceDocument]] = []
    pages = 0
    for done, path in enumerate(files, start=1):
        try:
            doc = read_path(path)
        except ReadError as exc:
            report.skipped.append(Skipped(str(path), str(exc)))
            logger.info("skipped %s: %s", path, exc)
        else:
            batch.append((path, doc))
            pages += len(doc.pages)
        if progress is not None:
            progress(done, len(files), path.name)
        if pages >= BATCH_PAGES:
            yield batch
            batch, pages = [], 0
    if batch:
        yield batch


def store_batch(
    store: DocumentStore, batch: Sequence[tuple[Path, SourceDocument]], report: IngestReport
) -> None:
    """Write a batch in one transaction; if the store refuses it, document by document."""
    add_many = getattr(store, "add_documents", None)
    if add_many is not None:
        try:
            report.sentences += add_many([doc for _, doc in batch])
        except Exception:  # noqa: BLE001  # one bad document: find it below, keep the others
            logger.warning("batch of %d documents refused; retrying one by one", len(batch))
        else:
            report.ingested += [str(path) for path, _ in batch]
            report.pages += sum(len(doc.pages) for _, doc in batch)
            return
    for path, doc in batch:
        try:
            report.sentences += store.add_document(
                doc.document_id, doc.pages, name=doc.name, url=doc.url, lang=doc.lang
            )
        except Exception as exc:  # noqa: BLE001  # the store's error, reported by file
            report.skipped.append(Skipped(str(path), f"store error ({type(exc).__name__})"))
            continue
        report.ingested.append(str(path))
        report.pages += len(doc.pages)


def remove_unseen(store: DocumentStore, files: Sequence[Path], report: IngestReport) -> None:
    """Drop the store's documents that none of ``files`` is (``ingest(..., replace=True)``).

    A file that was found but could not be read keeps its earlier version; nothing is
    dropped when nothing was ingested (a mistyped path would empty the store).
    """
    page_refs = getattr(store, "page_refs", None)
    if page_refs is None:
        raise ConfigurationError(
            f"replace=True needs a store that lists its pages (page_refs); "
            f"{type(store).__name__} does not: remove old documents with remove_document"
        )
    if not report.ingested:
        return
    seen = {str(path) for path in files}
    for document_id in dict.fromkeys(ref.document_id for ref in page_refs()):
        if document_id not in seen and store.remove_document(document_id):
            report.removed.append(document_id)


def ingest(
    paths: Iterable[str | Path],
    store: DocumentStore,
    *,
    domain: str | None = None,
    progress: Progress | None = None,
    replace: bool = False,
) -> IngestReport:
    """Read files and folders into ``store``.

    Args:
        paths: Files (.txt, .md, .html, .pdf) and folders (searched recursively).
        store: Where the documents go; one already there (same path) is replaced whole.
        domain: The domain the documents are for (kept in the report).
        progress: Called after each file with ``(done, total, file name)``.
        replace: Also drop the store's documents none of ``paths`` holds now (a page
            deleted, renamed, or ingested before from another folder): the store then
            holds these files only. Nothing is dropped when nothing was ingested.

    Returns:
        The report: stored paths, skipped files with reasons, dropped document ids, page
        and sentence counts.
    """
    started = time.perf_counter()
    report = IngestReport(domain=domain)
    files, missing = collect_files(paths)
    report.skipped += missing
    for batch in _batches(files, report, progress):
        store_batch(store, batch, report)
    if replace:
        remove_unseen(store, files, report)
    optimize = getattr(store, "optimize", None)
    if optimize is not None and report.pages >= OPTIMIZE_AFTER_PAGES:
        optimize()
    report.seconds = time.perf_counter() - started
    return report
