"""Build the default assistant from explicit values or the environment (read once, here)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from toolweave.llm.port import LlmAssistant

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT = 60.0
"""Seconds one model request may take before it fails (and is retried): no node hangs."""


def _value(explicit: str | None, env: Mapping[str, str], *names: str) -> str | None:
    if explicit:
        return explicit
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def default_assistant(
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    max_retries: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
) -> LlmAssistant:
    """The assistant an application gets when it does not bring one.

    Explicit arguments win over the environment. With an API key
    (``OPENAI_API_KEY``) it is a :class:`~toolweave.llm.chat_model.ChatModelAssistant`
    over ``ChatOpenAI`` (model ``TOOLWEAVE_MODEL`` or ``gpt-4o-mini``, endpoint
    ``OPENAI_BASE_URL`` or ``OPENAI_API_BASE`` for OpenAI-compatible servers);
    without one it is the deterministic
    :class:`~toolweave.llm.offline.OfflineAssistant`.

    Args:
        model: Model name; else ``TOOLWEAVE_MODEL``; else ``gpt-4o-mini``.
        api_key: API key; else ``OPENAI_API_KEY``. Never logged.
        base_url: OpenAI-compatible endpoint; else ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE``.
        env: Where to read the environment from (tests pass a dict).
        max_retries: Retries of transient failures, done by toolweave (the SDK's are off).
        timeout: Seconds per request.

    Returns:
        The assistant.

    Example:
        >>> default_assistant(env={}).label
        'offline model (no LLM: lexical routing, extractive answers)'
    """
    key = _value(api_key, env, "OPENAI_API_KEY")
    if key is None:
        from toolweave.llm.offline import OfflineAssistant

        logger.info("no OPENAI_API_KEY: using the offline assistant")
        return OfflineAssistant()

    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from toolweave.llm.chat_model import ChatModelAssistant

    name = _value(model, env, "TOOLWEAVE_MODEL") or DEFAULT_MODEL
    url = _value(base_url, env, "OPENAI_BASE_URL", "OPENAI_API_BASE")
    chat = ChatOpenAI(
        model=name,
        api_key=SecretStr(key),
        base_url=url,
        timeout=timeout,
        max_retries=0,
        use_responses_api=False,
    )
    label = f"{name} at {url}" if url else f"OpenAI {name}"
    logger.info("using chat model %s", label)
    return ChatModelAssistant(chat, max_retries=max_retries, label=label)


__all__ = ["DEFAULT_MODEL", "DEFAULT_TIMEOUT", "default_assistant"]
