"""The routing threshold a user calibrated (T5), kept in a file they can commit.

``toolweave eval --calibrate-routing`` writes it; ``build_graph(routing_threshold=)`` wins.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolweave.state.errors import ConfigurationError

ROUTING_FILE = "toolweave-routing.json"  # in the current directory
ROUTING_FILE_ENV = "TOOLWEAVE_ROUTING_FILE"  # another path for it


def routing_file(env: Mapping[str, str] = os.environ) -> Path:
    """Where the calibrated thresholds are kept: ``TOOLWEAVE_ROUTING_FILE``, else the default."""
    return Path(env.get(ROUTING_FILE_ENV) or ROUTING_FILE)


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}; fix or delete the file") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} must hold a JSON object of domains; fix or delete it")
    return data


def stored_threshold(domain: str, path: Path | None = None) -> float | None:
    """The threshold stored for ``domain``, or ``None``; a malformed file raises."""
    where = path or routing_file()
    entry = _read(where).get(domain)
    value = entry.get("routing_threshold") if isinstance(entry, dict) else None
    if value is None:
        return None
    if not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigurationError(f"{where}: {domain}.routing_threshold must be a number in 0-1")
    return float(value)


def store_threshold(
    domain: str, threshold: float | None, *, about: Mapping[str, Any], path: Path | None = None
) -> Path:
    """Write ``threshold`` (``None``: none is best) and ``about`` for ``domain``; returns where."""
    where = path or routing_file()
    data = _read(where)
    data[domain] = {"routing_threshold": threshold, **about}
    where.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return where
