"""Secret redaction for error messages and log lines (X4).

What counts as a secret:

- the API key of a configured chat model (``default_assistant`` and
  ``ChatModelAssistant`` register it);
- the values of ``user_data`` keys marked secret: by name (a key whose
  snake-case parts include ``secret``, ``password``, ``passwd``, ``passphrase``,
  ``token``, ``apikey``/``api_key``, ``credential(s)`` or ``private_key``, e.g.
  ``crm_token``, ``API-Key``, ``db_password``) or explicitly
  (``RunContext(secret_keys={"member_no"})``);
- anything passed to :func:`register_secret`.

Values shorter than :data:`MIN_SECRET_CHARS` are not redacted (they would blank
ordinary words). Redaction replaces every occurrence with :data:`REDACTED` in the
errors toolweave raises and, once a secret is registered, in every log record
created in the process (a wrapping log-record factory; handlers that format
tracebacks can add :class:`RedactingFilter`).
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
"""What a secret is replaced with."""
MIN_SECRET_CHARS = 4
"""Shorter values are never treated as secrets."""
MAX_SECRETS = 1024
"""Secrets remembered at most; the oldest are forgotten first."""

_SECRET_KEY = re.compile(
    r"(?:^|_)(?:secret|password|passwd|passphrase|token|apikey|api_key|credentials?|"
    r"private_key|access_key|auth_token)(?:$|_)"
)
_NESTING = 4

_lock = threading.Lock()
_secrets: OrderedDict[str, None] = OrderedDict()
_pattern: re.Pattern[str] | None = None
_factory_installed = False


def is_secret_key(key: str, marked: Iterable[str] = ()) -> bool:
    """Whether ``key`` names a secret: by the naming convention or listed in ``marked``."""
    if key in marked:
        return True
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)
    return bool(_SECRET_KEY.search(re.sub(r"[^0-9a-z]+", "_", snake.lower())))


def register_secret(value: str | None) -> None:
    """Redact ``value`` from every later error message and log line."""
    global _pattern
    if value is None or len(value.strip()) < MIN_SECRET_CHARS:
        return
    with _lock:
        if value in _secrets:
            _secrets.move_to_end(value)
            return
        _secrets[value] = None
        while len(_secrets) > MAX_SECRETS:
            _secrets.popitem(last=False)
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))
    install_log_redaction()


def register_user_data(data: Mapping[str, Any] | None, marked: Iterable[str] = ()) -> None:
    """Register the values of ``data``'s secret keys (nested mappings included)."""
    if not data:
        return
    keys = frozenset(marked)
    _register_mapping(data, keys, depth=0)


def _register_mapping(data: Mapping[Any, Any], marked: frozenset[str], depth: int) -> None:
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        if is_secret_key(key, marked):
            _register_value(value)
        elif isinstance(value, Mapping) and depth < _NESTING:
            _register_mapping(value, marked, depth + 1)


def _register_value(value: Any) -> None:
    if isinstance(value, str):
        register_secret(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        register_secret(str(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _register_value(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _register_value(item)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`REDACTED`."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(REDACTED, text)


def scrub_record(record: logging.LogRecord) -> None:
    """Redact a log record's message, arguments and traceback in place."""
    if _pattern is None:
        return
    try:
        message = record.getMessage()
    except (TypeError, ValueError):
        return
    clean = redact(message)
    if clean != message:
        record.msg = clean
        record.args = None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip())
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place and keep it."""
        scrub_record(record)
        return True


def install_log_redaction() -> None:
    """Redact secrets from every log record created from now on (idempotent).

    Wraps the current log-record factory (so an application's own factory keeps
    working) and adds :class:`RedactingFilter` to the ``toolweave`` logger.
    """
    global _factory_installed
    with _lock:
        if _factory_installed:
            return
        _factory_installed = True
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            scrub_record(record)
            return record

        logging.setLogRecordFactory(factory)
    logging.getLogger("toolweave").addFilter(RedactingFilter())


__all__ = [
    "MAX_SECRETS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "RedactingFilter",
    "install_log_redaction",
    "is_secret_key",
    "redact",
    "register_secret",
    "register_user_data",
]
