"""The one retry policy: what is retried, the waits asked for (injected sleep), what ends the item or the run."""

from __future__ import annotations

import httpx
import pytest

from ragdiag.remote.retry import (
    BadReply,
    CallFailed,
    Refused,
    RetryPolicy,
    call_with_retries,
    retry_after_seconds,
)


def _status_error(status: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/x")
    response = httpx.Response(status, headers=headers or {}, request=request)
    return httpx.HTTPStatusError(f"status {status}", request=request, response=response)


class Script:
    """Raises the given errors in order, then returns 'ok'; counts calls."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_exponential_backoff_without_jitter_is_exact():
    sleeps: list[float] = []
    fn = Script(_status_error(500), _status_error(502), _status_error(503), httpx.ConnectError("refused"))
    policy = RetryPolicy(max_retries=5, backoff_base=0.5, backoff_max=3.0, jitter=0.0)
    assert call_with_retries(fn, policy, sleep=sleeps.append) == "ok"
    assert sleeps == [0.5, 1.0, 2.0, 3.0]  # 0.5·2^(n-1), capped at 3
    assert fn.calls == 5


def test_jitter_is_added_within_its_bound():
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=2, backoff_base=1.0, jitter=0.25)
    call_with_retries(Script(_status_error(500), _status_error(500)), policy, sleep=sleeps.append, rng=lambda: 1.0)
    assert sleeps == [1.25, 2.25]


@pytest.mark.parametrize("headers,expected", [({"Retry-After": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5),
                                              ({"Retry-After": "120"}, 60.0), ({"Retry-After": "soon"}, 2.0)])
def test_retry_after_is_honoured_and_capped(headers, expected):
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=1, backoff_base=2.0, backoff_max=60.0, jitter=0.0)
    call_with_retries(Script(_status_error(429, headers)), policy, sleep=sleeps.append)
    assert sleeps == [expected]


def test_retry_after_parser_ignores_non_finite_values():
    assert retry_after_seconds(_status_error(429, {"Retry-After": "inf"})) is None
    assert retry_after_seconds(_status_error(429, {"Retry-After": "-3"})) == 0.0


def test_budget_spent_fails_the_item_and_reports_on_retry():
    sleeps, seen = [], []
    policy = RetryPolicy(max_retries=2, backoff_base=0.1, jitter=0.0)
    fn = Script(*[_status_error(503)] * 3)
    with pytest.raises(CallFailed, match=r"^HTTP 503: status 503 after 2 retries$"):
        call_with_retries(fn, policy, sleep=sleeps.append, on_retry=lambda err, wait: seen.append(wait))
    assert fn.calls == 3 and sleeps == seen == [0.1, 0.2]


def test_bad_reply_is_retried_like_a_5xx():
    sleeps: list[float] = []
    fn = Script(BadReply("the reply has no choices"), BadReply("the reply is an HTML page"))
    assert call_with_retries(fn, RetryPolicy(max_retries=2, jitter=0.0), sleep=sleeps.append) == "ok"
    assert len(sleeps) == 2
    with pytest.raises(CallFailed, match=r"^bad reply: the reply has no choices after 0 retries$"):
        call_with_retries(Script(BadReply("the reply has no choices")), RetryPolicy(max_retries=0), sleep=sleeps.append)


def test_other_4xx_fail_the_item_at_once_and_auth_stops_the_run():
    sleeps: list[float] = []
    with pytest.raises(CallFailed, match=r"HTTP 400.*\(not retryable\)$"):
        call_with_retries(Script(_status_error(400)), RetryPolicy(), sleep=sleeps.append)
    for status in (401, 403, 404):
        with pytest.raises(Refused, match=rf"refused the request \(HTTP {status}"):
            call_with_retries(Script(_status_error(status)), RetryPolicy(), sleep=sleeps.append)
    assert sleeps == []


def test_unrelated_exceptions_pass_through_untouched():
    with pytest.raises(KeyError):
        call_with_retries(Script(KeyError("bug")), RetryPolicy(), sleep=lambda s: None)


@pytest.mark.parametrize("kwargs,message", [({"max_retries": -1}, "max retries"), ({"backoff_base": float("nan")}, "backoff base"),
                                            ({"backoff_max": -1.0}, "backoff max")])
def test_policy_rejects_impossible_settings(kwargs, message):
    from ragdiag.errors import RagdiagError

    with pytest.raises(RagdiagError, match=message):
        RetryPolicy(**kwargs)
