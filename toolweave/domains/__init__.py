"""Domain lookup: the bundled domains and the ones installed plugins provide.

A domain bundle is a :class:`~toolweave.tools.domain.Domain` and its tools. The
hospital domain ``korhaz`` ships with toolweave; other packages add domains
through the entry-point group ``toolweave.domains`` (W5), each entry point a
callable that returns ``(Domain, tools)``::

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


def _korhaz() -> DomainBundle:
    from toolweave.domains.korhaz import korhaz_domain, korhaz_tools

    return korhaz_domain(), list(korhaz_tools())


BUILTIN_DOMAINS: dict[str, DomainLoader] = {"korhaz": _korhaz}
"""Bundled domains by name; each module is imported only when its domain is loaded."""


def _plugins() -> dict[str, EntryPoint]:
    """Entry points of the plugin group, bundled names excluded."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in BUILTIN_DOMAINS:
            logger.warning(
                "domain plugin %r (%s) ignored: a bundled domain has that name",
                point.name,
                point.value,
            )
            continue
        found[point.name] = point
    return found


def available_domains(*, data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of every domain that :func:`load_domain` accepts, sorted.

    Bundled domains, plugin domains, and domains of documents ingested with
    ``toolweave ingest`` into ``data_dir`` (default: the CLI's data directory).
    """
    from toolweave.domains.documents import ingested_domains

    return sorted({*BUILTIN_DOMAINS, *_plugins(), *ingested_domains(data_dir)})


def _validated(name: str, bundle: Any) -> DomainBundle:
    """Check a loader's return value: ``(Domain, iterable of tools)``."""
    if not (isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], Domain)):
        raise ConfigurationError(
            f"domain {name!r}: its loader must return (Domain, tools), not {type(bundle).__name__}"
        )
    domain, tools = bundle
    return domain, list(tools)


def load_domain(name: str, *, data_dir: str | os.PathLike[str] | None = None) -> DomainBundle:
    """The domain called ``name`` and its tools.

    Args:
        name: A bundled domain (``"korhaz"``), one an installed plugin provides, or
            one whose documents were ingested (``toolweave ingest --domain NAME``).
        data_dir: Where ingested documents live; default: the CLI's data directory.

    Returns:
        ``(domain, tools)``, ready for :func:`toolweave.build_graph`.

    Raises:
        UnknownDomainError: No domain has that name; the message lists the known ones.
        ConfigurationError: A plugin failed to load or returned something else.
    """
    key = name.strip()
    if key in BUILTIN_DOMAINS:
        return _validated(key, BUILTIN_DOMAINS[key]())
    point = _plugins().get(key)
    if point is None and _NAME_CHARS.issuperset(key):
        from toolweave.domains.documents import load_documents_domain

        ingested = load_documents_domain(key, data_dir)
        if ingested is not None:
            return ingested
    if point is None:
        known = ", ".join(available_domains(data_dir=data_dir)) or "none"
        raise UnknownDomainError(f"unknown domain {name!r}; known domains: {known}")
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
