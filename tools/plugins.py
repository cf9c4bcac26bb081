"""Plugins: installed packages that provide components (W5, the seed's ``workflow-components``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from toolweave.state.errors import ConfigurationError
from toolweave.tools.ai.base import AiTool
from toolweave.tools.ai.registry import AiToolRegistry
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool, ToolRegistry

logger = logging.getLogger(__name__)

PLUGIN_GROUP = "toolweave.plugins"
"""The entry-point group of plugins that provide components."""

DomainLoader = Callable[[], tuple[Domain, Iterable[AnyTool]]]


@dataclass(frozen=True)
class Plugin:
    """What a plugin provides: chatbot tools, AI system tools and domains."""

    name: str
    tools: Sequence[AnyTool] = ()
    ai_tools: Sequence[AiTool] = ()
    domains: Mapping[str, DomainLoader] = field(default_factory=dict)
    """Domains by name, each a callable returning ``(Domain, tools)``, called on first use."""
    golden_files: Mapping[str, Path] = field(default_factory=dict)
    """A routing golden file per domain name, what ``toolweave eval`` runs by default."""


class PluginLoadError(ConfigurationError):
    """A plugin's entry point failed to load or did not name a :class:`Plugin`."""


@dataclass(frozen=True)
class DiscoveredPlugin:
    """A plugin and where it came from."""

    plugin: Plugin
    entry_point: str  # ``name = value`` of the entry point
    distribution: str | None


def _dist(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return str(getattr(dist, "name", "") or "")


def load_order(point: EntryPoint) -> tuple[str, str]:
    """The sort key plugins load in: distribution name, then entry-point name."""
    return _dist(point), point.name


def load_plugin(point: EntryPoint) -> DiscoveredPlugin:
    """Load one entry point into a plugin.

    Raises:
        PluginLoadError: Importing or calling it failed, or it is not a :class:`Plugin`.
    """
    where = f"{point.name} = {point.value}"
    try:
        loaded: Any = point.load()
        plugin = loaded if isinstance(loaded, Plugin) else loaded()
    except Exception as exc:  # a broken plugin is a configuration error, with its name
        raise PluginLoadError(
            f"plugin {where} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(plugin, Plugin):
        raise PluginLoadError(f"plugin {where} returned {type(plugin).__name__}, not a Plugin")
    return DiscoveredPlugin(plugin=plugin, entry_point=where, distribution=_dist(point) or None)


def discover_plugins(*, group: str = PLUGIN_GROUP) -> list[DiscoveredPlugin]:
    """Every installed plugin of ``group``, loaded in order (distribution, then name), logged.

    Raises:
        PluginLoadError: A plugin failed to load (the message names it).
    """
    points = sorted(entry_points(group=group), key=load_order)
    found: list[DiscoveredPlugin] = []
    for point in points:
        discovered = load_plugin(point)
        plugin = discovered.plugin
        logger.info(
            "plugin %s from %s: %d tool(s), %d AI tool(s), %d domain(s)",
            plugin.name,
            discovered.distribution or discovered.entry_point,
            len(plugin.tools),
            len(plugin.ai_tools),
            len(plugin.domains),
        )
        found.append(discovered)
    return found


def register_plugins(
    plugins: Iterable[DiscoveredPlugin | Plugin],
    *,
    tools: ToolRegistry | None = None,
    ai_tools: AiToolRegistry | None = None,
) -> None:
    """Register the plugins' components in order; later ones win with a warning (T1)."""
    for item in plugins:
        plugin = item.plugin if isinstance(item, DiscoveredPlugin) else item
        if tools is not None:
            for tool in plugin.tools:
                tools.register(tool)
        if ai_tools is not None:
            for ai_tool in plugin.ai_tools:
                ai_tools.register(ai_tool, source=f"plugin {plugin.name}")
