// The backtest page's tabs (issue 29): Result, Sweep, Walk-forward and
// Monte Carlo share the backtest form; each keeps its parameters in the URL
// (a copied URL reproduces the view), the tabs work from the keyboard, a
// refused field shows the server's sentence by its input, and no tab
// scrolls sideways on a phone. Real server, real Chromium: see
// test/harness.mjs. Small universes and few runs keep it quick.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { PREMIUM } from "./harness.mjs";
import { Suite, DESKTOP, PHONE, REAL_TRIO, ink, counting, phoneLayout } from "./kit.mjs";

let env;
const kit = new Suite("research", { timeout: 20_000 });
const { watch, newContext, axe, shot } = kit;
let ctx; // the Premium user's desktop context
let page;

const RUN_TIMEOUT = 120_000;

/** The selected tab's id and the tab parameter of the URL. */
async function selected(p) {
  const ids = await p.$$eval("[role=tab][aria-selected=true]", (els) => els.map((e) => e.id));
  assert.equal(ids.length, 1, `one selected tab: ${ids}`);
  return { id: ids[0], tab: new URL(p.url()).searchParams.get("tab"), focused: await p.evaluate(() => document.activeElement?.id) };
}

/** The backtest form filled with the three real tickers. */
async function trio(p) {
  await p.locator("#b-strategy option[value=topn]").waitFor({ state: "attached" });
  await p.selectOption("#b-universe", "tickers");
  await p.fill("#b-tickers", REAL_TRIO.join(", "));
}

// Run URLs found by one test and opened by the phone test.
const urls = {};

describe("the backtest page's tabs", { timeout: 600_000 }, () => {
  before(async () => {
    ({ env, ctx, page } = await kit.startSignedIn());
  });

  after(() => kit.stop());

  test("tabs: a tablist whose arrows, Home and End move the selection, kept in the URL", async () => {
    await page.goto("/backtest");
    await page.locator("#b-strategy option[value=topn]").waitFor({ state: "attached" });
    const tabs = await page.$$eval("[role=tablist] [role=tab]", (els) => els.map((e) => [e.id, e.textContent, e.getAttribute("aria-controls"), e.tabIndex]));
    assert.deepEqual(
      tabs.map((t) => t[1]),
      ["Result", "Sweep", "Walk-forward", "Monte Carlo"],
    );
    assert.deepEqual(
      tabs.map((t) => t[3]),
      [0, -1, -1, -1],
      "one tab stop: the selected tab",
    );
    assert.equal(await page.getAttribute("[role=tabpanel]", "aria-labelledby"), "tab-result");
    assert.equal(await page.getAttribute("[role=tabpanel]", "id"), tabs[0][2]);
    const s0 = await selected(page);
    assert.deepEqual([s0.id, s0.tab], ["tab-result", null]);
    await page.focus("#tab-result");
    const steps = [
      ["ArrowRight", "sweep"],
      ["ArrowRight", "walk-forward"],
      ["ArrowRight", "monte-carlo"],
      ["ArrowRight", null], // wraps to Result, which the URL leaves out
      ["ArrowLeft", "monte-carlo"],
      ["Home", null],
      ["End", "monte-carlo"],
      ["ArrowLeft", "walk-forward"],
    ];
    for (const [key, tab] of steps) {
      await page.keyboard.press(key);
      const s = await selected(page);
      const id = `tab-${tab ?? "result"}`;
      assert.deepEqual(s, { id, tab, focused: id }, `after ${key}`);
      assert.equal(await page.getAttribute("[role=tabpanel]", "aria-labelledby"), id);
    }
    // Each tab shows its own fields under the shared form.
    await page.locator("#b-train_years").waitFor();
    assert.equal(await page.locator("#sweep-fields").count(), 1);
    await page.click("#tab-monte-carlo");
    assert.equal((await selected(page)).tab, "monte-carlo");
    assert.equal(await page.inputValue("#b-runs"), "1000");
    assert.equal(await page.locator("#sweep-fields").count(), 0);
    assert.match(await page.locator("#bt-cost").innerText(), /10 quota units/);
    await page.click("#tab-sweep");
    assert.match(await page.locator("#bt-cost").innerText(), /^4 combinations · 5 quota units/);
    // The URL opens the tab it names, without running anything.
    const calls = await counting(page, (r) => new URL(r.url()).pathname === "/web/api/backtest/monte-carlo" && r.method() === "POST", async () => {
      await page.goto("/backtest?tab=monte-carlo&universe=category&category=Indices");
      await page.locator("#b-runs").waitFor();
      await page.waitForTimeout(300);
    });
    assert.equal(calls, 0, "a tab without its parameters does not run");
    assert.equal((await selected(page)).id, "tab-monte-carlo");
    assert.equal(await page.inputValue("#b-category"), "Indices");
    await axe(page, "backtest tabs");
  });

  test("a long run shows its progress and Cancel frees the server at once", async () => {
    await page.goto("/backtest?tab=monte-carlo");
    await page.locator("#b-strategy option[value=topn]").waitFor({ state: "attached" });
    // Every asset, daily, from 1900, with an uncached decay, then 5,000
    // paths of its returns: seconds of work.
    await page.fill("#b-runs", "5000");
    await page.selectOption("#b-universe", "all");
    await page.selectOption("#b-rebalance", "daily");
    await page.fill("#b-start_date", "1900-01-01");
    await page.locator("details.advanced summary").click();
    await page.fill("#b-decay_factor", "0.833");
    const started = page.waitForRequest((r) => new URL(r.url()).pathname === "/web/api/backtest/monte-carlo" && r.method() === "POST");
    await page.click("form.bt-form button[type=submit]");
    const id = (await started).headers()["progress-id"];
    assert.match(id, /^run-[a-z0-9]+-\d+$/, "the run names its progress");
    await page.locator("#run-progress").waitFor();
    // The server's phases, in words, with a bar.
    await page.waitForFunction(() => /assets|day|Waiting|Simulating/.test(document.querySelector("#run-progress-said")?.textContent ?? ""), null, { timeout: RUN_TIMEOUT });
    // A picture of the bar (fast: the run lasts a few seconds), then Cancel.
    // A clip of the page where the bar is, not the element's own picture:
    // that waits for the element to stop changing, and a moving bar may
    // not stop before the run ends.
    const bar = await page.locator("#run-progress").boundingBox();
    assert.ok(bar, "the progress bar is on the page");
    await shot(page, "backtest-progress", { clip: bar });
    await page.click("#run-cancel", { timeout: 5_000 });
    await page.locator("#bt-error", { hasText: "Cancelled: the server stopped the run and freed its slot." }).waitFor();
    assert.equal(await page.locator("#run-progress").count(), 0);
    await axe(page, "backtest (cancelled)");
    // The server forgot it, and the account's one backtest slot is free again.
    await page.waitForFunction(async (id) => (await fetch(`/web/api/progress/${id}`)).status === 404, id, { timeout: 10_000 });
    await trio(page);
    await page.selectOption("#b-rebalance", "monthly");
    await page.fill("#b-start_date", "");
    await page.fill("#b-decay_factor", "0.95");
    await page.fill("#b-runs", "200");
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#chart-mc-fan canvas").waitFor({ timeout: RUN_TIMEOUT });
  });

  test("Monte Carlo: runs, draws the fan and the spreads; the same URL gives the same numbers", async () => {
    await page.goto("/backtest?tab=monte-carlo");
    await trio(page);
    await page.fill("#b-runs", "200");
    await page.fill("#b-block_days", "10");
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#chart-mc-fan canvas").waitFor({ timeout: RUN_TIMEOUT });
    assert.ok((await ink(page, "chart-mc-fan")) > 150, "the fan is drawn");
    assert.deepEqual(await page.$$eval("#mc-spread-table tbody tr th", (ths) => ths.map((t) => t.textContent)), ["CAGR", "Max drawdown", "Final equity"]);
    const spreads = await page.locator("#mc-spread-table tbody").innerText();
    assert.match(spreads, /%/);
    const loss = await page.locator("#mc-loss").innerText();
    assert.match(loss, /(In \d+(\.\d)? % of 200 paths the equity ended below the initial capital|None of the 200 paths lost money|All 200 paths lost money)\./);
    assert.match(await page.locator("#mc-deep").innerText(), /200 paths/);
    const explain = (await page.locator("#mc-explain").innerText()).replace(/\s+/g, " ");
    assert.match(explain, /200 paths of [\d,]+ days, each drawn from the run's own [\d,]+ daily returns by a stationary block bootstrap/);
    assert.match(explain, /blocks of consecutive days average 10 days and are drawn with replacement — a new sequence of the run's returns, not a reordering of them \(seed 1: the same seed gives the same numbers\)/);
    const url = new URL(page.url());
    for (const [k, v] of [
      ["tab", "monte-carlo"],
      ["runs", "200"],
      ["block_days", "10"],
      ["seed", "1"],
      ["tickers", REAL_TRIO.join(", ")],
      ["top_n", "3"],
    ])
      assert.equal(url.searchParams.get(k), v, `the URL carries ${k}`);
    for (const k of ["start_date", "end_date", "rebalance", "strategy"]) assert.ok(url.searchParams.get(k), `the URL carries ${k}`);
    urls["monte-carlo"] = url.pathname + url.search;
    await page.waitForTimeout(150);
    await shot(page, "backtest-monte-carlo", true);
    await axe(page, "Monte Carlo");
    // The copied URL, opened elsewhere, runs the same simulation.
    const other = await ctx.newPage();
    watch(other, "shared");
    await other.goto(urls["monte-carlo"]);
    await other.locator("#mc-spread-table").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal((await selected(other)).id, "tab-monte-carlo");
    assert.equal(await other.inputValue("#b-runs"), "200");
    assert.equal(await other.inputValue("#b-tickers"), REAL_TRIO.join(", "));
    assert.equal(await other.locator("#mc-spread-table tbody").innerText(), spreads, "same seed, same numbers");
    assert.equal(await other.locator("#mc-loss").innerText(), loss);
    await other.close();
  });

  test("Monte Carlo: a bad runs shows the server's sentence by its field", async () => {
    await page.goto("/backtest?tab=monte-carlo");
    await trio(page);
    for (const bad of ["0", "99999"]) {
      await page.fill("#b-runs", bad);
      await page.click("form.bt-form button[type=submit]");
      // The second value's sentence replaces the first's: wait for its URL.
      await page.waitForURL((u) => u.searchParams.get("runs") === bad, { timeout: RUN_TIMEOUT });
      const err = page.locator("#b-runs-err");
      await err.waitFor({ timeout: RUN_TIMEOUT });
      assert.match(await err.innerText(), /runs/);
      assert.equal(await page.getAttribute("#b-runs", "aria-invalid"), "true");
      assert.equal(await page.getAttribute("#b-runs", "aria-describedby"), "b-runs-err");
      assert.equal(await page.locator("#bt-error").count(), 0, "no general error: the sentence sits by the field");
      assert.equal(new URL(page.url()).searchParams.get("runs"), bad, "the URL keeps what was asked");
    }
    await shot(page, "backtest-monte-carlo-error");
    await axe(page, "Monte Carlo (error)");
    await page.fill("#b-runs", "50");
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#mc-spread-table").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal(await page.locator("#b-runs-err").count(), 0);
  });

  test("Result: the run's tables download as the server's CSV and its tear sheet as one HTML file that opens offline", async () => {
    await page.goto("/backtest");
    await trio(page);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#downloads-title").waitFor({ timeout: RUN_TIMEOUT });
    const usage = () => page.evaluate(async () => (await fetch("/web/api/usage")).json());
    const before = await usage();
    const get = async (label) => {
      const [dl] = await Promise.all([
        page.waitForEvent("download", { timeout: RUN_TIMEOUT }),
        page.getByRole("button", { name: label }).click(),
      ]);
      return { name: dl.suggestedFilename(), text: readFileSync(await dl.path(), "utf8") };
    };
    const equity = await get("Equity (CSV)");
    assert.equal(equity.name, "backtest-equity.csv");
    assert.match(equity.text.split("\n")[0], /^date,equity,equal_weight_buy_hold,equal_weight_rebalanced/);
    assert.ok(equity.text.split("\n").length > 500, "a row per date");
    const trades = await get("Trades (CSV)");
    assert.equal(trades.text.split("\n")[0], "date,ticker,side,qty,price,cost,realised_pnl");
    const sheet = await get("Tear sheet (HTML)");
    assert.equal(sheet.name, "backtest-tear-sheet.html");
    assert.doesNotMatch(sheet.text, /<script|https?:\/\//);
    assert.match(await page.locator("#download-status").innerText(), /Downloaded backtest-tear-sheet\.html/);
    // The downloads were answered from the run: nothing more was spent, and
    // the account menu's meter shows what the run cost, by route.
    const after = await usage();
    assert.equal(after.day.used, before.day.used, "downloads are free");
    await page.locator(".usage summary").click();
    // Opening asks again: the figure becomes the current one.
    await page.locator(".usage-figure", { hasText: new RegExp(`^${after.day.used.toLocaleString("en-US")}/`) }).waitFor();
    await page.locator(".usage-routes").waitFor();
    assert.match(await page.locator(".usage-routes").innerText(), /POST \/api\/backtest \(web app\)/);
    const panel = await page.locator(".usage-panel").boundingBox();
    assert.ok(panel.x >= 0 && panel.x + panel.width <= DESKTOP.width, `the panel is on screen (${JSON.stringify(panel)})`);
    await shot(page, "account-quota-meter");
    await axe(page, "quota meter");
    await page.locator(".usage summary").click();
    // Offline, it still draws every chart.
    const offline = await env.browser.newContext({ viewport: DESKTOP, offline: true });
    const p = await offline.newPage();
    await p.setContent(sheet.text);
    assert.ok((await p.locator("svg").count()) >= 4, "equity, drawdown, volatility and beta charts");
    assert.ok((await p.locator("table").count()) >= 2, "monthly returns and metrics");
    await axe(p, "tear sheet");
    await shot(p, "backtest-tear-sheet", true);
    await offline.close();
  });

  test("Sweep: a 2×2 sweep of top_n × rebalance maps 4 cells; a cell opens that backtest in the Result tab", async () => {
    await page.goto("/backtest?tab=sweep");
    await trio(page);
    assert.equal(await page.inputValue("#sw-param-0"), "top_n");
    assert.equal(await page.inputValue("#sw-param-1"), "rebalance");
    await page.fill("#sw-values-0", "1, 2");
    await page.fill("#sw-values-1", "weekly, monthly");
    assert.equal(await page.isDisabled("#b-top_n"), true, "a swept field is off in the base form");
    assert.equal(await page.isDisabled("#b-rebalance"), true);
    assert.match(await page.locator("#bt-cost").innerText(), /^4 combinations · 5 quota units/);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#sweep-heatmap").waitFor({ timeout: RUN_TIMEOUT });
    const cells = page.locator("#sweep-heatmap td.hm-cell a");
    assert.equal(await cells.count(), 4);
    assert.deepEqual(await page.$$eval("#sweep-heatmap thead th", (ths) => ths.map((t) => t.textContent)), ["Rebalance", "Positions (top N)", "weekly", "monthly"]);
    assert.deepEqual(await page.$$eval("#sweep-heatmap tbody th", (ths) => ths.map((t) => t.textContent)), ["1", "2"]);
    assert.equal(await page.locator("#sweep-heatmap td.hm-best").count(), 1, "the best cell is marked");
    assert.equal(await page.locator("#sweep-table tbody tr").count(), 4);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get("tab"), "sweep");
    assert.equal(url.searchParams.get("sweep_top_n"), "1,2");
    assert.equal(url.searchParams.get("sweep_rebalance"), "weekly,monthly");
    assert.equal(url.searchParams.get("rank_by"), "sharpe_ratio");
    assert.equal(url.searchParams.get("top_n"), null, "a swept field is not a base field");
    urls.sweep = url.pathname + url.search;
    // The table sorts by a clicked column, in the URL too.
    await page.click("#sweep-table button.sort-btn[data-col=cagr]");
    await page.waitForFunction(() => document.querySelector("#sweep-table th[aria-sort=descending] .sort-btn")?.dataset.col === "cagr");
    assert.equal(new URL(page.url()).searchParams.get("sort_by"), "cagr");
    const cagrs = await page.$$eval("#sweep-table tbody tr", (trs) => trs.map((tr) => tr.children[3].textContent));
    const asNum = (s) => (s === "—" ? -Infinity : Number(s.replace(/[ %,]/g, "")));
    assert.deepEqual(cagrs.map(asNum), [...cagrs.map(asNum)].sort((a, b) => b - a), "descending by CAGR");
    await page.waitForTimeout(150);
    await shot(page, "backtest-sweep", true);
    await axe(page, "Sweep");
    // The first cell: top_n 1, weekly. Its total return is the table's.
    const first = page.locator("#sweep-heatmap tbody tr:first-child td:first-of-type a");
    assert.match(await first.textContent(), /Positions \(top N\) 1, Rebalance weekly/);
    const expected = await page.$$eval("#sweep-table tbody tr", (trs) => {
      const row = trs.find((tr) => tr.children[0].textContent === "1" && tr.children[1].textContent === "weekly");
      return row.children[2].textContent;
    });
    await first.click();
    await page.waitForURL((u) => u.searchParams.get("top_n") === "1" && u.searchParams.get("rebalance") === "weekly" && !u.searchParams.has("sweep_top_n"));
    await page.locator("#bt-total-return").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal((await selected(page)).id, "tab-result");
    assert.ok([null, "result"].includes(new URL(page.url()).searchParams.get("tab")));
    assert.equal(await page.inputValue("#b-top_n"), "1");
    assert.equal(await page.inputValue("#b-rebalance"), "weekly");
    assert.equal(await page.inputValue("#b-tickers"), REAL_TRIO.join(", "));
    assert.equal(await page.locator("#bt-total-return").innerText(), expected, "the combination's own backtest gives the sweep's figure");
    urls.result = new URL(page.url()).pathname + new URL(page.url()).search;
    // Back: the sweep again, from memory (no second sweep).
    const calls = await counting(page, (r) => new URL(r.url()).pathname === "/web/api/backtest/sweep" && r.method() === "POST", async () => {
      await page.goBack();
      await page.locator("#sweep-heatmap").waitFor();
      await page.waitForTimeout(300);
    });
    assert.equal(calls, 0);
    assert.equal((await selected(page)).id, "tab-sweep");
    assert.equal(await page.isDisabled("#b-top_n"), true);
  });

  test("Sweep: the server's refusal of a sweep is a sentence by the parameter it names", async () => {
    await page.goto("/backtest?tab=sweep");
    await trio(page);
    await page.fill("#sw-values-0", "1, 1");
    await page.click("form.bt-form button[type=submit]");
    const err = page.locator("#sweep-err");
    await err.waitFor({ timeout: RUN_TIMEOUT });
    assert.match(await err.innerText(), /top_n/);
    assert.equal(await page.getAttribute("#sw-values-0", "aria-invalid"), "true");
    assert.equal(await page.locator("#bt-error").count(), 0);
  });

  test("Sweep: one parameter is a single row; a third one gets a selector of its value, kept in the URL", async () => {
    await page.goto("/backtest?tab=sweep");
    await trio(page);
    await page.fill("#sw-values-0", "1, 2, 3");
    await page.getByRole("button", { name: "Remove rebalance" }).click();
    assert.match(await page.locator("#bt-cost").innerText(), /^3 combinations · 5 quota units/);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#sweep-heatmap").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal(await page.locator("#sweep-heatmap tbody tr").count(), 1, "one axis: one row");
    assert.equal(await page.locator("#sweep-heatmap td.hm-cell a").count(), 3);
    assert.equal(await page.locator("#sweep-slice").count(), 0);
    // Three axes: top_n × return_period, one rebalance at a time.
    await page.fill("#sw-values-0", "1, 2");
    await page.click("#sweep-add");
    assert.equal(await page.inputValue("#sw-param-1"), "return_period");
    await page.fill("#sw-values-1", "30, 90");
    await page.click("#sweep-add");
    await page.selectOption("#sw-param-2", "rebalance");
    await page.fill("#sw-values-2", "weekly, monthly");
    assert.equal(await page.isDisabled("#sweep-add"), true, "at most three parameters");
    assert.match(await page.locator("#bt-cost").innerText(), /^8 combinations · 8 quota units/);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#sweep-slice").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal(await page.locator("#sweep-table tbody tr").count(), 8);
    assert.deepEqual(await page.$$eval("#sweep-slice option", (os) => os.map((o) => o.value)), ["weekly", "monthly"]);
    const scores = async () => page.$$eval("#sweep-heatmap td.hm-cell", (tds) => tds.map((td) => td.dataset.score));
    const weekly = await scores();
    const bestWeekly = await page.locator("#sweep-heatmap td.hm-best").count();
    assert.equal(weekly.length, 4);
    await page.selectOption("#sweep-slice", "monthly");
    await page.waitForURL((u) => u.searchParams.get("slice") === "monthly");
    const monthly = await scores();
    assert.notDeepEqual(monthly, weekly, "the map shows the chosen rebalance");
    assert.equal(bestWeekly + (await page.locator("#sweep-heatmap td.hm-best").count()), 1, "one best cell over both slices");
    const url = new URL(page.url());
    assert.deepEqual(
      [...url.searchParams.keys()].filter((k) => k.startsWith("sweep_")),
      ["sweep_top_n", "sweep_return_period", "sweep_rebalance"],
      "the axes' order is in the URL",
    );
    // The URL reopens the same slice.
    await page.goto(url.pathname + url.search);
    await page.locator("#sweep-slice").waitFor({ timeout: RUN_TIMEOUT });
    assert.equal(await page.inputValue("#sweep-slice"), "monthly");
    assert.deepEqual(await scores(), monthly);
  });

  test("Walk-forward: a short window shows the splits, the stitched curve and the efficiency", async () => {
    await page.goto("/backtest?tab=walk-forward");
    await trio(page);
    await page.fill("#b-start_date", "2008-01-01");
    await page.fill("#b-end_date", "2012-12-31");
    await page.fill("#b-train_years", "2");
    await page.fill("#b-test_years", "1");
    await page.fill("#sw-values-0", "1, 2");
    await page.getByRole("button", { name: "Remove rebalance" }).click();
    assert.match(await page.locator("#bt-cost").innerText(), /^2 combinations · 5 quota units/);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#wf-splits-table").waitFor({ timeout: RUN_TIMEOUT });
    const splits = await page.locator("#wf-splits-table tbody tr").count();
    assert.ok(splits >= 1, `${splits} splits`);
    const first = await page.locator("#wf-splits-table tbody tr").first().innerText();
    assert.match(first, /\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}/);
    assert.match(first, /Positions \(top N\) [12]/);
    await page.locator("#chart-wf-equity canvas").waitFor();
    assert.ok((await ink(page, "chart-wf-equity")) > 100, "the stitched curve is drawn");
    assert.match(await page.locator("#wf-meaning").innerText(), /(Near 1|Below 1|Far below 1|not defined)/);
    assert.match(await page.locator("#wf-headline").innerText(), /Out of sample/i);
    const url = new URL(page.url());
    for (const [k, v] of [
      ["tab", "walk-forward"],
      ["train_years", "2"],
      ["test_years", "1"],
      ["mode", "rolling"],
      ["sweep_top_n", "1,2"],
      ["start_date", "2008-01-01"],
    ])
      assert.equal(url.searchParams.get(k), v, `the URL carries ${k}`);
    assert.equal(url.searchParams.get("sweep_rebalance"), null);
    urls["walk-forward"] = url.pathname + url.search;
    await page.waitForTimeout(150);
    await shot(page, "backtest-walk-forward", true);
    await axe(page, "Walk-forward");
  });

  test("dark theme: the sweep's map keeps its contrast", async () => {
    assert.ok(urls.sweep, "the sweep test found a run");
    const { c, p } = await kit.signedIn(PREMIUM, "dark", { colorScheme: "dark" });
    await p.goto(urls.sweep);
    await p.locator("#sweep-heatmap").waitFor({ timeout: RUN_TIMEOUT });
    await p.evaluate(() => document.querySelector("#sweep-map").scrollIntoView());
    await shot(p, "backtest-sweep-dark");
    await axe(p, "Sweep (dark)");
    await c.close();
  });

  test("phone (390×844): no tab scrolls sideways", async () => {
    const { c, p } = await kit.signedIn(PREMIUM, "phone", { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const views = [
      ["result", urls.result, "#bt-total-return", ["#chart-equity canvas"]],
      ["monte-carlo", urls["monte-carlo"], "#mc-spread-table", ["#chart-mc-fan canvas", "#mc-loss"]],
      ["sweep", urls.sweep, "#sweep-heatmap", ["#sweep-heatmap tbody td a"]],
      ["walk-forward", urls["walk-forward"], "#wf-splits-table", ["#chart-wf-equity canvas", "#wf-efficiency"]],
    ];
    const missing = [];
    for (const [tab, url, ready, sels] of views) {
      if (!url) {
        missing.push(tab);
        continue;
      }
      await p.goto(url);
      await p.locator(ready).waitFor({ timeout: RUN_TIMEOUT });
      const l = await phoneLayout(p, ["#tab-result", "#tab-monte-carlo", "form.bt-form button[type=submit]", ...sels]);
      assert.ok(l.scrollWidth <= l.vw, `${tab} scrolls sideways: ${l.scrollWidth} > ${l.vw}`);
      assert.deepEqual(l.out, [], tab);
      await p.evaluate((s) => document.querySelector(s).scrollIntoView(), ready);
      await shot(p, `backtest-${tab}-phone`);
      await axe(p, `${tab} (phone)`);
    }
    // Each tab without a run, too (the forms).
    for (const tab of ["sweep", "walk-forward", "monte-carlo"]) {
      await p.goto(`/backtest?tab=${tab}`);
      await p.locator("#b-strategy option[value=topn]").waitFor({ state: "attached" });
      const l = await phoneLayout(p, ["#tab-walk-forward", "#tab-monte-carlo", "form.bt-form button[type=submit]"]);
      assert.ok(l.scrollWidth <= l.vw, `${tab} form scrolls sideways: ${l.scrollWidth} > ${l.vw}`);
      assert.deepEqual(l.out, [], tab);
    }
    await c.close();
    assert.deepEqual(missing, [], "every tab's run was found by the tests before");
  });

  kit.closingChecks();
});
