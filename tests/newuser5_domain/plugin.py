"""The domain's plugin descriptor (entry point ``toolweave.plugins``: ``libr5``)."""

from __future__ import annotations

from pathlib import Path

from toolweave import Domain, Plugin


def load() -> tuple[Domain, list[object]]:
    """Build the domain only when it is asked for."""
    from newuser5_domain.library import library_domain

    domain, tools = library_domain()
    return domain, list(tools)


def plugin() -> Plugin:
    """The plugin: one domain and its golden file."""
    return Plugin(
        name="libr5",
        domains={"libr5": load},
        golden_files={"libr5": Path(__file__).with_name("golden.jsonl")},
    )
