"""The fixture: a real `forecast serve` on a free port over a temporary
SQLite database, set up with the binary's own CLI as web/test/harness.mjs
does (demo universe, a small active universe graded, accounts and keys).

Environment:
  FORECAST_BIN   the binary (default: <repo>/target/release/forecast)
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PASSWORD = "correct-horse-battery-python-client"
PREMIUM = "premium@forecast.test"
# A Premium account whose quota is 2 units a minute: the rate-limit tests'.
THROTTLED = "throttled@forecast.test"
THROTTLED_PER_MINUTE = 2

# As tests/it/grading.rs `small_universe`: each category's first asset and a
# few named ones stay active, so that grading takes seconds.
SMALL_UNIVERSE = """
UPDATE assets SET is_active = (id IN (SELECT MIN(id) FROM assets GROUP BY category)
    OR ticker IN ('^GSPC', '^IXIC', '^VIX', 'CL=F', 'AAPL'))
"""


@dataclass
class Server:
    base: str
    key: str
    throttled_key: str
    env: dict[str, str]
    bin: str
    active_assets: int
    throttled_per_minute: int
    log: list[str] = field(default_factory=list)

    def cli(self, *args: str, input: str | None = None) -> str:
        return _run(self.bin, list(args), self.env, input)


def _run(bin: str, args: list[str], env: dict[str, str], input: str | None = None) -> str:
    r = subprocess.run([bin, *args], env=env, input=input, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"forecast {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def _key(bin: str, env: dict[str, str], email: str) -> str:
    out = _run(bin, ["key", "create", "--email", email, "--name", "python-client-tests"], env)
    key = out.strip().splitlines()[-1].strip()
    assert re.fullmatch(r"svc_[0-9a-f]{64}", key), out
    return key


@pytest.fixture(scope="session")
def server():
    bin = os.environ.get("FORECAST_BIN") or str(REPO / "target" / "release" / "forecast")
    if not os.path.exists(bin):
        pytest.fail(f"no forecast binary at {bin}: run 'make build' (or set FORECAST_BIN)", pytrace=False)
    work = Path(tempfile.mkdtemp(prefix="forecast-python-client-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite://{work / 'f.db'}",
        "RUST_LOG": os.environ.get("RUST_LOG", "warn"),
        "FORECAST_GRADING": "off",
        "FORECAST_MODULE_CACHE": str(work / "modules"),
    }
    for k in ("FORECAST_ORIGIN", "FORECAST_ADMIN_TOKEN", "FORECAST_LLM_URL", "FORECAST_ADDR"):
        env.pop(k, None)

    t0 = time.monotonic()
    _run(bin, ["demo", "load", "--small"], env)
    db = sqlite3.connect(work / "f.db")
    with db:
        db.execute(SMALL_UNIVERSE)
    active = db.execute(
        "SELECT COUNT(*) FROM assets a JOIN daily_prices p ON p.asset_id = a.id"
        " WHERE a.is_active AND p.row_count >= 300"
    ).fetchone()[0]
    db.close()
    _run(bin, ["grade"], env)
    for email in (PREMIUM, THROTTLED):
        _run(bin, ["user", "add", "--email", email, "--tier", "premium", "--password-stdin"], env, PASSWORD + "\n")
    _run(bin, ["user", "set-limits", "--email", PREMIUM, "--per-minute", "100000", "--per-day", "1000000"], env)
    _run(bin, ["user", "set-limits", "--email", THROTTLED, "--per-minute", str(THROTTLED_PER_MINUTE)], env)
    key, throttled_key = _key(bin, env, PREMIUM), _key(bin, env, THROTTLED)
    setup_s = time.monotonic() - t0

    serve_env = {**env, "FORECAST_ADDR": "127.0.0.1:0"}
    proc = subprocess.Popen(
        [bin, "serve"], env=serve_env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    log: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.append(line)
            del log[:-2000]
            m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if m and not found:
                found.append(m.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(60) or not found:
        proc.kill()
        pytest.fail("forecast serve did not start:\n" + "".join(log), pytrace=False)
    print(f"\nserver {found[0]}: setup {setup_s:.1f} s, {active} active assets graded")
    s = Server(
        base=found[0], key=key, throttled_key=throttled_key, env=env, bin=bin, active_assets=active,
        throttled_per_minute=THROTTLED_PER_MINUTE, log=log
    )
    try:
        yield s
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture()
def client(server):
    from forecast_client import Client

    with Client(server.base, server.key) as c:
        yield c


@pytest.fixture()
def raw(server):
    """Plain HTTP with the same key: the server's own answer, to compare
    the client's models and frames with."""
    import httpx

    with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.key}"}, timeout=120) as h:
        yield h
