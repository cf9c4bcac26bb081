"""G1: nothing of an example domain's own vocabulary in the library's code.

Each example domain under ``examples/`` brings its vocabulary: its domain and tool
names (from its plugin), the names its data gives things (the ``name``, ``title``,
``family``, ``given`` and ``aliases`` fields of its JSON files, its documents'
titles: a ``title:`` line or the first ``# `` heading), and the distinctive words its
author lists in ``<package>.vocabulary.VOCABULARY``, when it has one. The library's code
(identifiers and string literals of every ``.py`` file in the library folders,
docstrings and comments aside) holds none of
them: a single name as a whole word, a name of several words as a phrase. A word the
library's own language data treats as a common word (its stop and generic word
lists) is no domain's name. The test fails naming the word, the domain file it comes
from and the library lines that use it.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import tokenize
import unicodedata
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from toolweave.llm.lexical import GENERIC_WORDS, ROUTING_STOPWORDS
from toolweave.tools.text import STOPWORDS

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("graph", "tools", "coordinators", "state", "llm", "toolweave")
EXAMPLES = ROOT / "examples"
NAME_FIELDS = re.compile(r"^(name(_\w+)?|title(_\w+)?|family|given|aliases)$")
WORD = re.compile(r"[^\W\d_]+")
MIN_LETTERS = 4
"""Shorter names ("A", "B" buildings, "SZTK") are left out: too many false hits."""


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> tuple[str, ...]:
    return tuple(fold(w) for w in WORD.findall(text))


COMMON = frozenset(fold(w) for w in STOPWORDS | GENERIC_WORDS | ROUTING_STOPWORDS)


def _named_values(data: Any, key: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _named_values(v, k)
    elif isinstance(data, list):
        for item in data:
            yield from _named_values(item, key)
    elif isinstance(data, str) and NAME_FIELDS.match(key):
        yield data


def _titles(path: Path) -> Iterator[str]:
    """A document's title: its front matter's ``title:`` or its first ``# `` heading."""
    text = path.read_text(encoding="utf-8")
    head = text.split("\n---", 1)[0]
    yield from re.findall(r"^title:\s*(.+)$", head, flags=re.MULTILINE)
    yield from re.findall(r"^# (.+)$", text, flags=re.MULTILINE)[:1]


def _plugin_names(package: str) -> Iterator[tuple[str, str]]:
    for point in entry_points(group="toolweave.plugins"):
        if point.module.split(".")[0] != package:
            continue
        plugin = point.load()()
        for name, load in plugin.domains.items():
            yield name, f"{package}: domain"
            _, tools = load()
            for tool in tools:
                yield tool.name, f"{package}: tool"


def _listed(package: str) -> frozenset[str]:
    """The distinctive words a domain's author lists (``<package>.vocabulary.VOCABULARY``)."""
    try:
        module = importlib.import_module(f"{package}.vocabulary")
    except ModuleNotFoundError:
        return frozenset()
    return frozenset(getattr(module, "VOCABULARY", ()))


def vocabulary(example: Path) -> dict[tuple[str, ...], str]:
    """Each name of ``example`` (folded words) and where it comes from."""
    package = next(p for p in example.iterdir() if (p / "__init__.py").exists())
    found: dict[tuple[str, ...], str] = {}
    for path in sorted(package.rglob("*.json")):
        for value in _named_values(json.loads(path.read_text(encoding="utf-8"))):
            found.setdefault(words(value), path.name)
    for path in sorted(package.rglob("*.md")):
        for title in _titles(path):
            found.setdefault(words(title), path.name)
    for name, source in _plugin_names(package.name):
        found.setdefault(tuple(fold(part) for part in name.split("_") if part), source)
    for word in _listed(package.name):
        found.setdefault(words(word), f"{package.name}.vocabulary")
    return {
        name: source
        for name, source in found.items()
        if name
        and sum(map(len, name)) >= MIN_LETTERS
        and not (len(name) == 1 and name[0] in COMMON)
    }


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if is_text and isinstance(node.value.value, str):  # type: ignore[attr-defined]
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))  # type: ignore[attr-defined]
    return lines


def code_texts(path: Path) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Each identifier (split at ``_``) and string literal of ``path``, as folded words."""
    source = path.read_text(encoding="utf-8")
    skipped = _docstring_lines(ast.parse(source))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            yield token.start[0], tuple(fold(p) for p in token.string.split("_") if p)
        elif token.type == tokenize.STRING and token.start[0] not in skipped:
            yield token.start[0], words(token.string)


def _holds(text: tuple[str, ...], name: tuple[str, ...]) -> bool:
    size = len(name)
    return any(text[i : i + size] == name for i in range(len(text) - size + 1))


def library_hits(names: dict[tuple[str, ...], str]) -> list[str]:
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for name in names:
        by_first.setdefault(name[0], []).append(name)
    hits = []
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, text in code_texts(path):
                for word in set(text) & by_first.keys():
                    for name in by_first[word]:
                        if _holds(text, name):
                            where = f"{path.relative_to(ROOT)}:{line}"
                            hits.append(f"{' '.join(name)!r} ({names[name]}) in {where}")
    return hits


EXAMPLE_DIRS = sorted(p for p in EXAMPLES.iterdir() if (p / "pyproject.toml").exists())


@pytest.mark.parametrize("example", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_G1_general_library_code_holds_no_example_domains_vocabulary(example: Path):
    names = vocabulary(example)
    assert len(names) >= 20, f"{example.name}: too little vocabulary found to check"
    assert library_hits(names) == []


def test_G1_general_vocabulary_check_finds_a_planted_name(tmp_path: Path):
    """The check itself: a name in code is found, the same name in a docstring is not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""Mentions Cardiology Ward only here."""\n'
        "def cardiology_hours() -> str:\n"
        '    """Cardiology Ward, in a docstring."""\n'
        '    return "ask the Cardiology Ward"  # and in a comment: Cardiology Ward\n',
        encoding="utf-8",
    )
    texts = list(code_texts(planted))
    assert any(_holds(text, ("cardiology",)) for _, text in texts)
    assert [line for line, text in texts if _holds(text, ("cardiology", "ward"))] == [4]


def heldout_questions_in_code(example: Path) -> list[str]:
    """Held-out golden questions that an example package's code holds word for word.

    A reply to a question the tool asked (a case with ``history``) may name one of
    the tool's own choices: that is the tool's design, not a leak.
    """
    golden = next(example.glob("*/golden.jsonl"), None)
    if golden is None:
        return []
    code = "\n".join(p.read_text(encoding="utf-8") for p in example.glob("*/*.py"))
    cases = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line]
    return [
        f"{case['id']}: {case['question']!r}"
        for case in cases
        if case.get("split") == "heldout"
        and not case.get("history")
        and len(case["question"]) > 12
        and case["question"] in code
    ]


@pytest.mark.parametrize("example", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_G1_general_no_heldout_question_in_an_example_domains_code(example: Path):
    """A held-out question written into a tool's examples is a change made for it (G1)."""
    assert heldout_questions_in_code(example) == []
