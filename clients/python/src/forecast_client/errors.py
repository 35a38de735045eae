"""The exceptions of the client: every non-2xx answer becomes one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RateLimit:
    """The `X-RateLimit-*` headers of one answer: the binding window's
    allowance in cost units, what is left of it, and when it resets (Unix
    seconds, UTC)."""

    limit: int
    remaining: int
    reset: int

    @classmethod
    def from_headers(cls, headers) -> "RateLimit | None":
        try:
            return cls(
                limit=int(headers["x-ratelimit-limit"]),
                remaining=int(headers["x-ratelimit-remaining"]),
                reset=int(headers["x-ratelimit-reset"]),
            )
        except (KeyError, ValueError):
            return None


class ForecastAPIError(Exception):
    """An HTTP error answer of the server.

    `status` is the HTTP status, `detail` the server's `detail` string
    (every error of the API is JSON `{"detail": ...}`; for an answer that is
    not, the body's text), `retry_after` the `Retry-After` header in seconds
    when the answer has one, `rate_limit` its `X-RateLimit-*` headers.
    """

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        method: str = "",
        url: str = "",
        retry_after: float | None = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.method = method
        self.url = url
        self.retry_after = retry_after
        self.rate_limit = rate_limit


class RateLimitError(ForecastAPIError):
    """429: the account's quota (or the address's allowance) is used up;
    `retry_after` says in how many seconds the window resets."""
