"""Domain lookup: the bundled domains and the ones installed plugins provide.

A domain bundle is a :class:`~toolweave.tools.domain.Domain` and its tools.
Every domain, the bundled hospital domain ``korhaz`` included, is an entry point
of the group ``toolweave.domains`` (W5): a callable that returns ``(Domain, tools)``
(toolweave's own ``pyproject.toml`` declares ``korhaz`` that way)::

    [project.entry-points."toolweave.domains"]
    library = "my_library.toolweave_domain:load"

A plugin named like a bundled domain does not replace it; the plugin is ignored
with a warning.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from toolweave.state.errors import ConfigurationError, UnknownDomainError
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "toolweave.domains"
"""The entry-point group plugins declare their domains in."""

DomainBundle = tuple[Domain, list[AnyTool]]
"""A domain and the tools registered for it."""

DomainLoader = Callable[[], tuple[Domain, Iterable[AnyTool]]]

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


BUILTIN_DOMAINS: dict[str, str] = {"korhaz": "toolweave.domains.korhaz.plugin:load"}
"""Bundled domains by name, as entry-point values: loaded exactly like a plugin's (W5),
so no library module imports a domain. ``pyproject.toml`` declares the same entry
points in the group; the table only keeps them loadable from a source checkout
whose installed metadata predates them."""


def _bundled(name: str) -> EntryPoint:
    return EntryPoint(name=name, value=BUILTIN_DOMAINS[name], group=ENTRY_POINT_GROUP)


def _plugins() -> dict[str, EntryPoint]:
    """Entry points of the plugin group, in name order; bundled names keep the bundled loader."""
    found: dict[str, EntryPoint] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        if point.name in BUILTIN_DOMAINS:
            if point.value != BUILTIN_DOMAINS[point.name]:
                logger.warning(
                    "domain plugin %r (%s) ignored: a bundled domain has that name",
                    point.name,
                    point.value,
                )
            continue
        if point.name in found:
            logger.warning(
                "domain plugin %r: %s replaces %s (last loaded wins)",
                point.name,
                point.value,
                found[point.name].value,
            )
        found[point.name] = point
    return found


def available_domains(
    *, data_dir: str | os.PathLike[str] | None = None, database_url: str | None = None
) -> list[str]:
    """Names of every domain that :func:`load_domain` accepts, sorted.

    Bundled domains, plugin domains, and domains of documents ingested with
    ``toolweave ingest`` into ``data_dir`` (default: the CLI's data directory), or
    into the PostgreSQL database ``database_url`` when it is one.
    """
    from toolweave.domains.documents import ingested_domains

    ingested = ingested_domains(data_dir, database_url=database_url)
    return sorted({*BUILTIN_DOMAINS, *_plugins(), *ingested})


def _validated(name: str, bundle: Any) -> DomainBundle:
    """Check a loader's return value: ``(Domain, iterable of tools)``."""
    if not (isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], Domain)):
        raise ConfigurationError(
            f"domain {name!r}: its loader must return (Domain, tools), not {type(bundle).__name__}"
        )
    domain, tools = bundle
    return domain, list(tools)


def load_domain(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    database_url: str | None = None,
) -> DomainBundle:
    """The domain called ``name`` and its tools.

    Args:
        name: A bundled domain (``"korhaz"``), one an installed plugin provides, or
            one whose documents were ingested (``toolweave ingest --domain NAME``).
        data_dir: Where ingested documents live; default: the CLI's data directory.
        database_url: A ``postgresql://`` URL whose document tables hold the ingested
            domains instead (``toolweave ingest --database-url``); other URLs are ignored.

    Returns:
        ``(domain, tools)``, ready for :func:`toolweave.build_graph`.

    Raises:
        UnknownDomainError: No domain has that name; the message lists the known ones.
        ConfigurationError: A plugin failed to load or returned something else.
    """
    key = name.strip()
    point = _bundled(key) if key in BUILTIN_DOMAINS else _plugins().get(key)
    if point is None and _NAME_CHARS.issuperset(key):
        from toolweave.domains.documents import load_documents_domain

        ingested = load_documents_domain(key, data_dir, database_url=database_url)
        if ingested is not None:
            return ingested
    if point is None:
        names = available_domains(data_dir=data_dir, database_url=database_url)
        known = ", ".join(names) or "none"
        raise UnknownDomainError(f"unknown domain {name!r}; known domains: {known}")
    logger.info("loading domain %r from entry point %s", key, point.value)
    try:
        loader: DomainLoader = point.load()
        bundle = loader()
    except Exception as exc:  # a broken plugin is a configuration error, not a crash
        raise ConfigurationError(
            f"domain plugin {key!r} ({point.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return _validated(key, bundle)


__all__ = [
    "BUILTIN_DOMAINS",
    "ENTRY_POINT_GROUP",
    "DomainBundle",
    "available_domains",
    "load_domain",
]
