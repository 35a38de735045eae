// /methodology: how the figures behind a grade and the track record are
// computed, and what they cannot tell you. Plain prose that follows the
// engine (docs/DESIGN.md §4, crates/engine/src/evidence.rs), the scorer
// (components/scorer) and the track record's server code. No data call.
import { useEffect } from "preact/hooks";
import { useTitle } from "../lib";

const SECTIONS: { id: string; title: string }[] = [
  { id: "buckets", title: "Drawdown buckets" },
  { id: "evidence", title: "Days and episodes" },
  { id: "quantiles", title: "Quantiles of the outcomes" },
  { id: "interval", title: "The 90 % interval of the median" },
  { id: "fell-further", title: "Fell further" },
  { id: "recovery", title: "Recovery" },
  { id: "thin", title: "Thin evidence" },
  { id: "grade", title: "What a grade is" },
  { id: "forecast", title: "The calibrated forecast" },
  { id: "track-record", title: "The track record" },
  { id: "backtest-metrics", title: "A backtest's metrics" },
  { id: "monte-carlo", title: "A backtest's Monte Carlo" },
  { id: "limits", title: "What this cannot tell you" },
];

export function MethodologyPage() {
  useTitle("Methodology");
  // Opened at /methodology#section from elsewhere: show that section.
  useEffect(() => {
    const id = location.hash ? decodeURIComponent(location.hash.slice(1)) : "";
    const el = id ? document.getElementById(id) : null;
    el?.scrollIntoView({ block: "start" });
  }, []);
  const h2 = (id: string) => (
    <h2 id={id} tabIndex={-1}>
      {SECTIONS.find((s) => s.id === id)!.title}
    </h2>
  );
  return (
    <main class="page narrow methodology">
      <h1>Methodology</h1>
      <p class="lead">
        How the figures behind a grade are computed, how much evidence stands behind them, how past grades are checked against
        what followed, and what none of this can tell you. The <a href="/glossary">glossary</a> defines each figure in short.
      </p>
      <nav aria-label="Methodology contents" class="card toc">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`}>{s.title}</a>
            </li>
          ))}
        </ul>
      </nav>

      <section class="card" aria-labelledby="buckets">
        {h2("buckets")}
        <p>
          Every day of an asset's history has a <strong>drawdown</strong>: how far its close is below the highest close before
          it (0 at a new high, −0.25 a quarter below it). The analysis sorts days by drawdown into <strong>buckets</strong> of
          equal width. The grid is the one of the last day of the window: its floor is the deepest drawdown seen up to that day,
          rounded down to a multiple of 5 %, split into the number of segments asked for (20 by default). Bucket 0 is the
          shallowest. Every past day is placed on this same grid, so all the figures of a bucket describe the same range of
          drawdowns.
        </p>
        <p>
          A day's <strong>outcome</strong> is what followed it over the horizon (the <code>return_period</code>, in calendar
          days): the simple return from its close to the close of the first day at least that many days later, or the Sharpe or
          Sortino ratio of the daily returns in between. An outcome is <em>confirmed</em> once that later day exists. A bucket's
          figures are statistics of its days' confirmed outcomes.
        </p>
      </section>

      <section class="card" aria-labelledby="evidence">
        {h2("evidence")}
        <p>
          A bucket's <strong>days</strong> (its <code>count</code>) overlap. With a 90-day horizon, the outcomes of two
          neighbouring days share 89 of their 90 days: a single fall into the bucket that lasted three months contributes some 60
          trading days whose outcomes are nearly the same number. Counting days overstates the evidence.
        </p>
        <p>
          An <strong>episode</strong> is one independent visit to the bucket: a run of the bucket's days in which consecutive
          days lie less than the horizon apart. Two days in the bucket further apart than the horizon start separate episodes.
          Only visits whose first day's horizon has passed are counted. Episodes do not overlap, so their number is the one to
          judge the evidence by: "45 independent episodes (2,523 days)" means 2,523 days, but only about 45 separate occasions.
        </p>
      </section>

      <section class="card" aria-labelledby="quantiles">
        {h2("quantiles")}
        <p>
          The box chart of the asset page draws, for each bucket, the 10th, 25th, 50th, 75th and 90th percentiles of all its
          confirmed outcomes (linear interpolation between the sorted values). The 50th percentile is the bucket's median over
          all outcomes (“Median, all outcomes”). The verdict's median return is different: the median of the bucket's last 252
          confirmed outcomes, which follows recent behaviour.
        </p>
      </section>

      <section class="card" aria-labelledby="interval">
        {h2("interval")}
        <p>
          How precisely is a bucket's median known? The interval is a <strong>bootstrap over episodes</strong>: draw as many
          episodes as the bucket has, at random with replacement, keep all the outcomes of the episodes drawn, and take their
          median; repeat 1,000 times. The 5th and 95th percentiles of those 1,000 medians are the <strong>90 % interval</strong>.
          Drawing whole episodes, not single days, keeps the days of one visit together, so the interval is as wide as the number
          of independent visits warrants. The random draws use a fixed seed: the same data always give the same interval. With
          fewer than two episodes there is no interval.
        </p>
      </section>

      <section class="card" aria-labelledby="fell-further">
        {h2("fell-further")}
        <p>
          The share of a bucket's episodes in which the drawdown went below the bucket's lower bound — into a deeper bucket —
          between entering the bucket and the end of the horizon. A bucket with a good median outcome and a high share that fell
          further was often a stop on the way down before it was a floor.
        </p>
      </section>

      <section class="card" aria-labelledby="recovery">
        {h2("recovery")}
        <p>
          For each episode, the calendar days from its first day to the first close at or above the peak that preceded it. The
          page shows the median over the episodes that recovered, with how many recovered and how many had not by the last day of
          the data. The episodes that never recovered are left out of the median, so it describes the recoveries that happened;
          read it with the count of those that did not.
        </p>
      </section>

      <section class="card" aria-labelledby="thin">
        {h2("thin")}
        <p>
          The current bucket's evidence is marked <strong>thin</strong> when either holds:
        </p>
        <ul>
          <li>it has fewer than 10 episodes, or</li>
          <li>
            the 90 % interval of its median contains the asset's <em>unconditional</em> median outcome, the median of all its
            confirmed outcomes whatever the drawdown. The bucket's median then cannot be told apart from the asset's usual
            outcome: being in this bucket may mean nothing.
          </li>
        </ul>
        <p>
          The asset page then says "Thin evidence" with each reason. This is separate from "insufficient data" (fewer than 20
          confirmed outcomes, counted in days), which caps the score at 50.
        </p>
      </section>

      <section class="card" aria-labelledby="grade">
        {h2("grade")}
        <p>
          A <strong>grade</strong> is the scorer's reading of the engine's current state for one asset, one horizon and one
          metric: a <strong>score</strong> from 0 to 100 and its letter. The scorer is a plugin, and its version is shown
          wherever grades are (the ranking, the watchlist and the alerts state the active one's record in one line).
        </p>
        <ul>
          <li>
            <strong>Scorer 2.0.0</strong> grades the <a href="#forecast">calibrated forecast</a>: the score is 100 × the
            probability that the expected return beats the reference outcome (the pooled mean of assets with the same kind of
            prices), given the forecast's standard error. A above 80, B from 60, C from 40, D from 20, F below. Thin evidence
            holds the score between 20 and 80, so it can never earn an A or an F. Every metric at a horizon gets that
            horizon's forecast's grade.
          </li>
          <li>
            <strong>Scorer 1.0.0</strong> (the earlier one, without forecasts) turns the current bucket's median outcome, the
            typical error of past predictions and the bucket's win rate into the score (see{" "}
            <a href="/glossary#score">score</a>): A from 80, B from 65, C from 50, D from 35, F below.
          </li>
        </ul>
        <p>A grade summarises what followed drawdowns like the current one. It is not advice.</p>
      </section>

      <section class="card" aria-labelledby="forecast">
        {h2("forecast")}
        <p>
          Where the server provides it, the verdict leads with a <strong>forecast of the return over the horizon</strong>: a
          central estimate (a mean) and the 10th and 90th percentiles of the outcome, so that 80 % of outcomes are expected
          between the two. It is <strong>calibrated out of sample</strong>: every parameter is fitted on data known before the
          date it is used at. The asset's own mean past forward return is pulled toward the pooled history of every asset
          with the same kind of prices (real and ingested prices together, synthetic ones apart) by as much as that history
          supports, using only outcomes known before the month began; the current bucket then moves it only as far as the
          asset's own earlier points show that buckets mattered, weighted by the bucket's independent episodes. The 80 %
          range is the asset's own spread of past outcomes moved to the central estimate: it does not widen for a regime the
          asset has not lived through. With too little pooled history the forecast is the asset's own distribution of past
          forward returns, and the card says so ("the asset's own history only"). "Thin evidence" marks a forecast whose
          evidence was too thin for the extreme grades (fewer than 10 independent episodes in the bucket, an 80 % interval
          of the central estimate that contains the reference outcome, or the asset's own history only).
        </p>
        <p>
          The bucket's median return stays on the card, labelled as the bucket's history: it is what followed past drawdowns
          like the current one, a raw statistic that has not been checked against what it would have predicted. A server
          without forecasts shows that median alone, labelled as such. Whether higher grades have in fact been followed by
          higher returns is what the <a href="#track-record">track record</a> measures; the ranking, the watchlist and the
          alerts state its IC in one line.
        </p>
      </section>

      <section class="card" aria-labelledby="track-record">
        {h2("track-record")}
        <p>
          The track record checks grades against what followed. For every month-end (the month's last trading day) with at
          least 300 rows of history before it, the engine and the scorer grade the asset <strong>from the data up to that date
          only</strong>, as they would have then. Beside each grade stands the <strong>realised return</strong>: the close of
          the first day at least one horizon later over the month-end's close, minus 1 (empty while that day has not come).
        </p>
        <p>From these rows, for one asset (its page's "Grade history") or for the whole catalog (the track-record page):</p>
        <ul>
          <li>
            <strong>Outcomes per grade</strong>: how many month-ends got each letter, the mean and median realised return, and
            the hit rate (the share above 0). Across the catalog also the mean excess return: the realised return minus the
            equal-weight mean realised return of every covered asset at the same month-end.
          </li>
          <li>
            <strong>IC</strong> (information coefficient): at each month-end, the Spearman rank correlation between the assets'
            scores and their realised returns (month-ends with at least 5 assets); then the mean over month-ends. 0 means the ranking by score said nothing about
            the ranking of outcomes; 1 would be a perfect ordering.
          </li>
          <li>
            <strong>Quintile spread</strong>: at each month-end, the mean realised return of the fifth of assets with the highest
            scores minus that of the fifth with the lowest (month-ends with at least 5 assets); then the mean over month-ends.
          </li>
          <li>
            <strong>Calibration</strong>: the (asset, month-end) pairs split into ten groups by their predicted median return
            (deciles); in each group the mean predicted against the mean realised return. Points on the diagonal would mean the predictions were right on average.
          </li>
        </ul>
        <p>
          The intervals of these means are 90 % intervals by a <strong>moving-block bootstrap over month-ends</strong>: blocks of
          consecutive month-ends are drawn with replacement, because with a horizon longer than a month the windows of
          neighbouring month-ends overlap and their outcomes are correlated; resampling single month-ends would make the
          intervals too narrow. A block is as long as the horizon's overlap plus one month-end (shown with the results); the
          random draws use a fixed seed.
        </p>
      </section>

      <section class="card" aria-labelledby="backtest-metrics">
        {h2("backtest-metrics")}
        <p>
          Every figure of a backtest comes from the daily simple returns of its equity curve (the day's close over the previous
          one, minus 1), with 252 returns a year, or 365 when the calendar has weekends (coins), and the sample standard deviation.
        </p>
        <ul>
          <li><strong>Calmar ratio</strong>: the CAGR over the size of the maximum drawdown.</li>
          <li><strong>Ulcer index</strong>: the root mean square of the daily drawdowns from the running peak; deep and long falls weigh most.</li>
          <li><strong>Longest drawdown</strong>: calendar days from the first close under a peak to the last; its recovery, from its lowest close to the close back at the peak.</li>
          <li><strong>95 % VaR</strong>: the daily return a normal distribution with the curve's mean and deviation falls below one day in twenty; <strong>CVaR</strong>: the mean of that same normal distribution below it (the two come from one estimate).</li>
          <li><strong>Exposure</strong>: the share of days that began with money invested. <strong>Turnover</strong>: the value of all fills, halved, over the mean equity, per year (replacing the whole portfolio once a year is 1).</li>
          <li><strong>Best and worst month, winning months</strong>: calendar months' compounded returns; winning months count those above 0 among those not flat.</li>
          <li><strong>Beta</strong> against a benchmark: the covariance of the two daily returns over the benchmark's variance. <strong>Alpha</strong>: the mean daily return beta does not explain, times the returns in a year. <strong>Tracking error</strong>: the deviation of the daily difference, annualised; the <strong>information ratio</strong> is the mean difference over it, annualised.</li>
        </ul>
        <p>Where quantstats has the same figure, the formula is its formula; the information ratio is annualised here, not there.</p>
      </section>

      <section class="card" aria-labelledby="monte-carlo">
        {h2("monte-carlo")}
        <p>
          The backtest's Monte Carlo tab draws new paths from the run's own daily returns by a <strong>stationary block
          bootstrap</strong> (Politis and Romano): each path is as long as the run, starts on a random day of its returns and
          walks forward (from the last day back to the first), and before each next day jumps to another random day with
          probability 1 / the block length (20 days by default, 1 to 250). Blocks therefore have random lengths averaging the
          block length, keep the short-range dependence of the returns (calm and turbulent stretches), and are drawn{" "}
          <strong>with replacement</strong>: a path is a new sequence in which some of the run's days appear several times and
          others not at all — not a reordering of the same returns. The same request and seed give the same figures.
        </p>
        <p>
          It can tell how much of the result depended on the luck of the sequence: how wide the CAGR, the deepest drawdown
          and the final equity could have been with the same kind of days in another order and mix. It cannot tell how the
          strategy would do in markets unlike the window's: every path is built from this run's own days, with its costs and
          its choices, so a window that flattered the strategy flatters every path too.
        </p>
      </section>

      <section class="card" aria-labelledby="limits">
        {h2("limits")}
        <ul>
          <li>
            <strong>The past is not the future.</strong> Every figure describes what followed past drawdowns. Markets change; a
            bucket that recovered well for decades need not again.
          </li>
          <li>
            <strong>Survivorship.</strong> The catalog holds assets that exist today. Those that fell and were delisted are not
            in it, so the track record over the catalog flatters deep drawdowns.
          </li>
          <li>
            <strong>Synthetic histories are not markets.</strong> Most demo prices are generated (with regimes of decline and
            recovery, bursts of volatility and jumps). Whatever a grade finds in them is a property of the generator, not of any
            market, so grades and track records on synthetic data say nothing about real assets; the pages say so where it
            applies.
          </li>
          <li>
            <strong>Which prices.</strong> The track-record page covers real prices (shipped and ingested) by default; synthetic
            ones can be chosen to see how the grades behave on the generator's prices.
          </li>
          <li>
            <strong>Overlapping windows.</strong> With a horizon over a month, consecutive month-ends share most of their outcome.
            The counts per grade are counts of month-ends, not of independent observations.
          </li>
          <li>
            <strong>One asset's history is short.</strong> A few decades hold a few dozen independent drawdowns at most; a
            bucket's episodes are fewer still. One asset's grade history cannot establish that its grades work.
          </li>
          <li>
            <strong>Intervals are about sampling only.</strong> A 90 % interval says how much the figure would move with other
            draws of the same history. It says nothing about the model being wrong, or about the next ten years.
          </li>
        </ul>
      </section>
    </main>
  );
}
