"""Build the default assistant from explicit values or the environment (read once, here).

The variables are listed in :func:`default_assistant` and docs/guides/models.md.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping

from toolweave.llm.port import LlmAssistant
from toolweave.state.errors import ConfigurationError

logger = logging.getLogger(__name__)
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT = 60.0
"""Seconds one model request may take before it fails (and is retried): no node hangs."""
DEFAULT_MAX_RETRIES = 2
"""Retries of a model call after a transient failure (so 3 attempts)."""
ENV_TIMEOUT = "TOOLWEAVE_LLM_TIMEOUT"
ENV_MAX_RETRIES = "TOOLWEAVE_LLM_MAX_RETRIES"
MAX_RETRIES_LIMIT = 20
"""More retries than this are refused: every wait stays bounded."""
ENV_ANSWER_TEMPERATURE = "TOOLWEAVE_ANSWER_TEMPERATURE"
DEFAULT_ANSWER_TEMPERATURE = 0.0
"""The default assistant's answers are reproducible: the same context, the same answer."""
SERVER_TEMPERATURE = "server"
"""The value of ``TOOLWEAVE_ANSWER_TEMPERATURE`` that keeps the server's own default."""


def _value(explicit: str | None, env: Mapping[str, str], *names: str) -> str | None:
    return explicit or next((value for name in names if (value := env.get(name, "").strip())), None)


def _number(
    raw: object, parse: Callable[[str], float], valid: Callable[[float], bool], rule: str
) -> float:
    """``raw`` read by ``parse`` when ``valid`` accepts it (NaN fails it too), else an error."""
    try:
        value = parse(str(raw))
    except ValueError:
        value = math.nan
    if math.isnan(value) or not valid(value):
        raise ConfigurationError(f"{rule}, got {raw!r}")
    return value


def _raw(explicit: object, env: Mapping[str, str], name: str) -> object:
    return explicit if explicit is not None else _value(None, env, name)


def llm_timeout(explicit: float | None, env: Mapping[str, str]) -> float:
    """The request timeout: ``explicit``, else ``TOOLWEAVE_LLM_TIMEOUT``, else 60 s.

    Raises:
        ConfigurationError: the value is not a positive number of seconds.
    """
    raw = _raw(explicit, env, ENV_TIMEOUT)
    if raw is None:
        return DEFAULT_TIMEOUT
    rule = f"{ENV_TIMEOUT} / timeout must be a positive number of seconds"
    return _number(raw, float, lambda s: math.isfinite(s) and s > 0, rule)


def llm_max_retries(explicit: int | None, env: Mapping[str, str]) -> int:
    """Retries: ``explicit``, else ``TOOLWEAVE_LLM_MAX_RETRIES``, else 2.

    Raises:
        ConfigurationError: the value is not a whole number from 0 to 20.
    """
    raw = _raw(explicit, env, ENV_MAX_RETRIES)
    if raw is None:
        return DEFAULT_MAX_RETRIES
    rule = f"{ENV_MAX_RETRIES} / max_retries must be a whole number from 0 to {MAX_RETRIES_LIMIT}"
    return int(_number(raw, int, lambda n: 0 <= n <= MAX_RETRIES_LIMIT, rule))


def llm_answer_temperature(explicit: float | str | None, env: Mapping[str, str]) -> float | None:
    """The answer's temperature: ``explicit``, else the variable, else 0; ``None``: the server's.

    Raises:
        ConfigurationError: the value is neither ``"server"`` nor a number from 0 to 2.
    """
    raw = _raw(explicit, env, ENV_ANSWER_TEMPERATURE)
    if raw is None:
        return DEFAULT_ANSWER_TEMPERATURE
    if str(raw).strip().lower() == SERVER_TEMPERATURE:
        return None
    rule = (
        f"{ENV_ANSWER_TEMPERATURE} / answer_temperature must be a number from 0 to 2 or "
        f"{SERVER_TEMPERATURE!r}"
    )
    return _number(raw, float, lambda t: 0 <= t <= 2, rule)


def default_assistant(
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    max_retries: int | None = None,
    timeout: float | None = None,
    answer_temperature: float | str | None = None,
) -> LlmAssistant:
    """The assistant an application gets when it does not bring one.

    With an API key, a :class:`~toolweave.llm.chat_model.ChatModelAssistant` over
    ``ChatOpenAI``; without one, the :class:`~toolweave.llm.offline.OfflineAssistant`.
    Explicit arguments win over the environment.

    Args:
        model: Model name; else ``TOOLWEAVE_MODEL``; else ``gpt-4o-mini``.
        api_key: API key; else ``OPENAI_API_KEY``. Never logged, redacted from errors (X4).
        base_url: OpenAI-compatible endpoint; else ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE``.
        env: Where to read the environment from (tests pass a dict).
        max_retries: Retries of transient failures; else ``TOOLWEAVE_LLM_MAX_RETRIES``; else 2.
        timeout: Seconds per request; else ``TOOLWEAVE_LLM_TIMEOUT``; else 60.
        answer_temperature: Temperature of the answer; else ``TOOLWEAVE_ANSWER_TEMPERATURE``;
            else 0 (same context, same answer). ``"server"`` keeps the server's default.

    Returns:
        The assistant.

    Raises:
        ConfigurationError: a timeout or retry count that is not a valid number.

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

    seconds = llm_timeout(timeout, env)
    retries = llm_max_retries(max_retries, env)
    name = _value(model, env, "TOOLWEAVE_MODEL") or DEFAULT_MODEL
    url = _value(base_url, env, "OPENAI_BASE_URL", "OPENAI_API_BASE")
    temperature = llm_answer_temperature(answer_temperature, env)
    chat = ChatOpenAI(
        model=name,
        api_key=SecretStr(key),
        base_url=url,
        timeout=seconds,
        max_retries=0,
        use_responses_api=False,
        temperature=temperature,
    )
    label = f"{name} at {url}" if url else f"OpenAI {name}"
    logger.info("using chat model %s (timeout %gs, %d retries)", label, seconds, retries)
    return ChatModelAssistant(chat, max_retries=retries, timeout=seconds, label=label)
