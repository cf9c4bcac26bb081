"""X6: the library holds no module-level mutable state (no registry of runs, no globals).

Per-run state lives in the run's scope (``toolweave.state.run_scope``) and in the
graph state; a module may hold constants and a few deliberate process caches
keyed by immutable inputs, each listed in :data:`ALLOWED` with the reason.

What counts as module-level mutable state, in every module of the library's
packages (state, tools, llm, coordinators, graph, toolweave):

- a ``global`` statement anywhere;
- a name bound at module level (by the module's own code) to a mutable object:
  a mutable container (dict, list, set, OrderedDict, deque, weak dictionaries…),
  a lock or a thread-local, or any other object that is not plainly immutable
  (a class instance that is not a frozen dataclass, an enum member, a pattern…);
- except a constant table: a CONSTANT_CASE name bound to a plain dict, list or
  set that no code of the library writes to (item assignment or deletion,
  augmented assignment, a mutating method call).

``functools`` caches (``lru_cache``/``cache``) are functions, not bindings to
mutable objects, and are keyed by hashable arguments by construction; they are
not listed here.
"""

from __future__ import annotations

import ast
import contextvars
import dataclasses
import enum
import importlib
import logging
import re
import threading
import types
from collections.abc import Iterator, MutableMapping, MutableSequence, MutableSet
from pathlib import Path, PurePath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PACKAGES: dict[str, str] = {
    "state": "toolweave.state",
    "tools": "toolweave.tools",
    "llm": "toolweave.llm",
    "coordinators": "toolweave.coordinators",
    "graph": "toolweave.graph",
    "toolweave": "toolweave",
}
"""Source folder -> package name."""

SKIPPED_MODULES = frozenset({"toolweave.__main__"})
"""Modules not imported by the scan (``python -m toolweave`` runs the command line)."""

ALLOWED: dict[str, str] = {
    # A process cache keyed by immutable inputs: the JSON text of a routing model's
    # compact schema, keyed weakly by the (immutable) model class and by the schema
    # arguments; an entry is a pure function of its key and goes with its class.
    "toolweave.llm.replies:_SCHEMA_TEXT": "cache keyed by model class (weak) and arguments",
    # A process cache keyed weakly by a saver's serializer and by an allowlist: its
    # explicit copy, checked on every use against the fields it was copied from (the
    # copy is a function of them), so it is what a fresh copy would be; it goes with
    # the serializer.
    "toolweave.graph.langgraph_private:_EXPLICIT_SERDES": "cache keyed by serializer (weak)",
    # Per-thread Snowball stemmer objects keyed by language code: stemming is a pure
    # function of the word, the objects are just not thread-safe.
    "toolweave.tools.text:_local": "per-thread cache of stateless stemmers by language",
    # One chat model with no per-call fields, shared to skip LangChain's set-up per call;
    # it keeps nothing between calls.
    "toolweave.llm.passthrough:_PASSTHROUGH": "stateless shared object",
    # Channel specifications of the graph state's reducers: LangGraph makes a fresh
    # channel from each for every run (``from_checkpoint``); these never hold a value.
    "toolweave.state.graph_state:APPEND_CHANNEL": "channel spec, copied per run",
    "toolweave.state.graph_state:BUFFER_CHANNEL": "channel spec, copied per run",
    "toolweave.state.graph_state:DOCUMENTS_CHANNEL": "channel spec, copied per run",
    "toolweave.state.graph_state:MESSAGES_CHANNEL": "channel spec, copied per run",
    "toolweave.state.graph_state:TASKS_CHANNEL": "channel spec, copied per run",
}
"""``module:name`` -> why the binding is allowed."""

MUTATORS = frozenset(
    {
        "append",
        "appendleft",
        "add",
        "clear",
        "discard",
        "extend",
        "insert",
        "move_to_end",
        "pop",
        "popitem",
        "remove",
        "reverse",
        "setdefault",
        "sort",
        "update",
        "__setitem__",
        "__delitem__",
    }
)
CONSTANT_NAME = re.compile(r"^_?[A-Z][A-Z0-9_]*$|^__all__$")
PLAIN_TABLES = (dict, list, set)
MUTABLE_KINDS: tuple[type[Any], ...] = (
    MutableMapping,
    MutableSequence,
    MutableSet,
    bytearray,
    threading.local,
    type(threading.Lock()),
    type(threading.RLock()),
    threading.Event,
    threading.Condition,
    threading.Semaphore,
)
IMMUTABLE_KINDS: tuple[type[Any], ...] = (
    str,
    bytes,
    int,
    float,
    complex,
    bool,
    type(None),
    tuple,
    frozenset,
    PurePath,
    range,
    re.Pattern,
    types.MappingProxyType,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
    enum.Enum,
    contextvars.ContextVar,  # its value lives in each context, not in the module
    logging.Logger,  # the library's own loggers: configured by the application
)


def modules() -> Iterator[tuple[str, Path]]:
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join([package, *parts]), path


def bound_names(tree: ast.Module) -> set[str]:
    """Names the module's own top-level code binds by assignment (blocks included)."""
    found: set[str] = set()

    def targets(node: ast.expr) -> Iterator[str]:
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Tuple | ast.List):
            for item in node.elts:
                yield from targets(item)

    def visit(body: list[ast.stmt]) -> None:
        for statement in body:
            match statement:
                case ast.Assign(targets=assigned):
                    for target in assigned:
                        found.update(targets(target))
                case ast.AnnAssign(target=target, value=value) if value is not None:
                    found.update(targets(target))
                case ast.AugAssign(target=target):
                    found.update(targets(target))
                case ast.If() | ast.Try() | ast.With():
                    visit(statement.body)
                    visit(getattr(statement, "orelse", []))
                    visit(getattr(statement, "finalbody", []))
                    for handler in getattr(statement, "handlers", []):
                        visit(handler.body)

    visit(tree.body)
    return found


def written_names(trees: list[ast.Module]) -> set[str]:
    """Names some function of the library writes into at run time.

    ``N[k] = v``, ``del N[k]``, ``N += …``, ``N.add(…)`` and the like; a module's
    own top-level code building a table while it is imported does not count.
    """
    written: set[str] = set()

    def name_of(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        return None

    functions = [
        node
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    ]
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                written.add(name_of(node.value) or "")
            elif isinstance(node, ast.AugAssign):
                written.add(name_of(node.target) or "")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
            ):
                written.add(name_of(node.func.value) or "")
    return written


def is_mutable(value: Any) -> bool:
    if isinstance(value, MUTABLE_KINDS):
        return True
    if isinstance(value, IMMUTABLE_KINDS) or (callable(value) and not hasattr(value, "__dict__")):
        return False
    if isinstance(value, types.FunctionType | types.MethodType | property | staticmethod):
        return False
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return not value.__dataclass_params__.frozen  # type: ignore[attr-defined]
    kind = type(value)
    if kind.__module__ in ("typing", "types", "typing_extensions", "collections.abc"):
        return False  # type aliases, TypeVars, unions, generic aliases
    return not isinstance(value, tuple)  # a NamedTuple is immutable


def findings() -> list[str]:
    sources = {
        name: (path, ast.parse(path.read_text(encoding="utf-8"))) for name, path in modules()
    }
    written = written_names([tree for _, tree in sources.values()])
    found: list[str] = []
    for name, (path, tree) in sources.items():
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append(f"{where}:{node.lineno}: global {', '.join(node.names)}")
        if name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(name)
        for attribute in sorted(bound_names(tree)):
            key = f"{name}:{attribute}"
            if key in ALLOWED or not hasattr(module, attribute):
                continue
            value = getattr(module, attribute)
            if not is_mutable(value):
                continue
            constant = CONSTANT_NAME.match(attribute) and type(value) in PLAIN_TABLES
            if constant and attribute not in written:
                continue
            kind = type(value).__qualname__
            why = "written to by library code" if constant else "mutable"
            found.append(f"{where}: {attribute} is a {kind} ({why})")
    return found


def test_X6_no_module_level_mutable_state():
    found = findings()
    assert not found, "module-level mutable state (X6):\n" + "\n".join(found)


def test_X6_allowlist_names_only_existing_bindings():
    for key in ALLOWED:
        module, attribute = key.split(":")
        assert hasattr(importlib.import_module(module), attribute), key


def test_X6_the_scan_finds_a_registry_and_a_global(tmp_path):
    tree = ast.parse(
        "_RUNS = {}\n\ndef remember(run):\n    global _last\n    _RUNS[id(run)] = run\n"
    )
    assert "_RUNS" in bound_names(tree)
    assert "_RUNS" in written_names([tree])
    assert "TABLE" not in written_names([ast.parse("TABLE = {}\nTABLE['a'] = 1\n")])
    assert any(isinstance(node, ast.Global) for node in ast.walk(tree))
    assert is_mutable({})
    assert is_mutable(threading.Lock())
    assert not is_mutable(frozenset())
    assert not is_mutable(contextvars.ContextVar("x"))
