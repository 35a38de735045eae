"""A backtest of a built Python strategy component through the real server.

The Python twin of the Rust SDK's `forecast_sdk::harness`: where the Rust
harness links the server's engine and accounting natively, this one uploads
the component as `forecast-plugin publish` would (`POST /api/strategies`: the
server's own type check, self-test, fuel, memory cap and deadline apply) and
backtests the version it stored with `POST /api/backtest`. The answer is the
server's, to the bit. The server is either

* a running one, when `FORECAST_URL` and `FORECAST_API_KEY` are set (the
  server you publish to; no Rust build needed): the upload is yours there, a
  private version of your strategy, as `publish` would store it; or
* the `forecast` binary (`FORECAST_BIN`, else target/release/forecast),
  started on a private copy of the demo universe (its real histories ship in
  data/prices/, data/PROVENANCE.md) and stopped afterwards.

    with Harness() as h:
        name = h.upload("build/my_strategy.wasm")   # "@handle/name@version"
        report = h.backtest({"strategy": name, "tickers": REAL_TICKERS, "top_n": 3})

Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[3]

# Assets of the demo universe whose histories are real (data/prices/,
# data/PROVENANCE.md): US stocks and ETFs with long daily histories.
REAL_TICKERS: List[str] = [
    "AAPL", "AMZN", "BA", "CAT", "CVX", "DIS", "GE", "HD", "IBM", "INTC",
    "JNJ", "JPM", "KO", "MCD", "MMM", "MRK", "MSFT", "PEP", "PFE", "PG",
    "WMT", "XOM", "SPY", "DIA", "TLT", "XLE", "XLF", "XLK",
]

# The metrics `summary` shows.
_SUMMARY = ("total_return", "cagr", "sharpe_ratio", "max_drawdown")

_EMAIL = "harness@forecast.local"
_PASSWORD = "harness-password-1234"


class HarnessError(Exception):
    """The server refused or failed something; `status` and `body` say what."""

    def __init__(self, what: str, status: int, body: Any) -> None:
        super().__init__(f"{what}: {status} {json.dumps(body)[:2000]}")
        self.status = status
        self.body = body


def forecast_bin() -> Path:
    """`FORECAST_BIN`, else the repository's target/release/forecast."""
    path = Path(os.environ.get("FORECAST_BIN", ROOT / "target" / "release" / "forecast"))
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found. Either test on a running server (the one you publish to): "
            "set FORECAST_URL and FORECAST_API_KEY (a Premium key); or build the server "
            "with `cargo build --release --bin forecast` at the repository root "
            "(or set FORECAST_BIN)"
        )
    return path


def remote() -> Optional[Tuple[str, str]]:
    """`FORECAST_URL` and `FORECAST_API_KEY`, when both are set."""
    url = os.environ.get("FORECAST_URL", "").strip().rstrip("/")
    key = os.environ.get("FORECAST_API_KEY", "").strip()
    if url and not key:
        raise RuntimeError("FORECAST_URL is set but FORECAST_API_KEY is not: "
                           "a Premium API key of that server is needed to upload")
    return (url, key) if url else None


class Harness:
    """A running server (`FORECAST_URL`, `FORECAST_API_KEY`), else `forecast
    serve` on a free port over a fresh copy of the demo universe, with a
    Premium account whose quotas never bind."""

    def __init__(self, binary: Optional[Path] = None, env: Optional[Dict[str, str]] = None):
        self.remote = None if binary else remote()
        self.binary = None if self.remote else (binary or forecast_bin())
        self.extra_env = env or {}
        self.dir = Path(tempfile.mkdtemp(prefix="forecast-harness-"))
        self.process: Optional[subprocess.Popen] = None
        self.base = ""
        self.key = ""

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env["DATABASE_URL"] = f"sqlite://{self.dir / 'forecast.db'}"
        env["FORECAST_MODULE_CACHE"] = "off"
        # No background grading or alerts: they would only slow the run down.
        env["FORECAST_GRADING"] = "off"
        env["FORECAST_ALERTS"] = "off"
        env.setdefault("RUST_LOG", "error")
        env.update(self.extra_env)
        return env

    def _cli(self, args: List[str], stdin: str = "") -> str:
        out = subprocess.run(
            [str(self.binary), *args], input=stdin, capture_output=True, text=True,
            env=self._env(), check=False, cwd=ROOT,
        )
        if out.returncode != 0:
            raise RuntimeError(f"forecast {' '.join(args)} failed: {out.stderr[-2000:]}")
        return out.stdout

    def __enter__(self) -> "Harness":
        if self.remote:
            self.base, self.key = self.remote
            status, body = self.request("GET", "/api/health")
            if status != 200:
                raise HarnessError(f"GET {self.base}/api/health", status, body)
            return self
        self._cli(["demo", "load"])
        self._cli(["user", "add", "--email", _EMAIL, "--tier", "premium", "--password-stdin"],
                  _PASSWORD + "\n")
        self._cli(["user", "set-limits", "--email", _EMAIL, "--per-minute", "1000000",
                   "--per-day", "1000000"])
        self.key = self._cli(["key", "create", "--email", _EMAIL, "--name", "harness"]) \
            .strip().splitlines()[-1].strip()
        env = self._env()
        env["FORECAST_ADDR"] = "127.0.0.1:0"
        self.process = subprocess.Popen(
            [str(self.binary), "serve"], env=env, stdout=subprocess.PIPE, text=True,
            cwd=ROOT,  # where data/models and data/reference are
        )
        first = self.process.stdout.readline().strip()
        self.base = first.rsplit(" ", 1)[-1]
        if not self.base.startswith("http://"):
            self.close()
            raise RuntimeError(f"unexpected first line from forecast serve: {first!r}")
        # Keep draining stdout so the server never writes into a full pipe.
        self._drain = threading.Thread(target=self.process.stdout.read, daemon=True)
        self._drain.start()
        return self

    def close(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self._drain.join(timeout=5)  # EOF once the server has exited
            self.process.stdout.close()
            self.process = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def request(self, method: str, path: str, body: Optional[bytes] = None,
                content_type: str = "application/json") -> Tuple[int, Any]:
        """The server's status and JSON answer (None when not JSON)."""
        req = urllib.request.Request(self.base + path, data=body, method=method)
        req.add_header("Authorization", f"Bearer {self.key}")
        if body is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                status, text = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, None

    def upload(self, wasm: Path) -> str:
        """Publishes the component (private to the key's account) and returns
        the name of the version it stored (`@handle/name@version`). The same
        bytes again are stored once; other bytes under a stored version are a
        409: raise `VERSION` (a pre-release such as 0.1.1-dev.1 will do)."""
        status, body = self.request("POST", "/api/strategies", Path(wasm).read_bytes(),
                                    "application/wasm")
        if status == 409 and self.remote:
            raise HarnessError(
                f"upload of {wasm} to {self.base} (raise VERSION in your class, e.g. to a "
                "pre-release such as 0.1.1-dev.1, to test changed code there)", status, body)
        if status not in (200, 201):
            raise HarnessError(f"upload of {wasm}", status, body)
        return f"{body['strategy']}@{body['version']}"

    def backtest(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """`POST /api/backtest`; its 200 answer (else HarnessError)."""
        status, body = self.request("POST", "/api/backtest", json.dumps(request).encode())
        if status != 200:
            raise HarnessError("backtest", status, body)
        return body


def summary(report: Dict[str, Any]) -> str:
    """One line: total return, CAGR, Sharpe, worst drawdown, trades."""
    m = report["metrics"]
    return ", ".join(f"{k} {m.get(k)}" for k in _SUMMARY) + f", {len(report['trades'])} trades"
