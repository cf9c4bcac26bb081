"""Every private LangGraph name toolweave relies on, spelled here and nowhere else.

A LangGraph release may move or rename any of them; ``tests/test_langgraph_private.py``
pins what each one means and names the entry here to update.
"""

from __future__ import annotations

import abc
import copy
import functools
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.channels import BinaryOperatorAggregate, DeltaChannel, LastValue
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import maybe_add_typed_methods
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

try:
    from langgraph._internal._constants import CONF, CONFIG_KEY_READ
    from langgraph._internal._runnable import RunnableCallable as RunnableCallable
    from langgraph.checkpoint.serde.jsonplus import _create_msgpack_ext_hook
    from langgraph.pregel._read import ChannelRead
except ImportError as error:  # pragma: no cover - only with a LangGraph that moved it
    raise ImportError(
        "this LangGraph release moved RunnableCallable out of langgraph._internal._runnable; "
        "install the LangGraph version toolweave's pyproject.toml names, or update "
        "toolweave/graph/langgraph_private.py (tests/test_langgraph_private.py checks it)"
    ) from error

CHECKPOINTER_CONFIG_KEY = "__pregel_checkpointer"
"""``config["configurable"][CHECKPOINTER_CONFIG_KEY]``: the run's checkpointer."""
INTERRUPT = "__interrupt__"
"""Pending interrupts: the key in ``invoke``'s output and the channel of their writes."""
BRANCH_PREFIX = "branch:to:"
"""``BRANCH_PREFIX + node``: the channel whose new value makes ``node`` run next."""
APPLY_ALLOWLIST = "_apply_checkpointer_allowlist"
"""``Pregel``'s method giving a run (and ``get_state``) its checkpointer, allowlist applied."""
SERDE_ALLOWLIST = "_serde_allowlist"
"""The compiled graph's msgpack allowlist (set by ``compile()``)."""
_NOT_A_FIELD = "__orig_class__"
"""What ``Pregel.copy`` leaves out of the instance's ``__dict__`` (set by generics)."""


def checkpointer_of(configurable: Mapping[str, Any], default: Any = None) -> Any:
    """The checkpointer a run's ``configurable`` carries, else ``default``."""
    return configurable.get(CHECKPOINTER_CONFIG_KEY, default)


def triggered_node(channel: str) -> str | None:
    """The node a trigger channel makes run, or ``None`` for any other channel."""
    return channel[len(BRANCH_PREFIX) :] if channel.startswith(BRANCH_PREFIX) else None


def serde_allowlist(graph: object) -> Any:
    """The msgpack allowlist of a compiled graph (``None`` when it computed none)."""
    return getattr(graph, SERDE_ALLOWLIST, None)


def set_serde_allowlist(graph: object, allowlist: set[tuple[str, ...]]) -> None:
    """Give a compiled graph the msgpack allowlist LangGraph reads in strict mode."""
    setattr(graph, SERDE_ALLOWLIST, allowlist)


def copy_fields(graph: object) -> dict[str, Any]:
    """The constructor keyword arguments of a copy of ``graph`` (as ``Pregel.copy`` builds them)."""
    return {key: value for key, value in vars(graph).items() if key != _NOT_A_FIELD}


def allowlisted(
    saver: BaseCheckpointSaver[Any], allowlist: Collection[tuple[str, ...]]
) -> BaseCheckpointSaver[Any]:
    """``saver`` reading exactly ``allowlist`` (and LangGraph's safe types) without warnings.

    Permissive ``with_allowlist`` allows and warns for every type; this copy allows them explicitly.
    """
    serde = saver.serde
    if (
        not isinstance(serde, JsonPlusSerializer)
        or serde._allowed_msgpack_modules is not True
        or serde._custom_unpack_ext_hook
    ):
        return saver.with_allowlist(allowlist)
    allowed = frozenset(tuple(entry) for entry in allowlist)
    fields = dict(vars(serde))
    made = _EXPLICIT_SERDES.setdefault(serde, {})
    cached = made.get(allowed)
    if cached is None or cached[0] != fields:
        explicit = copy.copy(serde)
        explicit._allowed_msgpack_modules = set(allowed)
        explicit._unpack_ext_hook = _create_msgpack_ext_hook(explicit._allowed_msgpack_modules)
        cached = made[allowed] = (fields, maybe_add_typed_methods(explicit))
    clone = copy.copy(saver)
    clone.serde = cached[1]
    return clone


_EXPLICIT_SERDES: weakref.WeakKeyDictionary[
    Any, dict[frozenset[tuple[str, ...]], tuple[dict[str, Any], Any]]
] = weakref.WeakKeyDictionary()
"""Per serializer and allowlist, its explicit copy and the fields it was copied from (made once)."""


class AllowlistedCheckpoints(abc.ABC):  # noqa: B024 - Pregel's metaclass is ABCMeta
    """Mixin of a compiled graph whose checkpointer always reads with its msgpack allowlist."""

    def _apply_checkpointer_allowlist(
        self, checkpointer: BaseCheckpointSaver[Any] | None
    ) -> BaseCheckpointSaver[Any] | None:
        allowlist = serde_allowlist(self)
        if checkpointer is None or not allowlist:
            return checkpointer
        return allowlisted(checkpointer, allowlist)


BRANCH_READER = "reader"
"""The keyword under which a conditional edge's runnable keeps its state reader."""
_SAME_WITHOUT_WRITES = (LastValue, BinaryOperatorAggregate, DeltaChannel)
"""Channel kinds whose value an empty update leaves as it is (an ephemeral one it clears)."""


class LazyFreshState(Mapping[str, Any]):
    """The state a conditional edge's route reads, each written channel reduced when first asked."""

    __slots__ = ("_channels", "_select", "_values", "_written")

    def __init__(
        self, channels: Mapping[str, Any], written: Mapping[str, list[Any]], select: list[str]
    ) -> None:
        """Over the task's ``channels`` and ``written`` values, the keys in ``select``."""
        self._channels = channels
        self._written = written
        self._select = frozenset(select)
        self._values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        """The key's value after the step's writes, else ``default`` (no exception raised)."""
        if key in self._values:
            return self._values[key]
        if key not in self._select:
            return default
        channel = self._channels[key]
        written = self._written.get(key)
        if written is not None or not isinstance(channel, _SAME_WITHOUT_WRITES):
            channel = channel.copy()
            channel.update(written or [])
        if not channel.is_available():
            return default
        value = self._values[key] = channel.get()
        return value

    def __getitem__(self, key: str) -> Any:
        """The key's value after the step's writes; ``KeyError`` when it has none."""
        self.get(key)
        return self._values[key]  # stored by ``get`` when the key holds a value

    def __iter__(self) -> Iterator[str]:
        """The selected keys that hold a value, in the channels' order."""
        return (key for key in self._channels if key in self._select and key in self)

    def __len__(self) -> int:
        """How many selected keys hold a value."""
        return sum(1 for _ in self)


def lean_fresh_read(
    config: RunnableConfig,
    *,
    select: str | list[str],
    mapper: Callable[[Any], Any] | None = None,
    fresh: bool = True,
) -> Any:
    """LangGraph's fresh state read for a conditional edge, reading only the keys asked for (S2)."""
    read = config[CONF][CONFIG_KEY_READ]
    args = read.args if isinstance(read, functools.partial) else ()
    if not fresh or isinstance(select, str) or mapper is not None or len(args) != 4:
        return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
    channels: Mapping[str, Any] = args[1]
    if any(key not in channels for key in select):  # a managed value: LangGraph reads it
        return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
    written: dict[str, list[Any]] = {}
    for channel, value in args[3].writes:
        if channel in channels:
            written.setdefault(channel, []).append(value)
    return LazyFreshState(channels, written, select)


def lean_branch_reads(graph: Any) -> int:
    """Give every conditional edge of ``graph`` :func:`lean_fresh_read`; how many got it.

    0 when LangGraph no longer builds its edges so.
    """
    count = 0
    for node in graph.nodes.values():
        for writer in node.writers:
            reader = getattr(writer, "kwargs", {}).get(BRANCH_READER)
            if not (
                isinstance(writer, RunnableCallable)
                and isinstance(reader, functools.partial)
                and reader.func is ChannelRead.do_read
                and reader.keywords.get("fresh") is True
            ):
                continue
            writer.kwargs[BRANCH_READER] = functools.partial(
                lean_fresh_read,
                select=reader.keywords["select"],
                mapper=reader.keywords.get("mapper"),
            )
            count += 1
    return count
