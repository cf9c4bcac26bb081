"""Stream text made without a model through a chat model's callbacks, as an LLM's tokens (P2)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, TypeAlias

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    BaseCallbackManager,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config

Messages: TypeAlias = list[BaseMessage]
Stop: TypeAlias = list[str] | None
SyncRun: TypeAlias = CallbackManagerForLLMRun | None
AsyncRun: TypeAlias = AsyncCallbackManagerForLLMRun | None
"""The parts of a LangChain chat model's ``_generate``/``_stream`` signatures."""
ANSWER_TAG = "toolweave:answer"
"""Tag on every streamed final answer, so clients can pick answer tokens out."""
_PIECES = re.compile(r"\S+\s*|\s+")


def split_for_streaming(text: str) -> list[str]:
    """Split ``text`` into word-sized chunks that join back to exactly ``text``."""
    return _PIECES.findall(text)


class PassthroughChatModel(BaseChatModel):
    """A stateless chat model "generating" the ``chunks`` it is given, else the last message."""

    @property
    def _llm_type(self) -> str:
        return "toolweave-passthrough"

    @staticmethod
    def _pieces(messages: list[BaseMessage], chunks: Iterable[str] | None) -> Iterator[str]:
        if chunks is not None:
            yield from chunks
        elif messages:
            yield from split_for_streaming(messages[-1].text)

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: SyncRun = None, **kwargs: Any
    ) -> ChatResult:
        text = "".join(self._pieces(messages, kwargs.get("chunks")))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: SyncRun = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for piece in self._pieces(messages, kwargs.get("chunks")):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    async def _apieces(
        self, messages: list[BaseMessage], chunks: AsyncIterable[str] | Iterable[str] | None
    ) -> AsyncIterator[str]:
        if isinstance(chunks, AsyncIterable):
            async for piece in chunks:
                yield piece
        else:
            for piece in self._pieces(messages, chunks):
                yield piece

    async def _agenerate(
        self, messages: Messages, stop: Stop = None, run_manager: AsyncRun = None, **kwargs: Any
    ) -> ChatResult:
        text = "".join([piece async for piece in self._apieces(messages, kwargs.get("chunks"))])
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _astream(
        self, messages: Messages, stop: Stop = None, run_manager: AsyncRun = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for piece in self._apieces(messages, kwargs.get("chunks")):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def _anyone_listening() -> bool:
    """Whether the current run has callback handlers: else no one sees tokens (PF1)."""
    callbacks = (var_child_runnable_config.get() or {}).get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        return bool(callbacks.handlers)
    return bool(callbacks)


_PASSTHROUGH = PassthroughChatModel()
"""Stateless, so shared: building a chat model per call costs LangChain's callback setup."""


def stream_message(chunks: Iterable[str] | str, *, run_name: str = "answer") -> AIMessage:
    """Stream ``chunks`` to ``stream_mode="messages"``; the whole message keeps the stream's id."""
    if not _anyone_listening():
        return AIMessage(content="".join(chunks), id=f"lc_run--{uuid.uuid4()}")
    config: RunnableConfig = {"tags": [ANSWER_TAG], "run_name": run_name}
    if isinstance(chunks, str):
        message = _PASSTHROUGH.invoke([HumanMessage(content=chunks)], config)
    else:
        message = _PASSTHROUGH.invoke([HumanMessage(content="")], config, chunks=iter(chunks))
    return AIMessage(content=message.text, id=message.id)


async def astream_message(
    chunks: AsyncIterable[str] | Iterable[str] | str, *, run_name: str = "answer"
) -> AIMessage:
    """Async :func:`stream_message`: ``chunks`` may also be an async iterable (no thread)."""
    if not _anyone_listening():
        if isinstance(chunks, AsyncIterable):
            chunks = "".join([piece async for piece in chunks])
        return AIMessage(content="".join(chunks), id=f"lc_run--{uuid.uuid4()}")
    config: RunnableConfig = {"tags": [ANSWER_TAG], "run_name": run_name}
    if isinstance(chunks, str):
        message = await _PASSTHROUGH.ainvoke([HumanMessage(content=chunks)], config)
    else:
        message = await _PASSTHROUGH.ainvoke([HumanMessage(content="")], config, chunks=chunks)
    return AIMessage(content=message.text, id=message.id)
