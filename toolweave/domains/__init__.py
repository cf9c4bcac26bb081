"""Domain lookup: plugins' domains (W5, T1) and ingested ones; none picked silently (N2)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from toolweave.domains.documents import DataDir, ingested_domains, load_documents_domain
from toolweave.domains.documents import ingested_store as ingested_store
from toolweave.state.errors import ConfigurationError, UnknownDomainError
from toolweave.tools.domain import Domain
from toolweave.tools.plugins import (
    PLUGIN_GROUP,
    DomainLoader,
    PluginLoadError,
    load_order,
    load_plugin,
)
from toolweave.tools.registry import AnyTool

logger = logging.getLogger(__name__)

DomainBundle = tuple[Domain, list[AnyTool]]  # a domain and the tools registered for it

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")

NO_DOMAIN_HINT = (
    "ingest documents with `toolweave ingest PATH --domain NAME`, or install a domain "
    "package, e.g. one of the repository's examples: `pip install -e examples/<name>`"
)

ADD_DOMAIN_HINT = (
    "To add {name!r}: `toolweave ingest PATH --domain {name}` for documents, or install the "
    "package whose `toolweave.plugins` entry point is named {name!r} (`pip install -e DIR`, "
    "into the environment this command runs in)"
)
"""What an unknown domain's error adds (N2): the two ways a domain of that name comes to be."""


class NoDomainInstalledError(UnknownDomainError):
    """No plugin provides a domain and no documents were ingested (the message says what to do)."""


DOMAIN_ENV = "TOOLWEAVE_DOMAIN"  # the command line's default --domain (N2)

CHOOSE_HINT = (
    f"name one with `--domain NAME`, or set {DOMAIN_ENV}=NAME for every command "
    "(`toolweave domains` lists them)"
)


class DomainNotChosenError(UnknownDomainError):
    """Several domains are installed and none was named (N2): the message lists them."""


@dataclass
class _Installed:
    """What the installed plugins provide, in load order (one pass over the entry points)."""

    domains: dict[str, tuple[DomainLoader, str]] = field(default_factory=dict)  # loader, where
    golden_files: dict[str, Path] = field(default_factory=dict)
    broken: dict[str, PluginLoadError] = field(default_factory=dict)  # entry point -> why


def _installed() -> _Installed:
    """Load every plugin of the group; a broken one is skipped with a warning."""
    found = _Installed()
    for point in sorted(entry_points(group=PLUGIN_GROUP), key=load_order):
        try:
            discovered = load_plugin(point)
        except PluginLoadError as exc:
            logger.warning("%s", exc)
            found.broken[point.name] = exc
            continue
        plugin, where = discovered.plugin, discovered.entry_point
        for name, loader in plugin.domains.items():
            if name in found.domains:
                logger.warning(
                    "domain %r: plugin %s replaces plugin %s (last loaded wins)",
                    name,
                    where,
                    found.domains[name][1],
                )
            found.domains[name] = (loader, where)
        found.golden_files.update(plugin.golden_files)
    return found


def installed_domains() -> list[str]:
    """Names of the domains the installed plugins provide, sorted."""
    return sorted(_installed().domains)


def broken_plugins() -> dict[str, str]:
    """The installed plugins that failed to load: entry-point name -> why, in one line (N1)."""
    return {name: str(exc) for name, exc in _installed().broken.items()}


def available_domains(*, data_dir: DataDir = None, database_url: str | None = None) -> list[str]:
    """Names of every domain :func:`load_domain` accepts: plugins' and ingested ones, sorted."""
    return _names(_installed(), data_dir, database_url)


def hidden_documents(*, data_dir: DataDir = None, database_url: str | None = None) -> list[str]:
    """Names under which ingested documents are hidden by a plugin's domain of that name (N1)."""
    ingested = ingested_domains(data_dir, database_url=database_url)
    return sorted(set(_installed().domains) & set(ingested))


def _names(installed: _Installed, data_dir: DataDir, database_url: str | None) -> list[str]:
    return sorted({*installed.domains, *ingested_domains(data_dir, database_url=database_url)})


def _default_of(installed: _Installed, data_dir: DataDir, database_url: str | None) -> str:
    """The only domain there is (N2), else an error that says what to do."""
    names = _names(installed, data_dir, database_url)
    if len(names) == 1:
        return names[0]
    if names:
        raise DomainNotChosenError(
            f"{len(names)} domains are installed ({', '.join(names)}) and none was named: "
            f"{CHOOSE_HINT}"
        )
    if installed.broken:  # say why the plugin that would have provided one is missing
        raise next(iter(installed.broken.values()))
    raise NoDomainInstalledError(f"no domain is installed: {NO_DOMAIN_HINT}")


def default_domain(*, data_dir: DataDir = None, database_url: str | None = None) -> str:
    """The domain used when none is named: the only one, plugin or ingested (N2).

    Raises:
        NoDomainInstalledError: There is no domain at all.
        DomainNotChosenError: There are several.
    """
    return _default_of(_installed(), data_dir, database_url)


def _validated(name: str, bundle: Any) -> DomainBundle:
    """Check a loader's return value: ``(Domain, iterable of tools)``."""
    if not (isinstance(bundle, tuple) and len(bundle) == 2 and isinstance(bundle[0], Domain)):
        raise ConfigurationError(
            f"domain {name!r}: its loader must return (Domain, tools), not {type(bundle).__name__}"
        )
    return bundle[0], list(bundle[1])


def load_domain(
    name: str | None = None, *, data_dir: DataDir = None, database_url: str | None = None
) -> DomainBundle:
    """The domain called ``name`` and its tools, with its calibrated routing threshold (T5).

    Args:
        name: A plugin's domain or an ingested one; ``None``: :func:`default_domain`.
        data_dir: Where ingested documents live; default: the CLI's data directory.
        database_url: A ``postgresql://`` URL holding the ingested domains instead.

    Returns:
        ``(domain, tools)``, ready for :func:`toolweave.build_graph`.

    Raises:
        NoDomainInstalledError: There is no domain at all (the message says how to get one).
        DomainNotChosenError: ``name`` is ``None`` and there are several (N2).
        UnknownDomainError: No domain has that name; the message lists the known ones.
        ConfigurationError: A plugin failed to load or returned something else, or the
            calibrated routing file is malformed.
    """
    installed = _installed()
    key = _default_of(installed, data_dir, database_url) if name is None else name.strip()
    if key not in installed.domains:
        if key in installed.broken:
            raise installed.broken[key]
        if _NAME_CHARS.issuperset(key):
            ingested = load_documents_domain(key, data_dir, database_url=database_url)
            if ingested is not None:
                return _calibrated(ingested)
        names = available_domains(data_dir=data_dir, database_url=database_url)
        if not names and not installed.broken:
            raise NoDomainInstalledError(
                f"unknown domain {name!r}: no domain is installed; {NO_DOMAIN_HINT}"
            )
        known = ", ".join(names) or "none"
        broken = "".join(f"; plugin {n!r} failed to load" for n in installed.broken)
        raise UnknownDomainError(
            f"unknown domain {name!r}; known domains: {known}{broken}. "
            + ADD_DOMAIN_HINT.format(name=key)
        )
    loader, where = installed.domains[key]
    logger.info("loading domain %r from plugin %s", key, where)
    try:
        from toolweave.domains.documents import loading_from

        with loading_from(data_dir, database_url):  # N1: the loader's ingested_store
            bundle = loader()
    except Exception as exc:  # a broken plugin is a configuration error, not a crash
        raise ConfigurationError(
            f"domain plugin {key!r} ({where}) failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return _calibrated(_validated(key, bundle))


def _calibrated(bundle: DomainBundle) -> DomainBundle:
    """The bundle with the routing threshold the user calibrated, if any (T5)."""
    from toolweave.domains.calibration import stored_threshold

    threshold = stored_threshold(bundle[0].name)
    if threshold is None:
        return bundle
    return replace(bundle[0], routing_threshold=threshold), bundle[1]


def golden_file(name: str | None = None) -> Path | None:
    """The golden file the plugin of domain ``name`` (``None``: the default, N2) ships, if any."""
    installed = _installed()
    key = _default_of(installed, None, None) if name is None else name.strip()
    path = installed.golden_files.get(key)
    return path if path is not None and path.is_file() else None
