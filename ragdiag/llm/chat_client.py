"""What the answer engine and the item runner ask of an LLM client, as a structural type.

:class:`ragdiag.llm.client.LLMClient` is one; so are the proxies that watch it — the sweep's call
tally (:class:`ragdiag.answers.contexts.CountingClient`) and triage's paid-call ledger
(:class:`ragdiag.triage.run.PaidClient`) — which forward everything else to the client they wrap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragdiag.llm.client import ChatResult, ClientConfig
    from ragdiag.llm.concurrency import InFlightLimit
    from ragdiag.remote.call_cache import CallCache


class ChatClient(Protocol):
    """Builds a request (hashed for the cache key) and returns its reply, cached or fresh."""

    config: ClientConfig
    cache: CallCache | None
    in_flight: InFlightLimit

    def request(self, messages: list[dict[str, str]], prompt: str, model: str | None = None,
                json_reply: bool = False, repeat: int | None = None, top_logprobs: int | None = None,
                max_tokens: int | None = None) -> dict[str, Any]: ...

    def chat(self, request: dict[str, Any], label: str = "", fresh: bool = False) -> ChatResult: ...

    def flush_batch(self, progress: bool = True) -> None: ...
