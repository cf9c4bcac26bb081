"""default_assistant: explicit values win over the environment; no key means offline."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.offline import OfflineAssistant


def test_no_key_gives_the_offline_assistant():
    assert isinstance(default_assistant(env={}), OfflineAssistant)
    assert isinstance(default_assistant(env={"OPENAI_API_KEY": "  "}), OfflineAssistant)


def test_key_in_env_gives_chat_openai_with_timeout_and_no_sdk_retries():
    env = {
        "OPENAI_API_KEY": "sk-secret",
        "TOOLWEAVE_MODEL": "my-model",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    assistant = default_assistant(env=env)
    assert isinstance(assistant, ChatModelAssistant)
    model = assistant.model
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "my-model"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.request_timeout == 60.0
    assert model.max_retries == 0
    assert model.use_responses_api is False
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in assistant.label
    assert "my-model" in assistant.label


def test_explicit_values_win_over_env():
    env = {"OPENAI_API_KEY": "env-key", "TOOLWEAVE_MODEL": "env-model"}
    assistant = default_assistant(
        model="arg-model", api_key="arg-key", base_url="http://127.0.0.1:9/v1", env=env
    )
    assert isinstance(assistant, ChatModelAssistant)
    assert assistant.model.model_name == "arg-model"  # type: ignore[attr-defined]
    assert assistant.model.openai_api_key.get_secret_value() == "arg-key"  # type: ignore[attr-defined]


def test_default_model_name():
    assistant = default_assistant(env={"OPENAI_API_KEY": "k"})
    assert isinstance(assistant, ChatModelAssistant)
    assert assistant.model.model_name == "gpt-4o-mini"  # type: ignore[attr-defined]


def test_X5_answer_temperature_out_of_range_is_a_configuration_error():
    import pytest

    from toolweave.state.errors import ConfigurationError

    for bad in ("hot", "-1", "3", "nan"):
        with pytest.raises(ConfigurationError, match="TOOLWEAVE_ANSWER_TEMPERATURE"):
            default_assistant(env={"OPENAI_API_KEY": "k", "TOOLWEAVE_ANSWER_TEMPERATURE": bad})
    explicit = default_assistant(env={"OPENAI_API_KEY": "k"}, answer_temperature=0.3)
    assert explicit.model.temperature == 0.3  # type: ignore[attr-defined]
