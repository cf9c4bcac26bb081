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
- :func:`copy_fields`: the keyword arguments LangGraph's ``Pregel.copy`` passes to
  the class's constructor.
- :class:`RunnableCallable`: the runnable LangGraph makes of a function node, with
  a sync and an async body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    from langgraph._internal._runnable import RunnableCallable as RunnableCallable
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
