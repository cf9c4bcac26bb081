"""Results of pure text functions remembered for one phase step, and forgotten with it (PF1, X6).

One step asks the same questions of the same text many times (the answer's check reads each
sentence's figures and words in the rules, the check itself and the ledger's citation figures;
normalising detects the message's language twice). Inside :func:`remembered` a
:func:`per_step` function computes each argument once; outside it, it simply runs. The memo
lives in a context variable for the length of the block: nothing is kept between steps or
runs, and nothing process-wide holds a user's text (X6).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

_MEMO: contextvars.ContextVar[dict[Hashable, Any] | None] = contextvars.ContextVar(
    "toolweave_step_memo", default=None
)
"""The open step's remembered results (``None``: no step has opened one)."""


@contextmanager
def remembered() -> Iterator[None]:
    """Remember :func:`per_step` results for the block (a block already inside one shares it)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def per_step(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` (pure, hashable arguments) remembered inside :func:`remembered`.

    A list result is kept as a tuple and handed out as a new list each time, so a caller that
    changes its list changes nobody else's.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        memo = _MEMO.get()
        if memo is None:
            return func(*args, **kwargs)
        key = (func, args, tuple(kwargs.items()))
        if key not in memo:
            result = func(*args, **kwargs)
            memo[key] = (tuple(result), True) if isinstance(result, list) else (result, False)
            return result
        kept, listed = memo[key]
        return cast(R, list(kept)) if listed else cast(R, kept)

    return wrapper
