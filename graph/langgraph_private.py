"""Every private LangGraph name toolweave relies on, spelled here and nowhere else.

LangGraph keeps these out of its public API: a release may move or rename any of
them. Each one is pinned by ``tests/test_langgraph_private.py``, which checks what
the name means (not only that it exists) and fails with a message naming the
entry below to update. The rest of the library imports them from here.

- :data:`CHECKPOINTER_CONFIG_KEY`: the ``configurable`` key under which LangGraph
  (and the LangGraph server) hands a run its checkpointer.
- :data:`INTERRUPT`: the key of pending interrupts in ``invoke``'s (v1) output and
  the channel an ``interrupt()`` writes.
- :data:`BRANCH_PREFIX`: the prefix of the trigger channel an edge writes to make
  its target node run (``branch:to:<node>``).
- :data:`SERDE_ALLOWLIST`: the compiled graph's attribute holding the msgpack
  allowlist ``compile()`` computed (read by LangGraph in strict msgpack mode).
- :class:`AllowlistedCheckpoints`: overrides ``Pregel._apply_checkpointer_allowlist``
  (where every run and state read gets its checkpointer) so that the graph's msgpack
  allowlist applies in LangGraph's default, permissive mode too, and reads
  toolweave's own types without the "unregistered type" warning; it sets the
  serializer's ``_allowed_msgpack_modules`` and ``_unpack_ext_hook`` (built by
  ``_create_msgpack_ext_hook``) on a copy.
- :func:`copy_fields`: the keyword arguments LangGraph's ``Pregel.copy`` passes to
  the class's constructor.
- :class:`RunnableCallable`: the runnable LangGraph makes of a function node, with
  a sync and an async body.
- :func:`lean_branch_reads`: a conditional edge's state reader (the ``reader``
  keyword of the ``RunnableCallable`` ``BranchSpec.run`` makes, a ``partial`` of
  ``ChannelRead.do_read`` with ``fresh=True``), and the task's read function under
  ``CONFIG_KEY_READ`` (a ``partial`` of ``local_read`` over ``scratchpad``,
  ``channels``, ``managed`` and the task's writes), which :func:`lean_fresh_read` reads.
"""

from __future__ import annotations

import abc
import copy
import functools
import weakref
from collections.abc import Callable, Collection, Mapping
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
    from langgraph.pregel._io import read_channels
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

    In strict mode (``LANGGRAPH_STRICT_MSGPACK=true``) that is the saver's own
    ``with_allowlist``. In the default permissive mode a ``JsonPlusSerializer`` allows
    every type and warns for each unregistered one ("will be blocked in a future
    version"), and ``with_allowlist`` leaves it so; the copy made here allows the
    listed types explicitly, as the warning asks, and so reads them as strict mode would.
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
"""Per serializer and allowlist, its explicit copy and the fields it was copied from.

Every run and every state read asks for its checkpointer, so the copy was made
twice per run; now once, and again whenever the serializer's fields are no longer
those it was copied from (the copy is a function of them), and it goes with the
serializer."""


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


def lean_fresh_read(
    config: RunnableConfig,
    *,
    select: str | list[str],
    mapper: Callable[[Any], Any] | None = None,
    fresh: bool = True,
) -> Any:
    """LangGraph's fresh state read for a conditional edge, copying only the channels written.

    LangGraph's own (``local_read`` with ``fresh=True``) copies every channel of the
    graph (the state's keys and its own trigger channels) and applies the node's
    writes to the copies, so the route sees the state its reducers made of the
    update (S2). A channel the node did not write reads the same copied or not, when
    an empty update leaves it as it is: this read copies the written channels (and
    any of another kind), applies the writes with the channels' own reducers, and
    reads the others in place. The same values, without a copy of every channel at
    every step. Anything else (a single key, a managed value) goes to LangGraph's read.
    """
    read = config[CONF][CONFIG_KEY_READ]
    args = read.args if isinstance(read, functools.partial) else ()
    if not fresh or isinstance(select, str) or len(args) != 4:
        return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
    channels: Mapping[str, Any] = args[1]
    written: dict[str, list[Any]] = {}
    for channel, value in args[3].writes:
        if channel in channels:
            written.setdefault(channel, []).append(value)
    local = {}
    for key in select:
        channel = channels.get(key)
        if channel is None:  # a managed value: LangGraph reads it
            return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
        if key in written or not isinstance(channel, _SAME_WITHOUT_WRITES):
            channel = channel.copy()
            channel.update(written.get(key, []))
        local[key] = channel
    values = read_channels(local, select)
    return mapper(values) if mapper else values


def lean_branch_reads(graph: Any) -> int:
    """Give every conditional edge of a compiled ``graph`` :func:`lean_fresh_read`.

    Its select and mapper stay LangGraph's. Returns:
        How many edges were given it (0 if LangGraph no longer builds them so).
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
