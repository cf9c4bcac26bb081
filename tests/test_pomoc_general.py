"""G1: the helpdesk's own words stay out of the library's code (issue 36 item 3, for pomoc).

Docstrings and comments may name an example (they explain); code may not.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from toolweave_pomoc.vocabulary import VOCABULARY

ROOT = Path(__file__).parents[1]
LIBRARY = ("graph", "tools", "coordinators", "state", "llm", "toolweave")


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            is_text = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            if is_text and isinstance(stmt.value.value, str):
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def code_of(source: str) -> str:
    """The source without its comments and docstrings (bare strings as statements)."""
    skip = _docstring_lines(ast.parse(source))
    kept = [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type != tokenize.COMMENT and tok.start[0] not in skip
    ]
    return " ".join(kept)


def test_G1_general_code_of_strips_comments_and_docstrings_only() -> None:
    source = '"""urlop."""\nx = 1  # urlop\ny = "urlop"\n'
    assert "urlop" not in code_of(source).replace('"urlop"', "")
    assert '"urlop"' in code_of(source)


def test_G1_general_pomoc_vocabulary_is_not_in_the_library_code() -> None:
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(w) for w in sorted(VOCABULARY)) + r")\b", re.IGNORECASE
    )
    found = {
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for folder in LIBRARY
        for path in sorted((ROOT / folder).rglob("*.py"))
        for match in pattern.finditer(code_of(path.read_text(encoding="utf-8")))
    }
    assert not found, sorted(found)
