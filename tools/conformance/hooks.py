"""Schemathesis hooks of `make conformance`: the server's rules that JSON
Schema cannot state, taught to the generator for *positive* cases.

Every rule here is also written in the description of its operation in the
OpenAPI document. Negative cases are left alone (they must be refused), and
so are values the schema already constrains: a hook only maps a
schema-valid request onto a schema-valid request the server can serve.

The rules depend on data (which assets exist, their histories, which
strategies are loaded), so the hooks read them from the server under test
once, with the same Bearer key the run uses:

* analysis, verdict and backtest: `start_date` on or before `end_date`
  (and the analysis's `draw_from` on or before `draw_to`);
* analysis and verdict: an asset with at least 300 price rows, and 300 of
  them inside the window (else 422);
* watchlist: `tickers` known active assets;
* backtest and its Monte Carlo: `tickers` and `benchmarks` known active assets; `strategy` one of
  `GET /api/strategies`; the window must contain a tradeable asset (300
  rows of history by `end_date` and a price inside the window) and
  `top_n` be at most the number of such assets (half of it for
  `longshort`, which holds top_n long and top_n short).

* alerts: each condition takes exactly its own parameter (`level` for
  `drawdown_*` in [-1, 0] and `median_return_*` in [-1, 10], `bucket` for
  `bucket_entered`/`bucket_left`, `top_n` and optionally `category` for
  `top_n_*`); a target is a ticker or `watchlist: true`, not both; a
  change of an existing alert keeps its condition (the hook cannot know
  it) and changes only what applies to every condition;
* ranking: each screener range's `min_` at most its `max_`, and
  `grades` a comma list of at most ten letters of one or two characters;
* marking events read: `ids` or `all: true`, exactly one;
* webhooks: a URL the server may call (the run allows private targets,
  `FORECAST_WEBHOOK_ALLOW_PRIVATE=on`; nothing listens at the one used, so
  test calls fail and are logged).

One hook widens coverage instead: half of the positive key revocations
name one of the session user's keys, so the success path is exercised
as well as the documented 404 of an unknown id.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import os
import re
import threading
import urllib.parse

import requests
import schemathesis

BASE = os.environ["FORECAST_CONFORMANCE_BASE"]
KEY = os.environ["FORECAST_CONFORMANCE_KEY"]
# The backtest's universe filter (forecast-backtest's MIN_HISTORY) and its
# default window (DEFAULT_YEARS before the end).
MIN_HISTORY = 300
DEFAULT_YEARS = 10
DEFAULT_TOP_N = 10
DEFAULT_STRATEGY = "topn"


def _ticker(case) -> str | None:
    """The path's ticker as the server reads it (generated values arrive URL-encoded)."""
    raw = (case.path_parameters or {}).get("ticker")
    return urllib.parse.unquote(raw) if isinstance(raw, str) else None


def _positive(case) -> bool:
    meta = case.meta
    return meta is None or meta.generation.mode.is_positive


def _pick(value: object, choices: list[str]) -> str:
    """A stable choice for `value`: the same input maps to the same name."""
    digest = hashlib.sha256(repr(value).encode()).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


def _date(raw: object) -> dt.date | None:
    if not isinstance(raw, str):
        return None
    try:
        return dt.date.fromisoformat(raw.strip())
    except ValueError:
        return None


class _Universe:
    """What the server has: active assets with their dates, loaded strategies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded = False
        self.strategies: list[str] = []
        self.tickers: list[str] = []
        self.category: dict[str, str] = {}
        # Ordinal day numbers of each active asset's rows, ascending.
        self.dates: dict[str, list[int]] = {}

    def load(self) -> "_Universe":
        with self._lock:
            if self._loaded:
                return self
            s = requests.Session()
            s.headers["Authorization"] = f"Bearer {KEY}"
            strategies = s.get(f"{BASE}/api/strategies", timeout=60).json()["strategies"]
            # `portfolio` runs only with `weights`, which these cases leave
            # out (tests/it/portfolio.rs covers them).
            self.strategies = sorted(x["name"] for x in strategies if x["name"] != "portfolio")
            assets = s.get(f"{BASE}/api/assets", timeout=60).json()["assets"]
            for a in assets:
                if not a["is_active"]:
                    continue
                self.tickers.append(a["ticker"])
                self.category[a["ticker"]] = a["category"]
                r = s.get(f"{BASE}/api/analysis/{urllib.parse.quote(a['ticker'], safe='')}", timeout=120)
                # An asset the engine refuses (too short a history) never trades.
                if r.status_code == 200:
                    days = [dt.date.fromisoformat(d).toordinal() for d in r.json()["time_series"]["dates"]]
                    self.dates[a["ticker"]] = days
            self.tickers.sort()
            self._loaded = True
            return self

    def members(self, body: dict) -> list[str]:
        """The request's universe, as the server resolves it."""
        tickers = body.get("tickers")
        if tickers is not None:
            return list(tickers)
        category = body.get("category")
        if category is not None:
            return [t for t in self.tickers if self.category[t] == category]
        return list(self.tickers)

    def window(self, members: list[str], start: dt.date | None, end: dt.date | None) -> tuple[int, int] | None:
        """The window the server would use (ordinal days), or None without data."""
        last = [self.dates[t][-1] for t in members if t in self.dates]
        if not last:
            return None
        e = end.toordinal() if end else max(last)
        if start:
            s = start.toordinal()
        else:
            end_date = dt.date.fromordinal(e)
            try:
                s = end_date.replace(year=end_date.year - DEFAULT_YEARS).toordinal()
            except ValueError:  # 29 February, or before year 1
                s = e if end_date.year <= DEFAULT_YEARS else end_date.replace(day=28, year=end_date.year - DEFAULT_YEARS).toordinal()
        return s, e

    def tradeable(self, members: list[str], s: int, e: int) -> int:
        n = 0
        for t in members:
            days = self.dates.get(t)
            if not days or len(days) < MIN_HISTORY:
                continue
            by_end = bisect.bisect_right(days, e)
            before = bisect.bisect_left(days, s)
            if by_end >= MIN_HISTORY and by_end > before:
                n += 1
        return n


UNIVERSE = _Universe()


def _order_dates(container: dict, first: str = "start_date", last: str = "end_date") -> None:
    """`first` on or before `last` when both are given."""
    start, end = _date(container.get(first)), _date(container.get(last))
    if start and end and start > end:
        container[first], container[last] = container[last], container[first]


# The web application's twins of the data routes (`/web/api/…`, same
# handlers behind the session cookie) follow the same rules.
ANALYSIS = r"^(/web)?/api/analysis/\{ticker\}"
BACKTEST = r"^(/web)?/api/backtest(/monte-carlo)?$"
RESEARCH = r"^(/web)?/api/backtest/(sweep|walk-forward)$"
# Combinations a generated sweep keeps: enough to exercise the grid, few
# enough that a few hundred cases stay within the run's minutes.
RESEARCH_COMBINATIONS = 4


@schemathesis.hook("filter_case").apply_to(path_regex=ANALYSIS)
def analysis_needs_300_rows(ctx, case):
    """An active asset with fewer than 300 rows has no valid analysis at all."""
    if not _positive(case):
        return True
    u = UNIVERSE.load()
    ticker = _ticker(case)
    return not (ticker in u.tickers and len(u.dates.get(ticker, [])) < MIN_HISTORY)


@schemathesis.hook("map_case").apply_to(path_regex=ANALYSIS)
def analysis_window(ctx, case):
    """`start_date` on or before `end_date`, and 300 rows of the asset between them."""
    if not _positive(case) or not isinstance(case.query, dict):
        return case
    query = case.query
    _order_dates(query)
    _order_dates(query, "draw_from", "draw_to")
    days = UNIVERSE.load().dates.get(_ticker(case))
    if not days:
        return case
    start, end = _date(query.get("start_date")), _date(query.get("end_date"))
    hi = bisect.bisect_right(days, end.toordinal()) if end else len(days)
    if hi < MIN_HISTORY:
        hi = MIN_HISTORY
        query["end_date"] = dt.date.fromordinal(days[hi - 1]).isoformat()
    lo = bisect.bisect_left(days, start.toordinal()) if start else 0
    if hi - lo < MIN_HISTORY:
        query["start_date"] = dt.date.fromordinal(days[hi - MIN_HISTORY]).isoformat()
    return case


RANKING = r"^/(web/)?api/ranking$"
SCREEN_RANGES = ("score", "current_drawdown", "median_return", "expected_return", "win_rate")
GRADE_LETTERS = ("A", "B", "C", "D", "F")


@schemathesis.hook("map_case").apply_to(path_regex=RANKING)
def ranking_screen(ctx, case):
    """Each range's bounds in order; `grades` a list of letters the server takes."""
    if not _positive(case) or not isinstance(case.query, dict):
        return case
    q = case.query
    for name in SCREEN_RANGES:
        lo, hi = q.get(f"min_{name}"), q.get(f"max_{name}")
        try:
            if lo is not None and hi is not None and float(lo) > float(hi):
                q[f"min_{name}"], q[f"max_{name}"] = hi, lo
        except (TypeError, ValueError):
            pass
    if "grades" in q:
        n = len(str(q["grades"])) % len(GRADE_LETTERS) + 1
        q["grades"] = ",".join(GRADE_LETTERS[:n])
    return case


@schemathesis.hook("map_case").apply_to(path_regex=BACKTEST, method="POST")
def backtest_runtime_rules(ctx, case):
    body = case.body
    if not _positive(case) or not isinstance(body, dict):
        return case
    u = UNIVERSE.load()

    # Weights need a strategy that takes them, weighted assets with 300 rows
    # by the end and a sum of at most 1 across keys: rules the schema cannot
    # state, tested in tests/it/portfolio.rs; these cases go without them.
    body.pop("weights", None)
    strategy = body.get("strategy")
    if strategy is not None and strategy not in u.strategies:
        body["strategy"] = _pick(strategy, u.strategies)

    tickers = body.get("tickers")
    if tickers is not None:
        # Distinct known active tickers, one for each generated symbol
        # (as many as there are active assets at most).
        free = list(u.tickers)
        mapped = []
        for t in tickers[: len(free)]:
            choice = t if t in free else _pick(t, free)
            free.remove(choice)
            mapped.append(choice)
        body["tickers"] = mapped

    benchmarks = body.get("benchmarks")
    if benchmarks is not None:
        # Known active tickers, each once, as the universe's.
        free = list(u.tickers)
        mapped = []
        for t in benchmarks[: len(free)]:
            choice = t if t in free else _pick(t, free)
            free.remove(choice)
            mapped.append(choice)
        body["benchmarks"] = mapped

    _order_dates(body)
    members = u.members(body)
    start, end = _date(body.get("start_date")), _date(body.get("end_date"))
    win = u.window(members, start, end)
    if win is not None and u.tradeable(members, *win) == 0:
        # Move the window onto the data: its end between the first date
        # at which an asset of the universe has 300 rows and the latest
        # date, and its start no later than that first date.
        ready = sorted(u.dates[t][MIN_HISTORY - 1] for t in members if len(u.dates.get(t, [])) >= MIN_HISTORY)
        latest = max(u.dates[t][-1] for t in members if t in u.dates)
        if ready:
            s, e = win
            e = min(max(e, ready[0]), latest)
            s = min(s, ready[0])
            body["end_date"] = dt.date.fromordinal(e).isoformat()
            body["start_date"] = dt.date.fromordinal(s).isoformat()
            win = (s, e)

    # Absent or null, top_n is its default.
    top_n = body.get("top_n")
    top_n = DEFAULT_TOP_N if top_n is None else int(top_n)
    if win is not None:
        n = u.tradeable(members, *win)
        # longshort holds top_n long and top_n short: 2·top_n assets.
        if body.get("strategy") == "longshort":
            if n < 2:
                body["strategy"] = DEFAULT_STRATEGY
            else:
                n //= 2
        if n and top_n > n:
            body["top_n"] = 1 + (top_n - 1) % n
    return case


@schemathesis.hook("map_case").apply_to(path_regex=RESEARCH, method="POST")
def research_runtime_rules(ctx, case):
    """A sweep or walk-forward is a backtest per combination: the backtest's
    rules, a swept parameter left out of the base, at most
    RESEARCH_COMBINATIONS combinations, every swept `top_n` within the
    tradeable assets (distinct after mapping), and for a walk-forward a
    window with room for a split (the default window, short splits)."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict):
        return case
    sweep = body.get("sweep")
    if not isinstance(sweep, dict):
        return case
    walk_forward = case.operation.path.endswith("/walk-forward")
    for name in sweep:
        body.pop(name, None)
    room = RESEARCH_COMBINATIONS
    for name in list(sweep):
        values = sweep[name]
        keep = max(1, min(len(values), room))
        sweep[name] = values[:keep]
        room = max(1, room // keep)
    if walk_forward:
        body.pop("start_date", None)
        body.pop("end_date", None)
        body["train_years"] = 1 + (int(body.get("train_years") or 3) - 1) % 3
        body["test_years"] = 1 + (int(body.get("test_years") or 1) - 1) % 2
    backtest_runtime_rules(ctx, case)
    for name in sweep:
        # The backtest's rule may have set a default it fits (top_n).
        body.pop(name, None)
    u = UNIVERSE.load()
    members = u.members(body)
    win = u.window(members, _date(body.get("start_date")), _date(body.get("end_date")))
    if walk_forward and win is not None:
        firsts = [d for t in members for d in u.dates.get(t, [])[:1]]
        first = max(win[0], min(firsts)) if firsts else win[0]
        if win[1] - first < 366 * (body["train_years"] + 1):
            # Too little data in the window for a split: the whole universe.
            for k in ("tickers", "category", "start_date", "end_date"):
                body.pop(k, None)
            members = u.members(body)
            win = u.window(members, None, None)
    if "top_n" in sweep and win is not None:
        n = u.tradeable(members, *win)
        if body.get("strategy") == "longshort":
            n //= 2
        if n:
            mapped = []
            for v in sweep["top_n"]:
                v = 1 + (int(v) - 1) % n
                if v not in mapped:
                    mapped.append(v)
            sweep["top_n"] = mapped
    return case


@schemathesis.hook("map_case").apply_to(path="/web/watchlist", method="PUT")
def watchlist_of_active_assets(ctx, case):
    """A watchlist names active assets only (else 400, refused whole): each
    generated ticker becomes one of them, the same input the same asset."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict) or not isinstance(body.get("tickers"), list):
        return case
    active = sorted(UNIVERSE.load().tickers)
    body["tickers"] = [t if t in active else _pick(t, active) for t in body["tickers"]]
    return case


@schemathesis.hook("map_case").apply_to(path="/api/keys", method="DELETE")
def revoke_existing_key(ctx, case):
    """Half of the positive revocations name one of the session user's
    active keys (those the fuzzing of POST /api/keys made), so the success
    path is exercised too; the other half keep their generated id (404)."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict) or not isinstance(body.get("id"), str):
        return case
    if hashlib.sha256(body["id"].encode()).digest()[0] % 2:
        return case
    keys = requests.get(
        f"{BASE}/api/keys",
        cookies={"fe_session": os.environ["FORECAST_CONFORMANCE_SESSION"]},
        timeout=60,
    ).json()
    if keys:
        body["id"] = keys[0]["id"]
    return case


ALERTS = r"^(/web)?/api/alerts$"
ALERT = r"^(/web)?/api/alerts/\{id\}$"
MARK_READ = r"^(/web)?/api/alerts/events/read$"
WEBHOOKS = r"^(/web)?/api/alerts/webhooks$"
# The one parameter each condition takes (None: none) and a level's bounds.
ALERT_PARAMETER = {
    "grade_changed": None,
    "bucket_changed": None,
    "bucket_entered": "bucket",
    "bucket_left": "bucket",
    "drawdown_below": "level",
    "drawdown_above": "level",
    "median_return_above": "level",
    "median_return_below": "level",
    "top_n_entered": "top_n",
    "top_n_left": "top_n",
}
LEVELS = {"drawdown": (-1.0, 0.0), "median_return": (-1.0, 10.0)}
GRADED_PERIODS = (7, 30, 90, 180, 365)
# A loopback port run.sh found free (bound at port 0, then released).
WEBHOOK_URL = os.environ["FORECAST_CONFORMANCE_WEBHOOK_URL"]


def _number_in(value: object, lo: float, hi: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi


@schemathesis.hook("map_case").apply_to(path_regex=ALERTS, method="POST")
def alert_parameters(ctx, case):
    """Only the condition's own parameter, in its bounds; one target."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict):
        return case
    condition = body.get("condition")
    needed = ALERT_PARAMETER.get(condition) if isinstance(condition, str) else None
    for name in ("level", "bucket", "top_n"):
        if name != needed:
            body.pop(name, None)
    if needed == "level":
        lo, hi = LEVELS["drawdown" if condition.startswith("drawdown") else "median_return"]
        if not _number_in(body.get("level"), lo, hi):
            body["level"] = (lo + hi) / 2 if hi <= 0 else 0.05
    elif needed == "bucket" and not _number_in(body.get("bucket"), 0, 19):
        body["bucket"] = 3
    elif needed == "top_n" and not _number_in(body.get("top_n"), 1, 100):
        body["top_n"] = 10
    if needed != "top_n":
        body.pop("category", None)
    if body.get("return_period") is not None and body.get("return_period") not in GRADED_PERIODS:
        body["return_period"] = _pick(body["return_period"], [str(p) for p in GRADED_PERIODS])
        body["return_period"] = int(body["return_period"])
    ticker = body.get("ticker")
    if isinstance(ticker, str) and body.get("watchlist") is True:
        body.pop("watchlist")
    if isinstance(ticker, str):
        active = sorted(UNIVERSE.load().tickers)
        if ticker.strip() not in active:
            body["ticker"] = _pick(ticker, active)
    elif body.get("watchlist") is not True:
        body.pop("ticker", None)
        body["watchlist"] = True
    return case


@schemathesis.hook("map_case").apply_to(path_regex=ALERT, method="PATCH")
def alert_change_keeps_its_condition(ctx, case):
    """A change of an alert whose condition the hook cannot know: only what
    applies to every condition (horizon, metric, e-mail, switch)."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict):
        return case
    for name in ("condition", "level", "bucket", "top_n", "category"):
        body.pop(name, None)
    return case


@schemathesis.hook("map_case").apply_to(path_regex=MARK_READ, method="POST")
def mark_ids_or_all(ctx, case):
    """`ids` or `all: true`, exactly one."""
    body = case.body
    if not _positive(case) or not isinstance(body, dict):
        return case
    if isinstance(body.get("ids"), list):
        body.pop("all", None)
    else:
        body.pop("ids", None)
        body["all"] = True
    return case


@schemathesis.hook("map_case").apply_to(path_regex=WEBHOOKS, method="POST")
def webhook_the_server_may_call(ctx, case):
    """A URL the server resolves and may call (private targets allowed)."""
    body = case.body
    if _positive(case) and isinstance(body, dict):
        body["url"] = WEBHOOK_URL
    return case


@schemathesis.hook
def before_add_examples(ctx, examples):
    """The same rules for the Examples phase, whose cases (the document's
    examples, completed by the generator) bypass `filter_case`/`map_case`."""
    op = ctx.operation
    if op is None:
        return
    kept = []
    for case in examples:
        if op.method.upper() == "POST" and re.match(BACKTEST, op.path):
            case = backtest_runtime_rules(ctx, case)
        elif op.method.upper() == "POST" and re.match(RESEARCH, op.path):
            case = research_runtime_rules(ctx, case)
        elif op.method.upper() == "PUT" and op.path == "/web/watchlist":
            case = watchlist_of_active_assets(ctx, case)
        elif op.method.upper() == "POST" and re.match(ALERTS, op.path):
            case = alert_parameters(ctx, case)
        elif op.method.upper() == "PATCH" and re.match(ALERT, op.path):
            case = alert_change_keeps_its_condition(ctx, case)
        elif op.method.upper() == "POST" and re.match(MARK_READ, op.path):
            case = mark_ids_or_all(ctx, case)
        elif op.method.upper() == "POST" and re.match(WEBHOOKS, op.path):
            case = webhook_the_server_may_call(ctx, case)
        elif re.match(ANALYSIS, op.path):
            if not analysis_needs_300_rows(ctx, case):
                continue
            case = analysis_window(ctx, case)
        kept.append(case)
    examples[:] = kept
