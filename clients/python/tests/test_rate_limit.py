"""Rate limits against the real server: an account with a quota of 2 units
a minute (set with `forecast user set-limits` by the fixture)."""

from __future__ import annotations

import time

import pytest

from forecast_client import Client, RateLimitError



def test_429_raises_then_waits_for_retry_after_and_retries(server):
    THROTTLED_PER_MINUTE = server.throttled_per_minute
    # The quota is per UTC minute: start early enough in a minute that the
    # window cannot reset between exhausting it and the checks below.
    if time.gmtime().tm_sec >= 50:
        time.sleep(61 - time.gmtime().tm_sec)

    plain = Client(server.base, server.throttled_key)
    calls = 0
    with pytest.raises(RateLimitError) as e:
        while calls < 10:
            plain.verdict("AAPL")
            calls += 1
            assert plain.rate_limit is not None and plain.rate_limit.limit == THROTTLED_PER_MINUTE
            assert plain.rate_limit.remaining == THROTTLED_PER_MINUTE - calls
    refused = e.value
    assert calls == THROTTLED_PER_MINUTE
    assert refused.status == 429
    assert "quota" in refused.detail and str(THROTTLED_PER_MINUTE) in refused.detail
    assert refused.retry_after is not None and 1 <= refused.retry_after <= 60
    assert refused.rate_limit is not None and refused.rate_limit.remaining == 0
    reset = refused.rate_limit.reset
    assert 0 < reset - time.time() <= 61

    # Asked to wait, but not that long: raises at once.
    impatient = Client(server.base, server.throttled_key, wait_on_rate_limit=True, max_wait=0.5)
    t0 = time.monotonic()
    with pytest.raises(RateLimitError):
        impatient.verdict("AAPL")
    assert time.monotonic() - t0 < 5 and impatient.waited == 0

    # Asked to wait: sleeps Retry-After, then the retry is served.
    patient = Client(server.base, server.throttled_key, wait_on_rate_limit=True, max_wait=65)
    t0 = time.monotonic()
    v = patient.verdict("AAPL")
    elapsed = time.monotonic() - t0
    assert v.ticker == "AAPL"
    assert patient.waited >= 1 and elapsed >= patient.waited
    assert time.time() >= reset
    assert patient.rate_limit is not None and patient.rate_limit.remaining == THROTTLED_PER_MINUTE - 1
    for c in (plain, impatient, patient):
        c.close()
