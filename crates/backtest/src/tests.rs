//! The accounting's promises: the identity equity = cash + positions at
//! every point, costs recomputable from the trades, fills at the next row,
//! no look-ahead, the contract checks, and the calendar rules.

use super::*;

/// Deterministic xorshift64* so the tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Asset {
    meta: AssetMeta,
    bps: f64,
    dates: Vec<i32>,
    closes: Vec<f64>,
    signals: Signals,
}

impl Asset {
    fn new(ticker: &str, bps: f64, dates: Vec<i32>, closes: Vec<f64>) -> Self {
        let params = forecast_engine::Params {
            return_period: 30,
            ..Default::default()
        };
        let signals = forecast_engine::walk_forward(&dates, &closes, &params)
            .expect("enough rows")
            .into();
        Asset {
            meta: AssetMeta {
                ticker: ticker.into(),
                name: ticker.into(),
                category: "US Stocks".into(),
            },
            bps,
            dates,
            closes,
            signals,
        }
    }

    fn input(&self) -> AssetInput<'_> {
        AssetInput {
            meta: &self.meta,
            cost_bps: self.bps,
            dates: &self.dates,
            closes: &self.closes,
            signals: &self.signals,
        }
    }
}

fn weekdays_from(start: i32, n: usize) -> Vec<i32> {
    (start..).filter(|&d| !is_weekend(d)).take(n).collect()
}

fn walk(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut p = 50.0 + rng.unit() * 100.0;
    (0..n)
        .map(|_| {
            p *= 1.0 + (rng.unit() - 0.5) * 0.06;
            p
        })
        .collect()
}

/// A mixed universe: weekday stocks of different start dates, one asset
/// trading every day, one that stops trading half-way.
fn universe(seed: u64) -> Vec<Asset> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for (i, (start, n)) in [
        (10_000, 1_400),
        (10_050, 1_300),
        (10_300, 900),
        (10_200, 700),
    ]
    .into_iter()
    .enumerate()
    {
        let dates = weekdays_from(start, n);
        let closes = walk(&mut rng, n);
        out.push(Asset::new(&format!("S{i}"), 6.0, dates, closes));
    }
    let daily: Vec<i32> = (10_100..11_800).collect();
    let closes = walk(&mut rng, daily.len());
    out.push(Asset::new("C0", 15.0, daily, closes));
    out
}

fn inputs(assets: &[Asset]) -> Vec<AssetInput<'_>> {
    assets.iter().map(Asset::input).collect()
}

/// Random long/short weights over the tradeable assets, gross <= 1;
/// records every context it saw and every answer it gave.
struct Random {
    rng: Rng,
    seen: Vec<(Context, Vec<Target>)>,
}

impl Random {
    fn new(seed: u64) -> Self {
        Random {
            rng: Rng(seed),
            seen: Vec::new(),
        }
    }
}

impl Strategy for Random {
    type Error = String;
    fn start(&mut self, _: &[AssetMeta], _: &RunParams) -> Result<Result<(), ParamError>, String> {
        Ok(Ok(()))
    }
    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let raw: Vec<f64> = ctx.assets.iter().map(|_| self.rng.unit() - 0.3).collect();
        let gross: f64 = raw.iter().map(|w| w.abs()).sum::<f64>().max(1.0) * 1.05;
        let targets: Vec<Target> = ctx
            .assets
            .iter()
            .zip(&raw)
            .map(|(a, w)| Target {
                asset: a.asset,
                weight: w / gross,
            })
            .collect();
        self.seen.push((ctx.clone(), targets.clone()));
        Ok(targets)
    }
}

fn never() -> impl FnMut() -> bool {
    || false
}

fn params(rebalance: Rebalance) -> RunParams {
    RunParams {
        top_n: 2,
        rebalance,
        initial_capital: 250_000.0,
        ..RunParams::default()
    }
}

/// The close of asset `a` carried forward to `date`.
fn close_at(asset: &Asset, date: i32) -> Option<f64> {
    let k = asset.dates.partition_point(|&d| d <= date);
    (k > 0).then(|| asset.closes[k - 1])
}

#[test]
fn equity_is_cash_plus_positions_at_every_point_and_costs_follow_from_trades() {
    let assets = universe(1);
    for schedule in [Rebalance::Daily, Rebalance::Weekly, Rebalance::Monthly] {
        let window = Window {
            start: 10_400,
            end: 11_600,
        };
        let mut strategy = Random::new(5);
        let p = params(schedule);
        let report = run(&inputs(&assets), window, &p, &mut strategy, &mut never()).unwrap();
        assert!(!report.trades.is_empty());
        assert_eq!(report.equity[0], p.initial_capital);
        let mut qty = vec![0.0; assets.len()];
        let mut cash = p.initial_capital;
        let mut next_trade = 0;
        for (i, &date) in report.dates.iter().enumerate() {
            while next_trade < report.trades.len() && report.trades[next_trade].date == date {
                let t = report.trades[next_trade];
                let signed = match t.side {
                    Side::Buy => t.qty,
                    Side::Sell => -t.qty,
                };
                let a = report.universe[t.asset];
                assert_eq!(
                    Some(t.price),
                    close_at(&assets[a], date),
                    "fill at the close"
                );
                let expected_cost = t.qty * t.price * assets[a].bps / 10_000.0;
                assert!((t.cost - expected_cost).abs() <= 1e-9 * expected_cost.max(1.0));
                qty[t.asset] += signed;
                cash -= signed * t.price + t.cost;
                next_trade += 1;
            }
            let positions: f64 = report
                .universe
                .iter()
                .enumerate()
                .filter(|(k, _)| qty[*k] != 0.0)
                .map(|(k, &a)| qty[k] * close_at(&assets[a], date).unwrap())
                .sum();
            let scale = report.equity[i].abs().max(1.0);
            assert!(
                (report.cash[i] - cash).abs() <= 1e-6 * scale,
                "{schedule:?} cash at row {i}"
            );
            assert!(
                (report.equity[i] - (cash + positions)).abs() <= 1e-6 * scale,
                "{schedule:?} identity at row {i}: {} vs {}",
                report.equity[i],
                cash + positions
            );
        }
        assert_eq!(
            next_trade,
            report.trades.len(),
            "trades lie on calendar rows"
        );
        let costs: f64 = report.trades.iter().map(|t| t.cost).sum();
        assert!((report.metrics.total_costs - costs).abs() <= 1e-9 * costs.max(1.0));
        assert_eq!(report.metrics.total_trades, report.trades.len() as u64);
    }
}

#[test]
fn decisions_fill_at_the_next_row_and_weights_reach_their_targets() {
    let assets = universe(2);
    let window = Window {
        start: 10_400,
        end: 11_000,
    };
    let mut strategy = Random::new(9);
    let report = run(
        &inputs(&assets),
        window,
        &params(Rebalance::Weekly),
        &mut strategy,
        &mut never(),
    )
    .unwrap();
    assert_eq!(report.rebalance_dates as usize, strategy.seen.len());
    for (k, (ctx, targets)) in strategy.seen.iter().enumerate().skip(1) {
        let row = report.dates.binary_search(&ctx.date).unwrap();
        // Every trade of this decision is dated the next calendar row.
        let fill = report.dates[row + 1];
        assert!(report.trades.iter().any(|t| t.date == fill));
        // The previous decision's weights show up, drifted, in this context.
        let prev_ctx = &strategy.seen[k - 1].0;
        assert!(prev_ctx.date < ctx.date);
        let gross: f64 = ctx.assets.iter().map(|a| a.weight.abs()).sum();
        assert!(gross <= 1.5, "weights stay near the targets: {gross}");
        assert!(!targets.is_empty());
    }
    // No decision on the last row: it could never be filled.
    assert!(strategy.seen.last().unwrap().0.date < *report.dates.last().unwrap());
}

#[test]
fn changing_prices_after_a_date_changes_no_decision_made_on_or_before_it() {
    let assets = universe(3);
    let window = Window {
        start: 10_400,
        end: 11_600,
    };
    let cut = 11_000;
    let mut changed = universe(3);
    let mut rng = Rng(77);
    for a in &mut changed {
        let k = a.dates.partition_point(|&d| d <= cut);
        for c in &mut a.closes[k..] {
            *c *= 0.5 + rng.unit();
        }
        *a = Asset::new(&a.meta.ticker, a.bps, a.dates.clone(), a.closes.clone());
    }
    let p = params(Rebalance::Daily);
    let mut before = Random::new(11);
    let mut after = Random::new(11);
    let r1 = run(&inputs(&assets), window, &p, &mut before, &mut never()).unwrap();
    let r2 = run(&inputs(&changed), window, &p, &mut after, &mut never()).unwrap();
    let upto = |s: &Random| {
        s.seen
            .iter()
            .filter(|(c, _)| c.date <= cut)
            .cloned()
            .collect::<Vec<_>>()
    };
    let (d1, d2) = (upto(&before), upto(&after));
    assert!(d1.len() > 100);
    assert_eq!(d1, d2, "contexts and decisions up to the cut are identical");
    let k = r1.dates.partition_point(|&d| d <= cut);
    assert_eq!(r1.equity[..k], r2.equity[..k]);
    // And the change is visible afterwards, so the test can fail.
    assert_ne!(r1.equity[k..], r2.equity[k..]);
}

#[test]
fn assets_trade_only_with_300_rows_of_history() {
    let assets = universe(4);
    let mut strategy = Random::new(3);
    let report = run(
        &inputs(&assets),
        Window {
            start: 10_000,
            end: 11_000,
        },
        &params(Rebalance::Weekly),
        &mut strategy,
        &mut never(),
    )
    .unwrap();
    for (ctx, _) in &strategy.seen {
        for s in &ctx.assets {
            let a = &assets[report.universe[s.asset as usize]];
            let rows = a.dates.partition_point(|&d| d <= ctx.date);
            assert!(rows >= MIN_HISTORY);
            assert_eq!(Some(s.price), close_at(a, ctx.date));
            let j = rows - 1;
            assert_eq!(s.drawdown, a.signals.drawdowns[j]);
            assert_eq!(s.median_return, a.signals.median_returns[j]);
            assert_eq!(s.zscore, zscore(&a.signals.drawdowns, j, 252));
        }
    }
    // The first weeks hold nothing: no asset has 300 rows yet.
    assert!(strategy.seen[0].0.assets.is_empty());
    assert_eq!(report.equity[0], report.equity[5]);
}

#[test]
fn schedules_pick_the_first_row_of_each_period() {
    // 2024-01-01 is a Monday (day 19_723).
    let dates: Vec<i32> = (19_723..19_723 + 70).collect();
    let pick = |s| {
        (0..dates.len())
            .filter(|&i| is_rebalance_row(&dates, i, s))
            .map(|i| dates[i])
            .collect::<Vec<_>>()
    };
    assert_eq!(pick(Rebalance::Daily).len(), 70);
    let weekly = pick(Rebalance::Weekly);
    assert_eq!(weekly.len(), 10);
    assert!(
        weekly.iter().all(|&d| (d - 4).rem_euclid(7) == 0),
        "Mondays"
    );
    // January 1, February 1 and March 1 2024.
    assert_eq!(pick(Rebalance::Monthly), vec![19_723, 19_754, 19_783]);
    assert_eq!(pick(Rebalance::Never), vec![19_723], "the first row only");
}

#[test]
fn zscore_is_the_sample_z_of_the_window() {
    let d = [-0.1, -0.2, -0.3, -0.4, -0.5];
    assert_eq!(zscore(&d, 1, 3), None, "too few rows");
    let z = zscore(&d, 4, 3).unwrap();
    // Window -0.3, -0.4, -0.5: mean -0.4, sd 0.1.
    assert!((z - -1.0).abs() < 1e-12);
    assert_eq!(zscore(&[0.0; 5], 4, 3), None, "flat window");
}

struct Fixed(Vec<Target>);

impl Strategy for Fixed {
    type Error = String;
    fn start(&mut self, _: &[AssetMeta], _: &RunParams) -> Result<Result<(), ParamError>, String> {
        Ok(Ok(()))
    }
    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        Ok(self
            .0
            .iter()
            .copied()
            .filter(|t| ctx.assets.iter().any(|a| a.asset == t.asset) || t.asset > 100)
            .collect())
    }
}

#[test]
fn answers_outside_the_contract_end_the_run() {
    let assets = universe(5);
    let window = Window {
        start: 10_600,
        end: 11_000,
    };
    let p = params(Rebalance::Monthly);
    let bad = [
        vec![
            Target {
                asset: 0,
                weight: 0.7,
            },
            Target {
                asset: 1,
                weight: -0.4,
            },
        ],
        vec![Target {
            asset: 0,
            weight: f64::NAN,
        }],
        vec![
            Target {
                asset: 0,
                weight: 0.1,
            },
            Target {
                asset: 0,
                weight: 0.1,
            },
        ],
        vec![Target {
            asset: 999,
            weight: 0.1,
        }],
    ];
    for targets in bad {
        let err = run(
            &inputs(&assets),
            window,
            &p,
            &mut Fixed(targets),
            &mut never(),
        )
        .unwrap_err();
        assert!(matches!(err, RunError::Contract(_)), "{err:?}");
    }
    let ok = vec![
        Target {
            asset: 0,
            weight: 0.5,
        },
        Target {
            asset: 1,
            weight: -0.5,
        },
    ];
    assert!(run(&inputs(&assets), window, &p, &mut Fixed(ok), &mut never()).is_ok());
}

#[test]
fn top_n_beyond_the_universe_and_cancellation_are_reported() {
    let assets = universe(6);
    let window = Window {
        start: 10_600,
        end: 11_000,
    };
    let mut p = params(Rebalance::Monthly);
    p.top_n = 9;
    let err = run(
        &inputs(&assets),
        window,
        &p,
        &mut Random::new(1),
        &mut never(),
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError::Param(ref e) if e.field == "top_n"),
        "{err:?}"
    );
    p.top_n = 2;
    let mut calls = 0;
    let mut stop_after_100 = || {
        calls += 1;
        calls > 100
    };
    let err = run(
        &inputs(&assets),
        window,
        &p,
        &mut Random::new(1),
        &mut stop_after_100,
    )
    .unwrap_err();
    assert_eq!(err, RunError::Cancelled);
    let early = Window {
        start: 1_000,
        end: 2_000,
    };
    let err = run(
        &inputs(&assets),
        early,
        &p,
        &mut Random::new(1),
        &mut never(),
    )
    .unwrap_err();
    assert_eq!(err, RunError::EmptyUniverse);
}

#[test]
fn benchmarks_start_at_the_capital_and_skip_costs() {
    let assets = universe(7);
    let window = Window {
        start: 10_500,
        end: 11_500,
    };
    let report = run(
        &inputs(&assets),
        window,
        &params(Rebalance::Monthly),
        &mut Random::new(2),
        &mut never(),
    )
    .unwrap();
    assert_eq!(report.periods_per_year, 365, "C0 trades on weekends");
    for (name, curve) in &report.benchmarks {
        assert_eq!(curve.len(), report.dates.len(), "{name}");
        assert_eq!(curve[0], 250_000.0);
        assert!(curve.iter().all(|e| e.is_finite() && *e > 0.0));
    }
    // Buy and hold trades once: its value moves with prices only.
    let hold = &report.benchmarks[0].1;
    assert_ne!(hold[0], *hold.last().unwrap());
}

#[test]
fn metrics_follow_the_formulas() {
    let e = [100.0, 110.0, 99.0, 120.0];
    let m = metrics(&e, 252, 3.0, 4);
    let r: [f64; 3] = [0.1, 99.0 / 110.0 - 1.0, 120.0 / 99.0 - 1.0];
    let mean = r.iter().sum::<f64>() / 3.0;
    let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert_eq!(m.total_return, Some(120.0 / 100.0 - 1.0));
    assert_eq!(m.years, 3.0 / 252.0);
    assert!((m.cagr.unwrap() - (1.2f64.powf(252.0 / 3.0) - 1.0)).abs() < 1e-9);
    assert!((m.sharpe_ratio.unwrap() - mean / sd * 252f64.sqrt()).abs() < 1e-12);
    let down = (r[1] * r[1] / 3.0).sqrt();
    assert!((m.sortino_ratio.unwrap() - mean * 252.0 / (down * 252f64.sqrt())).abs() < 1e-9);
    assert!((m.max_drawdown.unwrap() - (99.0 / 110.0 - 1.0)).abs() < 1e-15);
    assert_eq!(m.cost_drag_pct, 3.0);
    // Undefined values are none, never NaN.
    let flat = metrics(&[100.0, 100.0, 100.0], 252, 0.0, 0);
    assert_eq!(flat.sharpe_ratio, None);
    assert_eq!(flat.sortino_ratio, None);
    assert_eq!(flat.max_drawdown, Some(0.0));
    let single = metrics(&[100.0], 252, 0.0, 0);
    assert_eq!(single.cagr, None);
    assert_eq!(single.years, 0.0);
}

#[test]
fn costs_by_category_follow_design() {
    for (category, bps) in [
        ("US Stocks", 6.0),
        ("HK/China Stocks", 6.0),
        ("BMV", 6.0),
        ("ETFs", 6.0),
        ("Crypto", 15.0),
        ("CS2 Cases", 15.0),
        ("Forex", 2.0),
        ("Commodities", 5.0),
        ("Indices", 5.0),
    ] {
        assert_eq!(cost_bps(category), bps, "{category}");
    }
}

#[test]
fn a_trade_cap_keeps_the_first_fills_and_changes_nothing_else() {
    let assets = universe(1);
    let window = Window {
        start: 10_400,
        end: 11_600,
    };
    let p = params(Rebalance::Daily);
    let full = run(
        &inputs(&assets),
        window,
        &p,
        &mut Random::new(5),
        &mut never(),
    )
    .unwrap();
    let total = full.trades.len();
    assert!(total > 20, "enough fills to cap ({total})");
    assert_eq!(full.trades_total, total as u64);
    let capped = run_capped(
        &inputs(&assets),
        window,
        &p,
        &mut Random::new(5),
        &mut never(),
        10,
    )
    .unwrap();
    assert_eq!(
        capped.trades,
        full.trades[..10],
        "the first fills, in order"
    );
    assert_eq!(capped.trades_total, total as u64);
    assert_eq!(
        capped.metrics, full.metrics,
        "total_trades stays the true count"
    );
    assert_eq!(capped.equity, full.equity);
    assert_eq!(capped.cash, full.cash);
}

/// A wider universe than [`universe`]: more assets than z-score lanes,
/// weekday and every-day calendars, gaps, late starters, an asset that
/// stops, and a flat one (its z-score windows are all equal: none).
fn wide_universe(seed: u64) -> Vec<Asset> {
    let mut rng = Rng(seed);
    let mut out = universe(seed);
    for i in 0..9 {
        let start = 10_000 + (rng.unit() * 400.0) as i32;
        let n = 700 + (rng.unit() * 900.0) as usize;
        let mut dates = if i % 3 == 0 {
            (start..start + n as i32).collect::<Vec<i32>>()
        } else {
            weekdays_from(start, n)
        };
        // A gap of a few weeks.
        if i % 2 == 1 {
            dates.retain(|&d| !(10_600..10_630).contains(&d));
        }
        let closes = walk(&mut rng, dates.len());
        out.push(Asset::new(&format!("W{i}"), 6.0, dates, closes));
    }
    let dates = weekdays_from(10_050, 1_000);
    let closes = vec![42.0; dates.len()];
    out.push(Asset::new("FLAT", 5.0, dates, closes));
    out
}

#[test]
fn the_columnar_loop_matches_the_reference_bit_for_bit() {
    let assets = wide_universe(11);
    for (schedule, lookback, start, end) in [
        (Rebalance::Daily, 252, 10_300, 11_700),
        (Rebalance::Daily, 20, 10_000, 12_000),
        (Rebalance::Weekly, 252, 10_450, 11_200),
        (Rebalance::Monthly, 60, 9_000, 11_500),
    ] {
        let window = Window { start, end };
        let p = RunParams {
            zscore_lookback: lookback,
            ..params(schedule)
        };
        let mut a = Random::new(9);
        let mut b = Random::new(9);
        let new = run_capped(&inputs(&assets), window, &p, &mut a, &mut never(), 50).unwrap();
        let old =
            reference::reference_run_capped(&inputs(&assets), window, &p, &mut b, &mut never(), 50)
                .unwrap();
        assert!(a.seen.len() > 20, "{schedule:?}: enough decisions");
        assert!(
            a.seen
                .iter()
                .any(|(c, _)| c.assets.iter().any(|s| s.zscore.is_some())),
            "{schedule:?}: some z-scores"
        );
        // Bit for bit: compare the contexts through their bits (NaN-safe).
        assert_eq!(a.seen.len(), b.seen.len());
        for ((ca, ta), (cb, tb)) in a.seen.iter().zip(&b.seen) {
            assert_eq!(format!("{ca:?}"), format!("{cb:?}"), "{schedule:?}");
            assert_eq!(ta, tb);
        }
        assert_eq!(new, old, "{schedule:?}");
    }
}

#[test]
fn interleaved_zscores_equal_the_one_window_formula() {
    let mut rng = Rng(5);
    let mut d: Vec<f64> = (0..2_000).map(|_| -rng.unit() * 0.5).collect();
    // Flat stretches of zeros and of one negative value.
    d[300..700].iter_mut().for_each(|x| *x = 0.0);
    d[900..1_300].iter_mut().for_each(|x| *x = -0.25);
    for lookback in [2, 20, 252, 1_260] {
        // Contiguous, repeated, scattered and too-early rows.
        let mut js: Vec<usize> = (0..d.len()).collect();
        js.extend((0..500).map(|k| (k * 37) % d.len()));
        js.extend([5, 5, 5, 1_999, 0, usize::MAX, 2_000]);
        let mut out = vec![0.0; js.len()];
        zscores_into(&d, &js, lookback, &mut out);
        for (&j, &z) in js.iter().zip(&out) {
            // Rows past the end (usize::MAX: "no row") are none.
            let want = (j < d.len()).then(|| zscore(&d, j, lookback)).flatten();
            assert_eq!(
                want.map(f64::to_bits),
                (!z.is_nan()).then_some(z.to_bits()),
                "j {j} lookback {lookback}"
            );
        }
    }
}

#[test]
fn galloping_finds_what_a_binary_search_finds() {
    let mut rng = Rng(5);
    for n in [0usize, 1, 2, 3, 7, 64, 1_000] {
        let mut day = 0;
        let dates: Vec<i32> = (0..n)
            .map(|_| {
                day += 1 + (rng.unit() * 4.0) as i32;
                day
            })
            .collect();
        for probe in -1..=day + 2 {
            let answer = dates.partition_point(|&d| d < probe);
            // From any start at or before the answer.
            for from in [0, answer / 2, answer.saturating_sub(1), answer] {
                assert_eq!(
                    advance_to(&dates, from, probe),
                    answer,
                    "n={n} probe={probe} from={from}"
                );
            }
        }
    }
}

#[test]
fn realised_and_open_pnl_less_costs_add_up_to_the_equity_change() {
    // Random long/short weights reverse positions often, so every branch of
    // the average-cost method runs.
    let assets = universe(3);
    for schedule in [Rebalance::Daily, Rebalance::Monthly] {
        let window = Window {
            start: 10_400,
            end: 11_600,
        };
        let mut strategy = Random::new(9);
        let p = params(schedule);
        let report = run(&inputs(&assets), window, &p, &mut strategy, &mut never()).unwrap();
        let (pnl, open) = pnl::realised(&report.trades, report.universe.len());
        assert!(pnl.iter().any(|x| x.is_some()) && pnl.iter().any(|x| x.is_none()));
        let last = *report.dates.last().unwrap();
        let unrealised: f64 = open
            .iter()
            .enumerate()
            .filter(|(_, pos)| pos.qty != 0.0)
            .map(|(k, pos)| {
                let close = close_at(&assets[report.universe[k]], last).unwrap();
                pos.qty * (close - pos.basis)
            })
            .sum();
        let realised: f64 = pnl.iter().flatten().sum();
        let costs: f64 = report.trades.iter().map(|t| t.cost).sum();
        let change = report.equity.last().unwrap() - p.initial_capital;
        assert!(
            (realised - costs + unrealised - change).abs() <= 1e-6 * p.initial_capital,
            "{schedule:?}: {realised} - {costs} + {unrealised} vs {change}"
        );
    }
}
