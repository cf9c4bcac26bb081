"""X4: secrets never reach error messages or log lines, even when an endpoint echoes them."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fake_openai import FakeError
from pydantic import BaseModel

from toolweave import RunContext, ToolResult, build_graph
from toolweave.llm.chat_model import ChatModelAssistant
from toolweave.llm.env import default_assistant
from toolweave.llm.errors import LlmRequestError, LlmUnavailableError
from toolweave.llm.retries import LlmRetryPolicy
from toolweave.state.run_scope import with_secrets
from toolweave.state.secrets import (
    REDACTED,
    RedactingFilter,
    is_secret_key,
    redact,
)
from toolweave.testing import FunctionAssistant
from toolweave.tools.base import ChatbotTool

KEY = "sk-live-7hG2kQ9zX4wP1mN8"
NORMALIZED = {"question": "Q?", "user_lang": "en", "important_words": [], "prompt_type": "other"}


def echo(status: int) -> FakeError:
    return FakeError(status, f"Incorrect API key provided: {KEY}. Find your key at example.org")


@pytest.fixture
def llm(fake_openai: Any) -> ChatModelAssistant:
    assistant = default_assistant(
        model="fake-model", api_key=KEY, base_url=fake_openai.base_url, env={}
    )
    assert isinstance(assistant, ChatModelAssistant)
    assistant.policy = LlmRetryPolicy(max_retries=1, initial_backoff=0)
    return assistant


@pytest.mark.network
def test_X4_api_key_echoed_in_an_error_body_is_redacted_from_the_error(fake_openai, llm):
    fake_openai.script(echo(401))
    with pytest.raises(LlmRequestError) as caught:
        llm.normalize("hi", [])
    message = str(caught.value)
    assert KEY not in message
    assert REDACTED in message
    assert "Incorrect API key provided" in message  # the endpoint's reason is kept


@pytest.mark.network
def test_X4_api_key_echoed_by_a_failing_endpoint_is_redacted_from_log_lines(
    fake_openai, llm, caplog
):
    fake_openai.script(echo(500), echo(500))
    with caplog.at_level(logging.DEBUG), pytest.raises(LlmUnavailableError) as caught:
        llm.normalize("hi", [])
    assert KEY not in str(caught.value)
    assert caplog.records, "the retry is logged"
    assert any(REDACTED in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert KEY not in record.getMessage()
    assert KEY not in caplog.text
    assert len(fake_openai.requests) == 2


@pytest.mark.network
def test_X4_cli_verbose_never_prints_the_echoed_api_key(fake_openai, monkeypatch, capsys, tmp_path):
    from toolweave import cli

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("TOOLWEAVE_LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path))
    fake_openai.script(echo(500), echo(401))
    code = cli.main(["-v", "ask", "Hol lehet parkolni?"])
    captured = capsys.readouterr()
    assert code == 1
    assert KEY not in captured.err
    assert KEY not in captured.out
    assert REDACTED in captured.err
    assert "HTTP 401" in captured.err
    assert len(fake_openai.requests) == 2


class Echo(BaseModel):
    pass


class LeakyTool(ChatbotTool[Echo]):
    """A tool that logs (badly) what it got, then fails with it in the message."""

    name = "leaky"
    executable_instruction = "leaky: always."
    request_model = Echo

    def execute(self, request: Echo, ctx: Any) -> ToolResult | None:
        data = dict(ctx.user_data or {})
        logging.getLogger("toolweave.tests.leaky").warning("user data: %s", data)
        return ToolResult.as_guaranteed_context(self.name, "done")


def test_X4_secret_user_data_is_redacted_from_every_log_line(caplog):
    assistant = FunctionAssistant(route=lambda text, tools: ["leaky"])
    graph = build_graph("test", [LeakyTool()], assistant=assistant)
    user_data = {
        "crm_token": "tok-3b9f00aa11",  # secret by its name
        "member_no": "M-2299-4411",  # secret because the run says so
        "profile": {"db_password": "hunter2-long"},  # nested, secret by name
        "city": "Szeged",  # not a secret
    }
    context = RunContext(user_data=user_data, secret_keys=frozenset({"member_no"}))
    with caplog.at_level(logging.WARNING):
        out = graph.invoke({"messages": [("human", "go")]}, context=context)
    assert out["activated"] == ["1:leaky"]
    text = caplog.text
    assert "user data:" in text
    for secret in ("tok-3b9f00aa11", "M-2299-4411", "hunter2-long"):
        assert secret not in text
    assert "Szeged" in text
    assert text.count(REDACTED) >= 3


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("crm_token", True),
        ("API-Key", True),
        ("apiKey", True),
        ("db_password", True),
        ("client_secret", True),
        ("credentials", True),
        ("token", True),
        ("max_tokens", False),
        ("city", False),
        ("tokenizer", False),
        ("author", False),
    ],
)
def test_X4_secret_keys_are_marked_by_name(key, secret):
    assert is_secret_key(key) is secret


def test_X4_explicitly_marked_keys_are_secret():
    assert is_secret_key("member_no", {"member_no"})
    assert not is_secret_key("member_no")


def test_X4_short_values_are_not_treated_as_secrets():
    with with_secrets(["ab"]):
        assert redact("ab cd") == "ab cd"


def test_X4_redacting_filter_scrubs_messages_arguments_and_tracebacks():
    record = logging.LogRecord(
        "x", logging.ERROR, __file__, 1, "login %s failed", ("pw-0000-secret-xyz",), None
    )
    try:
        raise RuntimeError("bad pw-0000-secret-xyz")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    with with_secrets(["pw-0000-secret-xyz"]):
        assert RedactingFilter().filter(record) is True
    assert "pw-0000-secret-xyz" not in record.getMessage()
    assert record.exc_text is not None
    assert "pw-0000-secret-xyz" not in record.exc_text
    assert "RuntimeError" in record.exc_text
