"""The one way out of ragdiag to a remote model server, shared by the chat client and the API embedders.

- :mod:`.urls`: base-URL checks, ``redact_url`` (credentials never reach a file or a log line) and the
  normalised URL that goes into cache keys;
- :mod:`.retry`: one :class:`~.retry.RetryPolicy` and ``call_with_retries`` (injectable sleep);
- :mod:`.store`: one durable SQLite store (WAL, busy timeout, atomic transactions, sha256 keys of the
  sorted-JSON request) under both caches: :mod:`.call_cache` (LLM replies) and :mod:`.embedding_cache`
  (vectors), administered together by :mod:`.cache_admin` (``ragdiag cache``);
- :mod:`.transport`: the one seam through which HTTP requests go out (swap in ``httpx.MockTransport``),
  and the one place the openai and voyageai SDK clients are built (:mod:`.requests_adapter` puts the
  voyageai SDK's ``requests`` session on the same seam);
- :mod:`.endpoint`: one cheap check that the server answers before a run that needs it.

Nothing here imports ``ragdiag.llm`` or ``ragdiag.retrieval``.
"""
