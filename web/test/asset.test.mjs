// The asset page tells the truth at a glance (issue 24): the box chart draws
// the table's numbers, dates are calendar dates in any time zone, the verdict
// is on a phone's first screen, the page fetches what it draws, the paths
// chart spans the horizon, the watchlist button round-trips, an unknown
// ticker is one not-found page with a search. See test/harness.mjs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Suite, PHONE, assertClose, openAsset as openPage } from "./kit.mjs";
import { pct } from "./fmt.mjs";

const ASSET = "/assets/%5EGSPC";
/** Transfer budget of the analysis request (issue 24: ≤ 600 KB for the page's data). */
const BUDGET = 600 * 1024;

let env;
const kit = new Suite("asset", { timeout: 20_000 });
const { watch, newContext, axe, shot, premiumPage } = kit;

/** Opens an asset page (^GSPC by default) and waits for its walk chart too. */
async function openAsset(p, path = ASSET) {
  const r = await openPage(p, path);
  await p.locator("#chart-walk canvas").waitFor({ timeout: 60_000 });
  return r;
}

/**
 * Moves the cursor to a fraction of a chart's plotting area (0: its left
 * edge, 1: its right edge, where the nearest row is the first or the last)
 * and reads the legend's date (series 0).
 */
async function legendDateAt(p, chartId, fx) {
  const over = p.locator(`#${chartId} .u-over`);
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  await p.mouse.move(box.x + Math.max(0.25, Math.min(box.width - 0.25, box.width * fx)), box.y + box.height / 2);
  return (await p.locator(`#${chartId} .u-legend .u-series`).first().locator(".u-value").innerText()).trim();
}

describe("the asset page", { timeout: 300_000 }, () => {
  before(async () => {
    env = await kit.start();
  });

  after(() => kit.stop());

  test("it fetches what it draws: max_points, under 600 KB on the wire, statistics unchanged", async () => {
    const { c, p } = await premiumPage("transfer");
    const { analysis, a } = await openAsset(p);
    const url = new URL(analysis.url());
    const asked = Number(url.searchParams.get("max_points"));
    assert.ok(asked >= 100 && asked <= 20000, `the analysis is asked with max_points (${analysis.url()})`);
    const sizes = await analysis.request().sizes();
    const wire = sizes.responseBodySize + sizes.responseHeadersSize;
    console.log(`# analysis of ^GSPC: ${(wire / 1024).toFixed(0)} KB on the wire (max_points=${asked}, ${a.time_series.dates.length} of ${a.metadata.time_series_rows} rows)`);
    assert.ok(wire <= BUDGET, `the analysis response is ${wire} bytes on the wire, over ${BUDGET}`);
    assert.equal(a.metadata.max_points, asked, "metadata.max_points echoes the parameter");
    assert.ok(a.time_series.dates.length <= asked, "at most max_points rows are drawn");
    assert.ok(a.metadata.time_series_rows > a.time_series.dates.length, "^GSPC has more rows than are drawn");
    // The lines keep their shape (first and last row, highs and lows kept), and
    // nothing computed changes with thinning.
    const full = await (await p.request.get(`/web/api/analysis/%5EGSPC`)).json();
    const ts = a.time_series;
    const fs = full.time_series;
    assert.equal(a.metadata.time_series_rows, fs.dates.length);
    assert.equal(ts.dates[0], fs.dates[0]);
    assert.equal(ts.dates.at(-1), fs.dates.at(-1));
    assert.equal(Math.max(...ts.prices), Math.max(...fs.prices), "the highest close is drawn");
    assert.equal(Math.min(...ts.prices), Math.min(...fs.prices), "the lowest close is drawn");
    assert.equal(Math.min(...ts.drawdowns), Math.min(...fs.drawdowns), "the deepest drawdown is drawn");
    // (Equal to 1e-12: a first, live answer and a cached one may differ in the last bit.)
    assertClose(a.segments, full.segments, "segments");
    assertClose(a.current_state, full.current_state, "current_state");
    assertClose(a.return_distribution, full.return_distribution, "return_distribution");
    // What the page says it draws.
    assert.match(await p.locator("#analysis-meta").innerText(), new RegExp(`draw ${ts.dates.length.toLocaleString("en-US")} of the ${fs.dates.length.toLocaleString("en-US")} rows`));
    await c.close();
  });

  test("the box chart's medians are the table's “Median, all outcomes”", async () => {
    const { c, p } = await premiumPage("medians");
    for (const path of [ASSET, "/assets/AAPL?return_period=30&num_segments=12"]) {
      const { a } = await openAsset(p, path);
      await p.locator("#chart-segments canvas").waitFor();
      const drawn = JSON.parse(await p.getAttribute("#chart-segments", "data-medians"));
      const table = await p.$$eval("#segment-table tbody tr", (rows) =>
        rows.map((r) => ({ segment: Number(r.dataset.segment), all: r.querySelector(".med-all").textContent.trim() })),
      );
      assert.equal(table.length, a.segments.length);
      const withOutcomes = table.filter((r) => r.all !== "—");
      assert.ok(withOutcomes.length > 0, "the table has medians");
      assert.equal(drawn.length, withOutcomes.length, `${path}: one box per bucket with outcomes`);
      for (const d of drawn) {
        const row = table.find((r) => r.segment === d.segment);
        assert.ok(row, `bucket ${d.segment} is in the table`);
        assert.equal(pct(d.median), row.all, `${path} bucket ${d.segment}: chart ${pct(d.median)}, table ${row.all}`);
        const s = a.segments.find((x) => x.segment_idx === d.segment);
        assert.equal(d.median, s.static_median_return, "the drawn median is the server's static_median_return");
        assert.equal(d.median, s.outcome_quantiles.p50);
      }
      // The legend names the median drawn.
      assert.match(await p.locator("#chart-segments .u-legend").innerText(), /Median \(all outcomes\)/);
    }
    await c.close();
  });

  for (const timezoneId of ["America/New_York", "Asia/Tokyo"]) {
    test(`dates are calendar dates in ${timezoneId}`, async () => {
      const { c, p } = await premiumPage(timezoneId, { timezoneId });
      const offset = await p.evaluate(() => new Date("2020-01-15T00:00:00Z").getTimezoneOffset());
      assert.notEqual(offset, 0, `the browser runs in ${timezoneId}`);
      const { a, v } = await openAsset(p);
      // The verdict's price is dated with the API's last price date.
      const shown = p.locator("#verdict-price time");
      assert.equal(await shown.getAttribute("datetime"), v.metadata.last_price_date);
      assert.equal((await shown.innerText()).trim(), v.metadata.last_price_date);
      // Chart legends: the first and last rows' dates, as the API sends them.
      const first = a.time_series.dates[0];
      const last = a.time_series.dates.at(-1);
      // The walk-forward chart draws one row per month- or quarter-end: its first is the first period's last row.
      const months = (await p.getAttribute("#chart-walk", "data-period")) === "quarter" ? 3 : 1;
      const period = (d) => `${d.slice(0, 4)}-${Math.floor((Number(d.slice(5, 7)) - 1) / months)}`;
      const firstEnd = a.time_series.dates.findLast((d) => period(d) === period(first));
      for (const id of ["chart-price", "chart-drawdown", "chart-walk"]) {
        assert.equal(await legendDateAt(p, id, 1), last, `${id}: the last row's date`);
        assert.equal(await legendDateAt(p, id, 0), id === "chart-walk" ? firstEnd : first, `${id}: the first row's date`);
        const mid = await legendDateAt(p, id, 0.5);
        assert.match(mid, /^\d{4}-\d{2}-\d{2}$/, `${id}: a calendar date, no time`);
        assert.ok(a.time_series.dates.includes(mid), `${id}: ${mid} is a date of the series`);
      }
      // Timestamps are UTC, dates are not shifted anywhere in the page's text.
      assert.match(await p.locator("#analysis-meta").innerText(), /\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
      assert.doesNotMatch(await p.locator("main").innerText(), /\d{1,2}:\d{2}\s?(am|pm)/i, "no local time of day");
      await c.close();
    });
  }

  test("on a phone the verdict is on the first screen and nothing scrolls sideways", async () => {
    const { c, p } = await premiumPage("phone", { viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const { v } = await openAsset(p);
    await p.evaluate(() => window.scrollTo(0, 0));
    for (const sel of ["#verdict .grade", "#verdict-price .dp-value", "#verdict-price time"]) {
      const b = await p.locator(sel).boundingBox();
      assert.ok(b && b.y >= 0 && b.y + b.height <= PHONE.height, `${sel} is in the first ${PHONE.height} px (${JSON.stringify(b)})`);
    }
    assert.equal((await p.locator("#verdict-price time").innerText()).trim(), v.metadata.last_price_date);
    const wide = await p.evaluate(() => ({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, view: window.innerWidth }));
    assert.ok(wide.doc <= wide.view && wide.body <= wide.view, `no sideways scroll: ${JSON.stringify(wide)}`);
    // Every chart fits.
    const charts = await p.$$eval(".chart", (cs) => cs.map((ch) => ({ id: ch.id, right: ch.getBoundingClientRect().right, canvas: ch.querySelector("canvas")?.getBoundingClientRect().right ?? 0 })));
    for (const ch of charts) assert.ok(ch.right <= PHONE.width && ch.canvas <= PHONE.width, `${ch.id} fits: ${JSON.stringify(ch)}`);
    // The segment table keeps bucket, days and both medians in view without scrolling the table.
    const wrap = await p.locator("#segment-table .table-wrap").boundingBox();
    const heads = p.locator("#segment-table thead th");
    for (let i = 0; i < 4; i++) {
      const b = await heads.nth(i).boundingBox();
      assert.ok(b && b.width > 0 && b.x >= wrap.x - 1 && b.x + b.width <= wrap.x + wrap.width + 1, `column ${i + 1} (${await heads.nth(i).innerText()}) is visible`);
    }
    const tableScroll = await p.$eval("#segment-table .table-wrap", (w) => w.scrollWidth - w.clientWidth);
    assert.ok(tableScroll <= 1, `the segment table does not scroll sideways (${tableScroll} px)`);
    await shot(p, "asset-phone");
    await axe(p, "asset (390 px)");
    await c.close();
  });

  test("the paths chart spans the chosen horizon", async () => {
    const { c, p } = await premiumPage("paths");
    for (const [path, rp] of [
      [ASSET, 90],
      ["/assets/%5EGSPC?return_period=180", 180],
      ["/assets/BTC-USD?return_period=30", 30],
    ]) {
      const { a } = await openAsset(p, path);
      await p.locator("#chart-fan canvas").waitFor();
      const ppy = a.metadata.periods_per_year;
      const len = Math.max(1, Math.round((rp * ppy) / 365));
      const key = String(a.current_state.segment) in a.segment_paths ? String(a.current_state.segment) : Object.keys(a.segment_paths).sort((x, y) => x - y)[0];
      assert.equal(a.segment_paths[key].p50.length - 1, len, `${path}: the engine's path has ${len} rows after entry`);
      const fan = p.locator("#chart-fan");
      assert.equal(Number(await fan.getAttribute("data-path-length")), len);
      const xMax = Number(await fan.getAttribute("data-x-max"));
      assert.ok(xMax >= len, `${path}: the x scale reaches ${xMax}, the path is ${len} rows`);
      const label = await fan.getAttribute("aria-label");
      assert.match(label, new RegExp(ppy === 365 ? `over the ${len} days` : `over the ${len} trading days`));
      assert.match(label, new RegExp(`the ${rp}-day horizon`));
    }
    await c.close();
  });

  test("add to watchlist and remove round-trip through /web/watchlist", async () => {
    const { c, p } = await premiumPage("watchlist");
    const origin = { Origin: env.base };
    await p.request.put("/web/watchlist", { data: { tickers: [] }, headers: origin });
    const list = async () => (await (await p.request.get("/web/watchlist")).json()).tickers.map((t) => t.ticker);
    await openAsset(p, "/assets/AAPL");
    await p.getByRole("button", { name: "Add to watchlist" }).click();
    await p.getByText("On your watchlist ✓").waitFor();
    assert.deepEqual(await list(), ["AAPL"]);
    await p.reload();
    await p.getByText("On your watchlist ✓").waitFor();
    await p.getByRole("button", { name: /^Remove/ }).click();
    await p.getByRole("button", { name: "Add to watchlist" }).waitFor();
    assert.deepEqual(await list(), []);
    // A full watchlist is a sentence, and nothing changes.
    const assets = (await (await p.request.get("/web/api/assets")).json()).assets.map((x) => x.ticker).filter((t) => t !== "AAPL");
    assert.ok(assets.length >= 50, `${assets.length} assets to fill a watchlist`);
    const fifty = assets.slice(0, 50);
    assert.equal((await p.request.put("/web/watchlist", { data: { tickers: fifty }, headers: origin })).status(), 200);
    await p.reload();
    await p.getByRole("button", { name: "Add to watchlist" }).click();
    await p.locator("#watch").getByText(/Your watchlist is full \(50 assets\)/).waitFor();
    assert.deepEqual(await list(), fifty);
    await p.request.put("/web/watchlist", { data: { tickers: [] }, headers: origin });
    await c.close();
  });

  test("an unknown ticker is one not-found page with a search that leads to an asset", async () => {
    const { c, p } = await premiumPage("notfound");
    await p.goto("/assets/NOPE");
    const h1 = p.locator("main h1");
    await h1.filter({ hasText: "NOPE" }).waitFor();
    await p.waitForLoadState("networkidle");
    assert.equal(await p.locator("main h1").count(), 1, "one heading");
    assert.equal(await p.locator(".note-error").count(), 0, "no raw error");
    assert.equal((await p.locator("main").innerText()).match(/NOPE/g).length >= 1, true);
    assert.doesNotMatch(await p.locator("main").innerText(), /unknown ticker 'NOPE'/, "the server's raw detail is not shown");
    await axe(p, "asset not found");
    const search = p.locator("main input[type=search]");
    await search.fill("AAPL");
    await search.press("Enter");
    await p.waitForURL((u) => u.pathname === "/assets/AAPL");
    await p.locator("#verdict .grade").waitFor();
    await c.close();
  });

  test("the price chart's range presets and log scale", async () => {
    const { c, p } = await premiumPage("ranges");
    const { a } = await openAsset(p);
    const chart = p.locator("#chart-price");
    const day = (d) => Date.parse(`${d}T00:00:00Z`) / 1000;
    const first = day(a.time_series.dates[0]);
    const last = day(a.time_series.dates.at(-1));
    const bounds = async () => [Number(await chart.getAttribute("data-x-min")), Number(await chart.getAttribute("data-x-max"))];
    // The range shown, once it has settled (a window's own rows replace the plot).
    const settles = (lo, hi) =>
      p.waitForFunction(
        ([lo, hi]) => {
          const d = document.querySelector("#chart-price")?.dataset;
          return d && Math.abs(Number(d.xMin) - lo) < 1 && Math.abs(Number(d.xMax) - hi) < 1;
        },
        [lo, hi],
      );
    assert.deepEqual(await bounds(), [first, last], "the whole history at first");
    const thinned = a.metadata.time_series_rows > a.time_series.dates.length;
    for (const [label, years] of [["5Y", 5], ["1Y", 1]]) {
      await p.click(`#price button[data-range="${label}"]`);
      assert.equal(await p.getAttribute(`#price button[data-range="${label}"]`, "aria-pressed"), "true");
      await settles(last - years * 365.25 * 86400, last);
    }
    // A year of a thinned history: its own rows, every one of them.
    if (thinned) {
      await p.locator("#chart-price[data-detail=window][data-loading='0']").waitFor();
      const full = await (await p.request.get(`/web/api/analysis/${encodeURIComponent(a.ticker)}`)).json();
      const from = new Date((last - 365.25 * 86400) * 1000).toISOString().slice(0, 10);
      const year = full.time_series.dates.filter((d) => d >= from).length;
      assert.equal(Number(await chart.getAttribute("data-rows")), year, "every row of the year");
      assert.match(await p.locator("#price-zoom-note").innerText(), new RegExp(`${year} daily rows from ${from}`));
    }
    // The log scale keeps the range chosen and says so.
    await p.check("#price-log");
    await p.waitForFunction(() => document.querySelector("#chart-price")?.dataset.scale === "log");
    assert.match(await chart.getAttribute("aria-label"), /log scale/);
    await settles(last - 365.25 * 86400, last);
    await p.click('#price button[data-range="Max"]');
    await settles(first, last);
    assert.equal(await p.locator("#price-reset").count(), 0, "no reset at the whole range");
    // A drag zooms; Reset zoom shows it all again.
    const box = await chart.locator(".u-over").boundingBox();
    await p.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
    await p.mouse.down();
    await p.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2, { steps: 5 });
    await p.mouse.up();
    await p.locator("#price-reset").waitFor();
    const [zlo, zhi] = await bounds();
    assert.ok(zlo > first && zhi < last, "zoomed in");
    if (thinned) await p.locator("#chart-price[data-detail=window][data-loading='0']").waitFor();
    await p.locator("#price").scrollIntoViewIfNeeded();
    await shot(p, "asset-price-zoomed");
    await p.click("#price-reset");
    await settles(first, last);
    await p.locator("#chart-price[data-detail=all]").waitFor();
    await p.check("#price-log");
    await p.locator("#price").scrollIntoViewIfNeeded();
    await shot(p, "asset-price-log");
    await axe(p, "asset (price tools)");
    await c.close();
  });

  test("the asset page at 1280 px: glossary links, axe, screenshot", async () => {
    const { c, p } = await premiumPage("desktop");
    const { v } = await openAsset(p);
    // The grade and every metric of the verdict link to the glossary.
    const helps = await p.$$eval("#verdict a.help", (as) => as.map((a) => a.getAttribute("href")));
    assert.ok(helps.includes("/glossary#grade"), helps.join(","));
    assert.ok(helps.length >= 6, `${helps.length} glossary links in the verdict`);
    // The price with its date, source and currency.
    const dp = p.locator("#verdict-price .dated-price");
    assert.equal(await dp.getAttribute("data-date"), v.metadata.last_price_date);
    assert.equal(await dp.getAttribute("data-source"), v.metadata.data_source);
    assert.equal((await dp.locator(".dp-currency").innerText()).trim(), "USD");
    const old = Date.now() - Date.parse(`${v.metadata.last_price_date}T00:00:00Z`) > 7 * 86_400_000;
    assert.equal(await dp.locator(".mark-stale").count(), old ? 1 : 0, `a close of ${v.metadata.last_price_date} is marked old only if over a week old`);
    await p.locator("#chart-fan canvas").waitFor();
    await p.waitForTimeout(200);
    await shot(p, "asset", true);
    await axe(p, "asset (1280 px)");
    // A synthetic history is marked where the price is.
    const btc = await openAsset(p, "/assets/BTC-USD");
    assert.equal(btc.v.metadata.data_source, "synthetic");
    await p.locator("#verdict-price .mark-synthetic").waitFor();
    assert.equal(await p.locator("#verdict-price time").innerText(), btc.v.metadata.last_price_date);
    await c.close();
  });

  kit.closingChecks();
});
