// The face says what the evidence says: the verdict card leads with the
// calibrated forecast (or labels the raw bucket median as such when the
// server sends none), grades in bulk (ranking, watchlist, alerts) carry one
// line with the active model's record on real prices, the backtest shows
// every benchmark's figures beside the strategy's and says when one made
// more, the research tabs carry the synthetic-data banner, and Monte Carlo
// says it is a stationary block bootstrap. Real server, real Chromium (see
// test/harness.mjs); where the server's state decides a branch (a
// `forecast` in the verdict, a track record with an IC, a benchmark that
// beat the strategy), the test asserts the branch the server's JSON calls
// for, and a second check feeds the page a fixed answer (Playwright's
// route) so that every branch is exercised whatever the server sends.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Suite, DESKTOP, PHONE, REAL_TRIO, EXPECTED_4XX_503, isVerdict, counting } from "./kit.mjs";
import { int, num, pct, signedPct } from "./fmt.mjs";

let env;
const kit = new Suite("forecast", { timeout: 30_000, expected: EXPECTED_4XX_503 });
const { watch, axe, shot, premiumPage } = kit;
const RUN_TIMEOUT = 120_000;
const TRACK = "/web/api/track-record?source=real&return_period=90&metric=return";

/** The page scrolls sideways? */
async function sideways(p) {
  return p.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

const squash = (s) => s.replace(/\s+/g, " ").trim();
/** The app's formats: lib.tsx `pct`, forecast.tsx `signedPct`, model-record.tsx `corrText`, `int`. */
function signed(v, d = 1) {
  return signedPct(v, d).replace(/\u00a0/g, " ");
}
function corr(v) {
  const d = v !== 0 && Math.abs(v) < 0.005 ? 3 : 2;
  const s = Math.abs(v).toFixed(d);
  return v < 0 && Number(s) !== 0 ? `−${s}` : s;
}
const episodes = (n) => `${int(n)} independent episode${n === 1 ? "" : "s"}`;

/** The sentence the bulk line must say for a track record (the test's own reading of `ic`). */
function expectedSentence(tr) {
  const ci = tr.ic.ci && tr.ic.ci.length >= 2 ? tr.ic.ci : null;
  const figures = `IC ${corr(tr.ic.mean)}, ${ci ? `90 % interval ${corr(ci[0])} to ${corr(ci[1])}` : "too few month-ends for an interval"}`;
  if (ci && ci[0] > 0) return { verdict: "better", text: `On real prices, higher grades have been followed by higher returns: ${figures}.` };
  if (ci && ci[1] < 0) return { verdict: "worse", text: `On real prices, higher grades have been followed by LOWER returns: ${figures}.` };
  return { verdict: "undecided", text: `On real prices, grades have not yet told better from worse outcomes: ${figures}.` };
}

/** The server's formulas (crates/backtest/src/metrics.rs) on an equity curve. */
function figures(eq, periods) {
  const r = [];
  for (let i = 1; i < eq.length; i++) r.push(eq[i] / eq[i - 1] - 1);
  const n = r.length;
  const tr = eq[eq.length - 1] / eq[0] - 1;
  const cagr = Math.pow(eq[eq.length - 1] / eq[0], periods / n) - 1;
  const mean = r.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  let peak = -Infinity;
  let mdd = 0;
  for (const e of eq) {
    peak = Math.max(peak, e);
    mdd = Math.min(mdd, e / peak - 1);
  }
  return { total_return: tr, cagr, sharpe_ratio: sd > 0 ? (mean / sd) * Math.sqrt(periods) : null, max_drawdown: mdd };
}
const LABEL = { equal_weight_buy_hold: "Equal weight, buy & hold", equal_weight_rebalanced: "Equal weight, rebalanced" };
const PHRASE = { equal_weight_buy_hold: "The equal-weight, buy & hold benchmark", equal_weight_rebalanced: "The equal-weight, rebalanced benchmark" };

/** A forecast the fixtures inject (fractions). */
const FIXTURE_FORECAST = { return_period: 90, central: 0.031, p10: -0.098, p90: 0.16, central_se: 0.012, reference: 0.02, method: "calibrated", thin: false };

/** Opens an asset page; returns the verdict JSON the page itself fetched. */
async function openAsset(p, path) {
  const [verdict] = await Promise.all([p.waitForResponse(isVerdict, { timeout: 60_000 }), p.goto(path)]);
  await p.locator("#verdict .grade").waitFor();
  return verdict.json();
}

/** Checks the verdict card against verdict `v`; returns the branch it asserted. */
async function checkVerdictCard(p, v, label) {
  const rp = v.metadata.return_period;
  const ev = v.active_segment.evidence;
  const dd = p.locator("#verdict .stats > div", { hasText: "Median return" }).locator("dd");
  if (v.forecast) {
    const f = v.forecast;
    assert.equal(await p.locator("#verdict-forecast").count(), 1, `${label}: the forecast leads`);
    assert.equal(
      squash(await p.locator("#verdict-forecast-line").innerText()),
      `Expected over ${f.return_period ?? rp} days: ${signed(f.central)} (80 % of outcomes between ${signed(f.p10)} and ${signed(f.p90)})`,
      `${label}: the forecast line`,
    );
    const meta = squash(await p.locator("#verdict-forecast-method").innerText());
    assert.ok(
      meta.startsWith(f.method === "climatology" ? "the asset's own history only — too little pooled history to calibrate" : "calibrated out of sample"),
      `${label}: the method in words: ${meta}`,
    );
    assert.equal(meta.includes("thin evidence: the grade cannot be A or F"), f.thin === true, `${label}: "thin evidence" exactly when thin (${meta})`);
    assert.equal(await p.getAttribute("#verdict-forecast-method a", "href"), "/methodology#forecast");
    // The raw median stays, below it, as the bucket's history.
    const bucket = squash(await p.locator("#verdict-bucket").innerText());
    assert.ok(bucket.startsWith(`Bucket's history: median ${signed(v.current_state.median_return)}${ev ? ` over ${episodes(ev.episodes)}` : ""}`), `${label}: ${bucket}`);
    assert.match(await dd.innerText(), /bucket's history/);
    assert.equal(await p.locator("#verdict-raw-label").count(), 0);
    // It leads: right after the grade and price, before every figure.
    const order = await p.evaluate(() => {
      const kids = [...document.querySelector("#verdict").children].map((e) => e.id || e.className);
      return kids;
    });
    assert.equal(order[0], "verdict-top", `${label}: ${order}`);
    const at = order.indexOf("verdict-forecast");
    assert.ok(at >= 1 && at < order.findIndex((k) => String(k).startsWith("stats")), `${label}: the forecast comes before the figures: ${order}`);
    return "forecast";
  }
  assert.ok(!("forecast" in v) || v.forecast === null, `${label}: no forecast in the JSON`);
  assert.equal(await p.locator("#verdict-forecast").count(), 0, `${label}: no forecast line without a forecast`);
  assert.equal(squash(await p.locator("#verdict-raw-label").innerText()), "raw statistic of the bucket's history, not a calibrated forecast");
  const text = squash(await dd.innerText());
  assert.ok(text.startsWith(pct(v.current_state.median_return)), `${label}: the raw median stays: ${text}`);
  assert.ok(text.includes("raw statistic of the bucket's history, not a calibrated forecast"), `${label}: labelled in its figure`);
  return "raw";
}

/** Waits until the page has no request in flight for a moment. */
const settle = (p) => p.waitForLoadState("networkidle").catch(() => {});

describe("forecast, model record, benchmarks, research banners", { timeout: 900_000 }, () => {
  let record = null; // the server's real track record at 90 days (null without one)

  before(async () => {
    env = await kit.start();
  });

  after(() => kit.stop());

  test("the verdict card leads with the forecast when the verdict has one, else labels the raw median", async () => {
    const branches = [];
    for (const [scheme, vp, suffix] of [
      ["light", DESKTOP, ""],
      ["dark", DESKTOP, "-dark"],
      ["light", PHONE, "-phone"],
    ]) {
      const { c, p } = await premiumPage(`verdict${suffix}`, { colorScheme: scheme, viewport: vp, ...(vp === PHONE ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
      for (const path of ["/assets/AAPL", "/assets/%5EGSPC"]) {
        const v = await openAsset(p, path);
        // The test reads the same verdict itself: the branch is the JSON's.
        const own = await (await p.request.get(`/web/api/analysis/${path.split("/").pop()}/verdict`)).json();
        assert.equal("forecast" in own && own.forecast !== null, "forecast" in v && v.forecast !== null, "the page's verdict and the test's agree");
        branches.push(await checkVerdictCard(p, v, `${path} ${scheme} ${vp.width}`));
        if (vp === PHONE) assert.equal(await sideways(p), false, `${path}: no sideways scroll at 390 px`);
      }
      await p.locator("#verdict-card").scrollIntoViewIfNeeded();
      await shot(p.locator("#verdict-card"), `forecast-verdict-card${suffix}`);
      await axe(p, `verdict card ${scheme} ${vp.width}`);
      await c.close();
    }
    assert.ok(branches.every((b) => b === "forecast" || b === "raw"));
    console.log(`# verdict branches: ${[...new Set(branches)].join(", ")}`);
  });

  test("a verdict with a forecast (fed to the page) leads with it; climatology and thin are said in words", async () => {
    for (const [scheme, vp, suffix] of [
      ["light", DESKTOP, ""],
      ["dark", PHONE, "-phone-dark"],
    ]) {
      const { c, p } = await premiumPage(`verdict fixture${suffix}`, { colorScheme: scheme, viewport: vp });
      let inject = FIXTURE_FORECAST;
      await p.route(/\/web\/api\/analysis\/[^/?]+\/verdict/, async (route) => {
        const r = await route.fetch();
        const j = await r.json();
        j.forecast = inject;
        await route.fulfill({ response: r, json: j });
      });
      let v = await openAsset(p, "/assets/%5EGSPC");
      assert.deepEqual(v.forecast, FIXTURE_FORECAST);
      assert.equal(await checkVerdictCard(p, v, `fixture ${suffix}`), "forecast");
      assert.equal(squash(await p.locator("#verdict-forecast-line").innerText()), "Expected over 90 days: +3.1 % (80 % of outcomes between −9.8 % and +16.0 %)");
      await shot(p.locator("#verdict-card"), `forecast-verdict-card-fixture${suffix}`, { tmp: true });
      await axe(p, `verdict fixture ${scheme} ${vp.width}`);
      inject = { ...FIXTURE_FORECAST, method: "climatology", thin: true, central: -0.004 };
      v = await openAsset(p, "/assets/%5EGSPC?return_period=30");
      assert.equal(await checkVerdictCard(p, v, `fixture climatology ${suffix}`), "forecast");
      assert.match(squash(await p.locator("#verdict-forecast-method").innerText()), /^the asset's own history only — too little pooled history to calibrate · thin evidence/);
      assert.match(squash(await p.locator("#verdict-forecast-line").innerText()), /−0\.4 %/);
      if (vp === PHONE) assert.equal(await sideways(p), false);
      await c.close();
    }
  });

  test("the ranking's Expected column follows the rows' forecasts", async () => {
    const { c, p } = await premiumPage("ranking expected");
    const [resp] = await Promise.all([p.waitForResponse((r) => new URL(r.url()).pathname === "/web/api/ranking"), p.goto("/ranking")]);
    const body = await resp.json();
    await p.locator("#ranking-table tbody tr").first().waitFor();
    const headers = await p.$$eval("#ranking-table thead th", (ths) => ths.map((t) => t.textContent.replace(/\s+/g, " ").trim()));
    const withForecast = body.ranked_assets.some((a) => "forecast" in a);
    assert.equal(headers.some((h) => /^Expected ?\??$/.test(h)), withForecast, `an Expected column exactly when the rows carry forecasts: ${headers}`);
    if (withForecast) {
      for (const a of body.ranked_assets.slice(0, 10)) {
        const cell = squash(await p.locator(`#ranking-table tr[data-ticker="${a.ticker}"] td.c-forecast`).innerText());
        assert.ok(cell.startsWith(a.forecast ? signed(a.forecast.central) : "—"), `${a.ticker}: ${cell}`);
      }
    }
    // Fed forecasts, the column appears with the central figure and the range.
    await p.route(/\/web\/api\/ranking/, async (route) => {
      const r = await route.fetch();
      const j = await r.json();
      j.ranked_assets = j.ranked_assets.map((a, i) => ({ ...a, forecast: i === 1 ? null : { ...FIXTURE_FORECAST, central: 0.01 * (i - 2) } }));
      await route.fulfill({ response: r, json: j });
    });
    await p.goto("/ranking?limit=5");
    await p.locator("#ranking-table td.c-forecast").first().waitFor();
    const cells = await p.$$eval("#ranking-table tbody td.c-forecast", (tds) => tds.map((t) => ({ text: t.innerText.replace(/\s+/g, " ").trim(), title: (t.querySelector("[title]")?.getAttribute("title") ?? "").replace(/\s+/g, " ") })));
    assert.equal(cells.length, 5);
    assert.ok(cells[0].text.startsWith("−2.0 %") && cells[0].text.includes("−9.8 % to +16.0 %"), cells[0].text);
    assert.equal(cells[1].text, "—");
    assert.ok(cells[2].text.startsWith("0.0 %"), cells[2].text);
    assert.match(cells[3].title, /calibrated out of sample; 80 % of outcomes between −9\.8 % and \+16\.0 %/);
    await axe(p, "ranking with forecasts");
    await c.close();
  });

  test("the bulk line: the model's record on real prices above the ranking, the watchlist and the alerts, with its link", async () => {
    const { c, p } = await premiumPage("bulk line");
    const r = await p.request.get(TRACK);
    if (r.status() === 200) {
      const j = await r.json();
      if (j.ic && typeof j.ic.mean === "number" && j.ic.dates > 0) record = j;
    }
    await p.request.put("/web/watchlist", { data: { tickers: REAL_TRIO }, headers: { Origin: env.base } });
    for (const [path, ready] of [
      ["/ranking", "#ranking-table tbody tr"],
      ["/", "#watchlist-table tbody tr"],
      ["/alerts", "#inbox"],
    ]) {
      const calls = await counting(p, (r) => new URL(r.url()).pathname === "/web/api/track-record", async () => {
        await p.goto(path);
        await p.locator(ready).first().waitFor();
        await settle(p);
      });
      assert.equal(calls, 1, `${path}: the track record is asked for once`);
      if (record) {
        const want = expectedSentence(record);
        const line = p.locator("#model-record");
        await line.waitFor();
        assert.equal(await line.getAttribute("data-verdict"), want.verdict);
        const text = squash(await line.innerText());
        assert.ok(text.startsWith(want.text), `${path}: "${text}" starts with "${want.text}"`);
        assert.ok(text.includes(`scorer ${record.scorer_version}`) && text.includes(`engine ${record.engine_version}`), `${path}: the versions: ${text}`);
        assert.ok(text.includes(`${record.ic.dates} month-ends of 90-day grades`), text);
        assert.equal(await line.locator("a").getAttribute("href"), "/track-record?return_period=90");
        assert.equal(await line.locator("a").innerText(), "Track record");
        await shot(p, `forecast-bulk${path.replace(/\//g, "-")}`, { tmp: true });
      } else {
        assert.equal(await p.locator("#model-record").count(), 0, `${path}: no record, no line (track record ${r.status()})`);
      }
    }
    console.log(`# real track record: ${record ? `IC ${record.ic.mean} ${JSON.stringify(record.ic.ci)}` : `none (${r.status()})`}`);
    // Within the app (no reload) the answer is kept: no second request, no polling.
    await p.goto("/ranking");
    await p.locator("#ranking-table tbody tr").first().waitFor();
    await settle(p);
    const later = await counting(p, (r) => new URL(r.url()).pathname === "/web/api/track-record", async () => {
      await p.locator("header a.brand").click();
      await p.waitForURL((u) => u.pathname === "/");
      await p.locator("#watchlist-table tbody tr").first().waitFor();
      await p.waitForTimeout(2_500);
    });
    assert.equal(later, 0, "kept for the session, not polled");
    if (record) {
      await p.goto("/ranking");
      await p.locator("#model-record").waitFor();
      // The line and the first rows under it.
      const box = await p.locator("#model-record").evaluate((el) => {
        const card = el.closest(".card").getBoundingClientRect();
        const r = el.getBoundingClientRect();
        return { x: card.left, y: r.top + window.scrollY - 70, width: card.width, height: 560 };
      });
      await shot(p, "forecast-bulk-line", { clip: box, full: true });
    }
    await axe(p, "bulk line");
    await c.close();
  });

  test("the bulk line's three readings, its red, and nothing without a record (fed answers)", async () => {
    const cases = [
      ["better", { mean: 0.05, ci: [0.01, 0.09], dates: 120 }, "On real prices, higher grades have been followed by higher returns: IC 0.05, 90 % interval 0.01 to 0.09."],
      ["worse", { mean: -0.04, ci: [-0.07, -0.012], dates: 120 }, "On real prices, higher grades have been followed by LOWER returns: IC −0.04, 90 % interval −0.07 to −0.01."],
      ["undecided", { mean: 0.02, ci: [-0.01, 0.05], dates: 120 }, "On real prices, grades have not yet told better from worse outcomes: IC 0.02, 90 % interval −0.01 to 0.05."],
      ["undecided", { mean: 0.02, ci: null, dates: 3 }, "On real prices, grades have not yet told better from worse outcomes: IC 0.02, too few month-ends for an interval."],
    ];
    for (const scheme of ["light", "dark"]) {
      for (const vp of [DESKTOP, PHONE]) {
        const { c, p } = await premiumPage(`bulk fixture ${scheme} ${vp.width}`, { colorScheme: scheme, viewport: vp });
        await p.request.put("/web/watchlist", { data: { tickers: REAL_TRIO }, headers: { Origin: env.base } });
        let ic = null;
        let status = 200;
        await p.route(/\/web\/api\/track-record(\?|$)/, async (route) => {
          if (status !== 200) return route.fulfill({ status, json: { detail: "The track record is not available yet: no grading run has computed it." } });
          const base = record ?? { return_period: 90, metric: "return", source: "real", run_id: "r", run_day: "2026-01-01", engine_version: "1.0.0", scorer_version: "2.0.0", assets: 10, observations: 100, data_sources: { real: 10, ingested: 0, synthetic: 0 }, by_grade: [], ic_series: [], quintile_spread: { mean: null, ci: null, dates: 0 }, calibration: [], block_months: 4, notes: [] };
          await route.fulfill({ json: { ...base, ic, scorer_version: "2.0.0" } });
        });
        for (const [verdict, fixture, text] of cases) {
          ic = fixture;
          for (const [path, ready] of [
            ["/ranking", "#ranking-table tbody tr"],
            ["/", "#watchlist-table tbody tr"],
            ["/alerts", "#inbox"],
          ]) {
            await p.goto(path);
            await p.locator(ready).first().waitFor();
            const line = p.locator("#model-record");
            await line.waitFor();
            assert.equal(await line.getAttribute("data-verdict"), verdict, `${path} ${verdict}`);
            assert.ok(squash(await line.innerText()).startsWith(text), `${path}: ${squash(await line.innerText())}`);
            assert.match(await line.innerText(), /scorer 2\.0\.0/);
            assert.equal(await line.getAttribute("role"), null, "styling only, no alert role");
            if (verdict === "worse") {
              // In red: the class's colour is the theme's red on its band.
              const [colour, neg] = await p.evaluate(() => {
                const el = document.querySelector("#model-record .mr-sentence");
                const probe = document.createElement("span");
                probe.style.color = getComputedStyle(document.documentElement).getPropertyValue("--neg-on-band");
                document.body.appendChild(probe);
                const want = getComputedStyle(probe).color;
                probe.remove();
                return [getComputedStyle(el).color, want];
              });
              assert.equal(colour, neg, "the worse reading is red");
              assert.ok(await line.evaluate((el) => el.classList.contains("model-record-worse")));
              if (path === "/ranking") {
                await axe(p, `bulk line worse ${scheme} ${vp.width}`);
                if (vp === PHONE) assert.equal(await sideways(p), false, "no sideways scroll at 390 px");
                await shot(p.locator("#model-record"), `forecast-bulk-line-worse${scheme === "dark" ? "-dark" : ""}${vp === PHONE ? "-phone" : ""}`, { tmp: true });
              }
            } else {
              assert.ok(await line.evaluate((el) => !el.classList.contains("model-record-worse")));
            }
          }
        }
        // 503 (no grading run yet) and 404: nothing at all.
        for (const s of [503, 404]) {
          status = s;
          await p.goto("/ranking");
          await p.locator("#ranking-table tbody tr").first().waitFor();
          await settle(p);
          assert.equal(await p.locator("#model-record").count(), 0, `${s}: no line`);
        }
        await c.close();
      }
    }
  });

  test("the real bulk line on a phone, light and dark", async () => {
    for (const scheme of ["light", "dark"]) {
      const { c, p } = await premiumPage(`bulk phone ${scheme}`, { colorScheme: scheme, viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
      for (const path of ["/ranking", "/", "/alerts"]) {
        await p.goto(path);
        await p.locator("main h1").waitFor();
        await settle(p);
        assert.equal(await p.locator("#model-record").count(), record ? 1 : 0, path);
        assert.equal(await sideways(p), false, `${path}: no sideways scroll at 390 px`);
        await axe(p, `${path} phone ${scheme}`);
        if (path === "/ranking" && record) {
          await p.locator("#model-record").evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 120));
          await shot(p, `forecast-bulk-line-phone${scheme === "dark" ? "-dark" : ""}`);
        }
      }
      await c.close();
    }
  });

  test("the backtest shows each benchmark's figures beside the strategy's and says who made more", async () => {
    const runs = [];
    for (const [scheme, vp, suffix] of [
      ["light", DESKTOP, ""],
      ["dark", PHONE, "-phone"],
    ]) {
      const { c, p } = await premiumPage(`benchmarks${suffix}`, { colorScheme: scheme, viewport: vp });
      for (const url of [`/backtest?universe=tickers&tickers=${encodeURIComponent(REAL_TRIO.join(", "))}&top_n=2`, "/backtest?universe=category&category=Crypto"]) {
        const [resp] = await Promise.all([
          p.waitForResponse((r) => new URL(r.url()).pathname === "/web/api/backtest" && r.request().method() === "POST", { timeout: RUN_TIMEOUT }),
          p.goto(url),
        ]);
        assert.equal(resp.status(), 200, await resp.text());
        const r = await resp.json();
        await p.locator("#bt-benchmarks").waitFor();
        // As the page orders them: the two baskets, then the benchmarks chosen by ticker.
        const basket = (n) => Number(!n.startsWith("equal_weight_"));
        const names = Object.keys(r.benchmarks).sort((a, b) => basket(a) - basket(b) || (a < b ? -1 : a > b ? 1 : 0));
        assert.ok(names.length >= 2, `benchmarks: ${names}`);
        const rows = await p.$$eval("#bt-benchmarks tbody tr", (trs) =>
          trs.map((tr) => ({ row: tr.dataset.row, label: tr.querySelector("th").textContent.trim(), cells: [...tr.querySelectorAll("td")].map((td) => [td.dataset.figure, td.innerText.trim()]) })),
        );
        assert.deepEqual(rows.map((x) => x.row), ["strategy", ...names], "one row for the strategy and one per benchmark");
        const m = r.metrics;
        const fmt = { total_return: pct, cagr: pct, sharpe_ratio: num, max_drawdown: pct };
        assert.deepEqual(rows[0].cells, Object.keys(fmt).map((k) => [k, fmt[k](m[k])]), "the strategy's row is the API's metrics");
        // The test computes the strategy's figures from its curve too: the formulas agree with the server's.
        const mine = figures(r.equity_curve.map((e) => e.equity), r.metadata.periods_per_year);
        for (const k of Object.keys(fmt)) assert.equal(fmt[k](mine[k]), fmt[k](m[k]), `the formula of ${k}`);
        const bench = {};
        for (const [i, n] of names.entries()) {
          const b = r.benchmarks[n];
          const f = figures(b.equity, r.metadata.periods_per_year);
          for (const k of Object.keys(fmt)) if (b.metrics && typeof b.metrics[k] === "number") f[k] = b.metrics[k];
          bench[n] = f;
          assert.equal(rows[i + 1].label, LABEL[n] ?? n.replace(/_/g, " "));
          assert.deepEqual(rows[i + 1].cells, Object.keys(fmt).map((k) => [k, fmt[k](f[k])]), `${n}: its figures`);
        }
        // The sentence: which benchmark made more, or that none did.
        const beat = names.filter((n) => bench[n].total_return > m.total_return);
        const sentence = squash(await p.locator("#bt-beat").innerText());
        assert.equal(await p.getAttribute("#bt-beat", "data-beaten"), beat.length ? "true" : "false");
        for (const n of beat) assert.ok(sentence.includes(`${PHRASE[n]} made more than the strategy: ${signed(bench[n].total_return, 2)} against ${signed(m.total_return, 2)}.`), sentence);
        if (!beat.length) assert.ok(sentence.startsWith("The strategy made more than"), sentence);
        // Alpha never without the benchmark's own return beside it.
        const rel = await p.$$eval("#bt-relative tbody tr", (trs) => trs.map((tr) => ({ row: tr.dataset.row, ret: tr.querySelector("td.rel-return")?.innerText.trim() })));
        for (const x of rel) assert.equal(x.ret, pct(bench[x.row].total_return), `${x.row}: its return beside its alpha`);
        runs.push({ url, beat: beat.length });
        if (vp === PHONE) assert.equal(await sideways(p), false, `${url}: no sideways scroll at 390 px`);
        if (url.includes("tickers")) {
          await p.locator("#bt-vs").scrollIntoViewIfNeeded();
          await p.waitForTimeout(200);
          await shot(p.locator("#bt-vs"), `forecast-benchmarks${suffix}`);
        }
        await axe(p, `benchmarks ${scheme} ${vp.width}`);
      }
      await c.close();
    }
    console.log(`# benchmark beat the strategy: ${JSON.stringify(runs)}`);
  });

  test("a benchmark that made more is said in a sentence (fed curve)", async () => {
    const { c, p } = await premiumPage("benchmarks fixture");
    await p.route(/\/web\/api\/backtest$/, async (route) => {
      const r = await route.fetch();
      const j = await r.json();
      // The buy & hold curve ends 50 % above the strategy's; the other stays below.
      const eq = j.equity_curve.map((e) => e.equity);
      const n = eq.length - 1;
      j.benchmarks.equal_weight_buy_hold.equity = eq.map((e, i) => e * (1 + (0.5 * i) / n));
      j.benchmarks.equal_weight_rebalanced.equity = eq.map((e, i) => e * (1 - (0.1 * i) / n));
      await route.fulfill({ response: r, json: j });
    });
    const [resp] = await Promise.all([
      p.waitForResponse((r) => new URL(r.url()).pathname === "/web/api/backtest", { timeout: RUN_TIMEOUT }),
      p.goto(`/backtest?universe=tickers&tickers=${encodeURIComponent(REAL_TRIO.join(", "))}&top_n=2`),
    ]);
    const j = await resp.json();
    await p.locator("#bt-beat").waitFor();
    const hold = j.benchmarks.equal_weight_buy_hold.equity;
    const tr = hold[hold.length - 1] / hold[0] - 1;
    assert.equal(await p.getAttribute("#bt-beat", "data-beaten"), "true");
    assert.equal(
      squash(await p.locator("#bt-beat").innerText()),
      `The equal-weight, buy & hold benchmark made more than the strategy: ${signed(tr, 2)} against ${signed(j.metrics.total_return, 2)}.`,
    );
    await shot(p.locator("#bt-vs"), "forecast-benchmarks-beaten", { tmp: true });
    await axe(p, "benchmarks beaten");
    await c.close();
  });

  test("sweep, walk-forward and Monte Carlo carry the synthetic-data banner; Monte Carlo says what it does", async () => {
    const { c, p } = await premiumPage("research banners");
    const crypto = "universe=category&category=Crypto&top_n=3";
    const tabs = [
      ["sweep", `/backtest?tab=sweep&${crypto.replace("&top_n=3", "")}&sweep_top_n=2,3&rank_by=sharpe_ratio`, "#sweep-heatmap", "this sweep"],
      ["walk-forward", `/backtest?tab=walk-forward&${crypto.replace("&top_n=3", "")}&sweep_top_n=3&rank_by=sharpe_ratio&train_years=2&test_years=2&mode=rolling`, "#wf-splits-table", "this walk-forward"],
      ["monte-carlo", `/backtest?tab=monte-carlo&${crypto}&runs=50&block_days=20&seed=1`, "#mc-spread-table", "this simulation"],
    ];
    for (const [tab, url, ready, subject] of tabs) {
      await p.goto(url);
      await p.locator(ready).waitFor({ timeout: RUN_TIMEOUT });
      assert.equal(await p.locator("#bt-error").count(), 0, `${tab}: ran`);
      const banner = p.locator("#bt-synthetic");
      await banner.waitFor();
      assert.match(squash(await banner.innerText()), new RegExp(`^Most of these prices are synthetic: ${subject} says nothing about real markets\\. \\d+ of the \\d+ assets`));
      assert.equal(await banner.getAttribute("class"), "note note-warn bt-synthetic", "the Result tab's banner");
      await axe(p, `${tab} banner`);
      if (tab === "monte-carlo") {
        const lead = squash(await p.locator("#tab-lead").innerText());
        for (const s of ["stationary block bootstrap", "about 20 days on average", "resampled with replacement", "not a reordering of them", "cannot show"]) assert.ok(lead.includes(s), `the lead says "${s}": ${lead}`);
        const explain = squash(await p.locator("#mc-explain").innerText());
        assert.match(explain, /^50 paths of [\d,]+ days, each drawn from the run's own [\d,]+ daily returns by a stationary block bootstrap/);
        assert.ok(explain.includes("average 20 days and are drawn with replacement") && explain.includes("not a reordering of them"), explain);
        assert.equal(await p.getAttribute("#mc-explain a", "href"), "/methodology#monte-carlo");
        assert.match(squash(await p.locator("#mc-limits").innerText()), /It cannot show how the strategy would do on markets unlike this window's/);
        assert.doesNotMatch(await p.locator("main").innerText(), /reorderings/i);
        assert.equal(await p.locator("label[for=b-runs]").innerText(), "Paths (1–5,000)");
        await shot(p, "forecast-monte-carlo", { tmp: true, full: true });
      }
    }
    // Real prices: no banner on the same tabs.
    await p.goto(`/backtest?tab=monte-carlo&universe=tickers&tickers=${encodeURIComponent(REAL_TRIO.join(", "))}&top_n=2&runs=50`);
    await p.locator("#mc-spread-table").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal(await p.locator("#bt-synthetic").count(), 0, "real prices: no banner");
    await p.goto(`/backtest?tab=sweep&universe=tickers&tickers=${encodeURIComponent(REAL_TRIO.join(", "))}&sweep_top_n=1,2`);
    await p.locator("#sweep-heatmap").waitFor({ timeout: RUN_TIMEOUT });
    await settle(p);
    assert.equal(await p.locator("#bt-synthetic").count(), 0, "real prices: no banner on the sweep");
    // On a phone, in the dark theme: the banner and the text fit.
    const ph = await premiumPage("research phone", { viewport: PHONE, colorScheme: "dark", isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    for (const [tab, url, ready] of tabs) {
      await ph.p.goto(url);
      await ph.p.locator(ready).waitFor({ timeout: RUN_TIMEOUT });
      await ph.p.locator("#bt-synthetic").waitFor();
      assert.equal(await sideways(ph.p), false, `${tab}: no sideways scroll at 390 px`);
      await axe(ph.p, `${tab} banner (phone, dark)`);
    }
    await ph.c.close();
    // The methodology explains it too.
    await p.goto("/methodology#monte-carlo");
    const section = squash(await p.locator("section[aria-labelledby=monte-carlo]").innerText());
    for (const s of ["stationary block bootstrap", "with replacement", "not a reordering", "20 days by default", "It cannot tell"]) assert.ok(section.includes(s), `methodology: "${s}"`);
    await c.close();
  });

  kit.closingChecks();
});
