"""Secret redaction for error messages, log lines and progress events (X4, X6)."""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from toolweave.state.run_scope import secret_pattern

REDACTED = "[redacted]"
LIBRARY_LOGGER = "toolweave"  # every module logs under it

_SECRET_KEY = re.compile(
    r"(?:^|_)(?:secret|password|passwd|passphrase|token|apikey|api_key|credentials?|"
    r"private_key|access_key|auth_token)(?:$|_)"
)
_NESTING = 4


def is_secret_key(key: str, marked: Iterable[str] = ()) -> bool:
    """Whether ``key`` names a secret: by the naming convention or listed in ``marked``."""
    if key in marked:
        return True
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)
    return bool(_SECRET_KEY.search(re.sub(r"[^0-9a-z]+", "_", snake.lower())))


def secret_values(data: Mapping[str, Any] | None, marked: Iterable[str] = ()) -> frozenset[str]:
    """The values of ``data``'s secret keys (nested mappings included), as texts."""
    return frozenset(_mapping(data, frozenset(marked), depth=0)) if data else frozenset()


def _mapping(data: Mapping[Any, Any], marked: frozenset[str], depth: int) -> Iterator[str]:
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        if is_secret_key(key, marked):
            yield from _texts(value)
        elif isinstance(value, Mapping) and depth < _NESTING:
            yield from _mapping(value, marked, depth + 1)


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, Mapping | list | tuple):
        for item in value.values() if isinstance(value, Mapping) else value:
            yield from _texts(item)


@runtime_checkable
class HoldsSecrets(Protocol):
    """Something configured with secrets, e.g. a model assistant with its API key."""

    def secret_values(self) -> frozenset[str]:
        """The values to redact wherever this object is used."""
        ...


def secrets_of(*holders: object) -> frozenset[str]:
    """The secret values of every ``holder`` that has some (others are skipped)."""
    return frozenset[str]().union(
        *(h.secret_values() for h in holders if h is not None and isinstance(h, HoldsSecrets))
    )


def error_text(error: BaseException, *hidden: str) -> str:
    """``error``'s message on one line (else its type's name), each ``hidden`` value as ``***``."""
    text = " ".join(str(error).split()) or type(error).__name__
    for value in hidden:
        text = text.replace(value, "***") if value else text
    return text


def redact(text: str) -> str:
    """``text`` with every secret of the current run replaced by :data:`REDACTED`."""
    pattern = secret_pattern()
    return text if pattern is None or not text else pattern.sub(REDACTED, text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the current run's secrets; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record``'s message, arguments and traceback in place, and keep it."""
        pattern = secret_pattern()
        if pattern is None:
            return True
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        clean = pattern.sub(REDACTED, message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip()
            record.exc_text = pattern.sub(REDACTED, text)
        elif record.exc_text:
            record.exc_text = pattern.sub(REDACTED, record.exc_text)
        return True


class _RedactingNullHandler(logging.NullHandler):
    """Writes nothing; runs its filters, so the records it sees are redacted in place."""

    def handle(self, record: logging.LogRecord) -> bool:
        self.filter(record)
        return True


def _redact_library_records() -> None:
    """Put :class:`RedactingFilter` on a handler of the library's top logger (once)."""
    top = logging.getLogger(LIBRARY_LOGGER)
    if not any(isinstance(handler, _RedactingNullHandler) for handler in top.handlers):
        handler = _RedactingNullHandler()
        handler.addFilter(RedactingFilter())
        top.addHandler(handler)


_redact_library_records()
