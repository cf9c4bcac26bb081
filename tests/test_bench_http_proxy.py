"""Issue 37 item 3, A10: the bench counts model calls at the HTTP boundary.

``bench.http_proxy.CountingProxy`` in front of a tiny fake OpenAI-compatible server
(no model): it counts chat-completion requests and their characters, and passes
responses, streamed ones included, through byte for byte.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from bench.http_proxy import DUMP_VARIABLE, CountingProxy, message_chars
from tests.fake_openai import FakeOpenAI


def _post(base_url: str, body: dict[str, object]) -> tuple[int, bytes, dict[str, str]]:
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        data = json.dumps(body).encode()
        conn.request(
            "POST", f"{parts.path}/chat/completions", body=data, headers={"Content-Type": "x"}
        )
        response = conn.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        conn.close()


def test_A10_proxy_counts_chat_completion_calls_and_request_characters() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    with FakeOpenAI(["one", "two"]) as server, CountingProxy(server.base_url) as proxy:
        before = proxy.counts()
        _post(proxy.base_url, body)
        _post(proxy.base_url, {**body, "messages": [{"role": "system", "content": "abc"}]})
        after = proxy.counts()
    sent = len(json.dumps(body)) + len(
        json.dumps({**body, "messages": [{"role": "system", "content": "abc"}]})
    )
    assert (after - before).calls == 2
    assert (after - before).body_chars == sent
    assert (after - before).message_chars == len("hello there") + len("abc")
    assert len(server.requests) == 2  # forwarded, both
    assert (after - before).kinds == (("plain", 2),)


def test_A10_proxy_names_each_call_by_its_reply_schema_or_stream() -> None:
    structured = {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "GatekeeperReply"}},
    }
    streamed = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]}
    with (
        FakeOpenAI([{"sufficient": True}, "answer"]) as server,
        CountingProxy(server.base_url) as proxy,
    ):
        _post(proxy.base_url, structured)
        _post(proxy.base_url, streamed)
        counts = proxy.counts()
    assert counts.kinds == (("GatekeeperReply", 1), ("stream", 1))


def test_A10_proxy_passes_responses_through_unchanged_streamed_or_not() -> None:
    streamed = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]}
    plain = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    with FakeOpenAI(["a streamed answer"] * 2 + ["whole"] * 2) as server:
        direct_stream = _post(server.base_url, streamed)
        with CountingProxy(server.base_url) as proxy:
            proxied_stream = _post(proxy.base_url, streamed)
            direct_plain = _post(server.base_url, plain)
            proxied_plain = _post(proxy.base_url, plain)
            counts = proxy.counts()
    assert proxied_stream[0] == direct_stream[0] == 200
    assert proxied_stream[1] == direct_stream[1]
    assert b"data: [DONE]" in proxied_stream[1]
    assert proxied_stream[2]["Content-Type"] == "text/event-stream"
    assert proxied_plain[:2] == direct_plain[:2]
    assert counts.calls == 2  # only the proxied ones


def test_A10_proxy_serves_a_langchain_chat_model_streaming_and_structured() -> None:
    with (
        FakeOpenAI(["Hello from the fake.", "Second."]) as server,
        CountingProxy(server.base_url) as proxy,
    ):
        model = ChatOpenAI(
            model="m", base_url=proxy.base_url, api_key=SecretStr("test"), max_retries=0
        )
        streamed = "".join(str(chunk.content) for chunk in model.stream("hi"))
        whole = model.invoke("hi again")
        counts = proxy.counts()
    assert streamed == "Hello from the fake."
    assert whole.content == "Second."
    assert counts.calls == 2
    assert counts.message_chars == len("hi") + len("hi again")


def test_A10_proxy_counts_other_paths_apart_and_answers_502_without_upstream() -> None:
    with FakeOpenAI() as server, CountingProxy(server.base_url) as proxy:
        parts = urlsplit(proxy.base_url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        conn.request("GET", f"{parts.path}/models")
        conn.getresponse().read()
        conn.close()
        url = server.base_url
        assert proxy.counts().calls == 0
        assert proxy.counts().other == (("GET /v1/models", 1),)
    with CountingProxy(url) as proxy:  # the fake is gone: nothing listens upstream
        status, payload, _ = _post(proxy.base_url, {"messages": []})
        assert status == 502
        assert b"upstream unreachable" in payload
        assert proxy.counts().calls == 1
    assert message_chars({"messages": [{"content": [{"type": "text", "text": "abcd"}]}]}) == 4
    assert message_chars("not a body") == 0


def test_A10_proxy_dump_writes_each_request_then_its_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "calls.jsonl"
    monkeypatch.setenv(DUMP_VARIABLE, str(dump))
    body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    with FakeOpenAI(["first reply"]) as server, CountingProxy(server.base_url) as proxy:
        _, replied, _ = _post(proxy.base_url, body)
    lines = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["plain", "reply"]
    assert lines[0]["body"] == body
    assert lines[1]["body"] == json.loads(replied)
    assert lines[1]["chars"] == len(replied.decode())
