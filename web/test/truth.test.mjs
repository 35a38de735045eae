// The watchlist, ranking and backtest pages tell the truth (issue 24): every
// price with its date and source, old and synthetic ones marked; sorting,
// filtering and paging of the whole ranking by the server; backtest defaults
// that fit the universe and shared links that reproduce the result; no
// sideways scroll on a phone. See test/harness.mjs for the fixture.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { PREMIUM, FREE } from "./harness.mjs";
import { Suite, PHONE, REAL_TRIO, phoneLayout } from "./kit.mjs";

let env;
const kit = new Suite("truth", { timeout: 20_000 });
const { watch, newContext, axe, shot } = kit;
let ctx; // the Premium user's desktop context
let page;

/** GET a data route in the page (with its session cookie); the parsed JSON. */
async function getJson(p, url) {
  return p.evaluate(async (u) => {
    const r = await fetch(u, { headers: { Accept: "application/json" } });
    return { status: r.status, body: await r.json() };
  }, url);
}

async function putWatchlist(p, tickers) {
  const r = await p.request.put("/web/watchlist", { data: { tickers }, headers: { Origin: env.base } });
  assert.equal(r.status(), 200, await r.text());
}

/** Calendar days from `date` (YYYY-MM-DD) to today, UTC. */
function ageDays(date) {
  const today = new Date().toISOString().slice(0, 10);
  return Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${date}T00:00:00Z`)) / 86_400_000);
}

describe("the pages tell the truth", { timeout: 300_000 }, () => {
  before(async () => {
    ({ env, ctx, page } = await kit.startSignedIn());
  });

  after(() => kit.stop());

  test("watchlist: each price shows its date and source; old and synthetic ones are marked", async () => {
    // AAPL's real history ends in 2013; TSLA and BTC-USD are synthetic.
    await putWatchlist(page, ["AAPL", "TSLA", "BTC-USD"]);
    await page.goto("/");
    await page.locator("#watchlist-table tbody tr").first().waitFor();
    await page.waitForFunction(() => !document.body.innerText.includes("Loading verdict"));
    const rows = await page.$$eval("#watchlist-table tbody tr", (trs) =>
      trs.map((tr) => {
        const dp = tr.querySelector(".dated-price");
        return {
          ticker: tr.dataset.ticker,
          date: dp?.dataset.date ?? null,
          source: dp?.dataset.source ?? null,
          shown: dp?.innerText ?? "",
          synthetic: !!dp?.querySelector(".mark-synthetic"),
          stale: !!dp?.querySelector(".mark-stale"),
          action: !!tr.querySelector("button[aria-label^=Remove]") && !!tr.querySelector("a[aria-label^=Open]"),
        };
      }),
    );
    assert.deepEqual(rows.map((r) => r.ticker), ["AAPL", "TSLA", "BTC-USD"]);
    for (const r of rows) {
      assert.match(r.date ?? "", /^\d{4}-\d{2}-\d{2}$/, `${r.ticker} shows the date of its price`);
      assert.ok(["real", "ingested", "synthetic"].includes(r.source), `${r.ticker} shows its data source (${r.source})`);
      assert.ok(r.shown.includes(r.date) && r.shown.includes(r.source), `${r.ticker}: "${r.shown}" shows date and source`);
      // The date is the verdict's, as a calendar date (no time-zone shift).
      const v = await getJson(page, `/web/api/analysis/${encodeURIComponent(r.ticker)}/verdict`);
      assert.equal(r.date, v.body.metadata.last_price_date, `${r.ticker}: the verdict's last price date`);
      assert.equal(r.source, v.body.metadata.data_source);
      assert.equal(r.synthetic, r.source === "synthetic", `${r.ticker} marked synthetic iff it is`);
      assert.equal(r.stale, ageDays(r.date) > 7, `${r.ticker} (${r.date}) marked old iff older than a week`);
      assert.ok(r.action, `${r.ticker} has Open and Remove`);
    }
    const aapl = rows.find((r) => r.ticker === "AAPL");
    assert.equal(aapl.source, "real");
    assert.ok(aapl.stale, "AAPL's 2013 price is marked old");
    assert.ok(rows.find((r) => r.ticker === "TSLA").synthetic, "TSLA is marked synthetic");
    // Two of three are synthetic: a banner says so; nothing claims "today's verdicts".
    assert.match(await page.locator("#watchlist-synthetic").innerText(), /Most of these prices are synthetic/);
    assert.doesNotMatch(await page.locator("main").innerText(), /today's verdicts/i);
    assert.ok((await page.locator("#watchlist-table th a.help[href='/glossary#grade']").count()) === 1, "the grade links to the glossary");
    await axe(page, "watchlist");
  });

  test("watchlist: a row's Remove takes the asset off the saved list", async () => {
    await putWatchlist(page, ["AAPL", "MSFT", "TSLA"]);
    await page.goto("/");
    await page.locator("#watchlist-table tbody tr[data-ticker=TSLA]").waitFor();
    await page.getByRole("button", { name: "Remove TSLA from the watchlist" }).click();
    await page.locator("#watchlist-table tbody tr[data-ticker=TSLA]").waitFor({ state: "detached" });
    const saved = await (await page.request.get("/web/watchlist")).json();
    assert.deepEqual(saved.tickers.map((t) => t.ticker), ["AAPL", "MSFT"]);
    // One synthetic of two is not "most": no banner.
    assert.equal(await page.locator("#watchlist-synthetic").count(), 0);
  });

  test("watchlist (Free): each row says in a sentence that verdicts need Premium, with a link to the plans", async () => {
    const { c, p } = await kit.signedIn(FREE, "free");
    await putWatchlist(p, ["AAPL", "BTC-USD"]);
    await p.goto("/");
    await p.locator("#watchlist-table tbody tr").first().waitFor();
    await p.waitForFunction(() => !document.body.innerText.includes("Loading verdict"));
    for (const t of ["AAPL", "BTC-USD"]) {
      const row = p.locator(`#watchlist-table tbody tr[data-ticker="${t}"]`);
      assert.match(await row.innerText(), /Verdicts need the Premium tier: see what Premium includes\./);
      assert.equal(await row.locator("a[href='/plans']").count(), 1);
    }
    await axe(p, "watchlist (free)");
    await c.close();
  });

  test("ranking: sorting by grade sorts the whole ranking (the server's best score first)", async () => {
    // Five rows a page: sorting those five locally would not find the best of all.
    await page.goto("/ranking?limit=5");
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    await page.click("button.sort-btn[data-col=score]");
    await page.waitForURL((u) => u.searchParams.get("sort_by") === "score" && u.searchParams.get("sort") === "desc");
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    const best = await getJson(page, "/web/api/ranking?sort_by=score&limit=1");
    const byMedian = await getJson(page, "/web/api/ranking?limit=5");
    assert.ok(!byMedian.body.ranked_assets.some((a) => a.ticker === best.body.ranked_assets[0]?.ticker), "the best score is not on the first page by median return (else this test proves nothing)");
    assert.equal(best.status, 200, JSON.stringify(best.body));
    const top = best.body.ranked_assets[0];
    const first = page.locator("#ranking-table tbody tr").first();
    assert.equal(await first.getAttribute("data-ticker"), top.ticker);
    assert.equal((await first.locator("td.c-rank").innerText()).trim(), "1");
    const scores = await page.$$eval("#ranking-table tbody tr .grade-score", (xs) => xs.map((x) => Number(x.textContent)));
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a), "descending by score");
    // Columns the server cannot sort by are not buttons.
    assert.equal(await page.locator("#ranking-table th button[data-col=rank]").count(), 0);
    assert.equal(await page.locator("#ranking-table th button[data-col=data_source]").count(), 0);
    // Each price carries its date, source and currency.
    const cell = first.locator("td.c-current_price .dated-price");
    assert.equal(await cell.getAttribute("data-date"), top.last_price_date);
    assert.equal(await cell.getAttribute("data-source"), top.data_source);
    if (top.currency) assert.match(await cell.innerText(), new RegExp(top.currency));
  });

  test("ranking: the filter asks the server ('microsoft' finds MSFT) and stays in the URL", async () => {
    // By ticker, the first five (digits sort first) never include MSFT, whatever the grades.
    await page.goto("/ranking?sort_by=ticker&sort=asc&limit=5");
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    assert.equal(await page.locator("#ranking-table tbody tr[data-ticker=MSFT]").count(), 0, "MSFT is not on the first page (else this test proves nothing)");
    await page.fill("#r-filter", "microsoft");
    await page.waitForURL((u) => u.searchParams.get("q") === "microsoft");
    await page.locator("#ranking-table[aria-busy=false] tbody tr[data-ticker=MSFT]").waitFor();
    const tickers = await page.$$eval("#ranking-table tbody tr", (trs) => trs.map((t) => t.dataset.ticker));
    assert.ok(tickers.includes("MSFT"), tickers.join(","));
    const api = await getJson(page, "/web/api/ranking?sort_by=ticker&sort=asc&limit=5&q=microsoft");
    assert.deepEqual(tickers, api.body.ranked_assets.map((a) => a.ticker), "the rows are the server's answer");
    assert.match(await page.locator("#ranking-count").innerText(), new RegExp(`of ${api.body.metadata.filtered_assets} assets`));
    // The URL restores the view.
    await page.goto("/ranking?sort_by=ticker&sort=asc&limit=5&q=microsoft");
    assert.equal(await page.inputValue("#r-filter"), "microsoft");
    await page.locator("#ranking-table tbody tr[data-ticker=MSFT]").waitFor();
  });

  test("ranking: the next page shows ranks 51 onwards, from the whole ranking", async () => {
    await page.goto("/ranking?sort_by=score");
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    const total = (await getJson(page, "/web/api/ranking?sort_by=score&limit=1")).body.metadata.filtered_assets;
    assert.ok(total > 50, `${total} graded assets`);
    await page.click("#ranking-next");
    await page.waitForURL((u) => u.searchParams.get("offset") === "50");
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    const ranks = await page.$$eval("#ranking-table tbody td.c-rank", (tds) => tds.map((t) => Number(t.textContent)));
    const last = Math.min(100, total);
    assert.deepEqual(ranks, Array.from({ length: last - 50 }, (_, i) => 51 + i));
    assert.match(await page.locator("#ranking-count").innerText(), new RegExp(`^51–${last} of ${total.toLocaleString("en-US")} assets`));
    const api = await getJson(page, "/web/api/ranking?sort_by=score&offset=50&limit=50");
    assert.deepEqual(
      await page.$$eval("#ranking-table tbody tr", (trs) => trs.map((t) => t.dataset.ticker)),
      api.body.ranked_assets.map((a) => a.ticker),
    );
    await page.click("#ranking-prev");
    await page.waitForURL((u) => !u.searchParams.has("offset"));
    await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    assert.equal((await page.locator("#ranking-table tbody td.c-rank").first().innerText()).trim(), "1");
  });

  test("ranking: an invalid category shows the server's message by its field; a synthetic-heavy view has a banner", async () => {
    await page.goto("/ranking?category=Nowhere");
    await page.locator("#ranking-error").waitFor();
    assert.match(await page.locator("#ranking-error").innerText(), /category/);
    assert.equal(await page.getAttribute("#r-category", "aria-invalid"), "true");
    for (const category of ["Crypto", "Indices"]) {
      await page.goto(`/ranking?category=${category}`);
      await page.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
      const s = (await getJson(page, `/web/api/ranking?category=${category}&limit=1`)).body.metadata.data_sources;
      const mostly = s.synthetic * 2 > s.real + s.ingested + s.synthetic;
      assert.equal(await page.locator("#ranking-synthetic").count(), mostly ? 1 : 0, `${category}: ${JSON.stringify(s)}`);
      if (category === "Crypto") assert.ok(mostly, "the demo's crypto prices are synthetic");
    }
    await axe(page, "ranking");
  });

  test("backtest: three tickers run with the defaults, and the shared link reproduces the result", async () => {
    const refused = [];
    const totals = [];
    const onResponse = async (r) => {
      if (!r.url().includes("/web/api/backtest")) return;
      if (r.status() === 400) refused.push(await r.text());
      if (r.status() === 200) totals.push((await r.json()).metrics.total_return);
    };
    page.on("response", onResponse);
    await page.goto("/backtest");
    await page.locator("#b-strategy option[value=longshort]").waitFor({ state: "attached" });
    await page.selectOption("#b-universe", "tickers");
    await page.fill("#b-tickers", REAL_TRIO.join(", "));
    assert.equal(await page.inputValue("#b-top_n"), "", "positions left to the default");
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#bt-total-return").waitFor({ timeout: 60_000 });
    assert.equal(await page.locator("#bt-error").count(), 0);
    const shown = await page.locator("#bt-total-return").innerText();
    const shared = new URL(page.url());
    assert.equal(shared.searchParams.get("top_n"), "3", "the positions used are in the URL");
    assert.equal(shared.searchParams.get("tickers"), REAL_TRIO.join(", "));
    for (const k of ["strategy", "rebalance", "start_date", "end_date", "initial_capital", "include_costs", "metric", "return_period", "num_segments", "decay_factor"]) {
      assert.ok(shared.searchParams.get(k), `the URL carries ${k}`);
    }
    assert.match(await page.locator("#bt-window").innerText(), /from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}/);
    assert.equal(await page.locator("#bt-synthetic").count(), 0, "real prices: no synthetic banner");
    // The trade table's prices carry their dates.
    const trade = page.locator("#trades tbody tr").first();
    assert.equal(await trade.locator(".dated-price").getAttribute("data-date"), (await trade.locator("td").first().innerText()).trim());
    // Each ticker links to its asset page; a buy realises nothing, a sell
    // shows its signed realised P&L; every fill shows its cost.
    const ticker = (await trade.locator("td").nth(1).innerText()).trim();
    assert.equal(await trade.locator("td a").first().getAttribute("href"), `/assets/${encodeURIComponent(ticker)}`);
    const rows = await page.locator("#trades tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.innerText.trim())),
    );
    assert.ok(rows.some((r) => r[2] === "SELL"), "the first page has a sell");
    for (const r of rows) {
      assert.match(r[5], /^\d[\d,]*\.\d\d$/, "a cost");
      if (r[2] === "BUY") assert.equal(r[6], "", "a buy realises nothing");
      else assert.match(r[6], /^([+−]\d[\d,]*|0)\.\d\d$/, "a sell's realised P&L");
    }
    // Metrics link to the glossary.
    for (const id of ["total-return", "cagr", "sharpe", "sortino", "max-drawdown"]) {
      assert.equal(await page.locator(`#metrics a.help[href='/glossary#${id}']`).count(), 1, id);
    }
    // Opening the shared link in another tab runs the same backtest without a click.
    const other = await ctx.newPage();
    watch(other, "shared");
    other.on("response", onResponse);
    await other.goto(shared.pathname + shared.search);
    await other.locator("#bt-total-return").waitFor({ timeout: 60_000 });
    assert.equal(await other.locator("#bt-total-return").innerText(), shown);
    assert.equal(await other.inputValue("#b-top_n"), "3");
    assert.equal(await other.inputValue("#b-tickers"), REAL_TRIO.join(", "));
    assert.equal(totals.length, 2, "two runs");
    assert.equal(totals[0], totals[1], "the backtest is deterministic");
    assert.deepEqual(refused, [], "no run was refused");
    await axe(other, "backtest (shared link)");
    await other.close();
    page.off("response", onResponse);
  });

  test("backtest: a longshort over three tickers defaults to what fits (2·top_n ≤ 3)", async () => {
    await page.goto("/backtest");
    await page.locator("#b-strategy option[value=longshort]").waitFor({ state: "attached" });
    await page.selectOption("#b-strategy", "longshort");
    await page.selectOption("#b-universe", "tickers");
    await page.fill("#b-tickers", REAL_TRIO.join(","));
    assert.match((await page.getAttribute("#b-top_n", "placeholder")) ?? "", /^1 /);
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#bt-total-return").waitFor({ timeout: 60_000 });
    assert.equal(new URL(page.url()).searchParams.get("top_n"), "1");
  });

  test("backtest: a synthetic-heavy universe carries the banner", async () => {
    await page.goto("/backtest");
    await page.locator("#b-strategy option[value=topn]").waitFor({ state: "attached" });
    await page.selectOption("#b-category", "Crypto");
    await page.click("form.bt-form button[type=submit]");
    await page.locator("#bt-total-return").waitFor({ timeout: 60_000 });
    assert.equal(await page.locator("#bt-error").count(), 0, "the default positions fit the category");
    assert.match(await page.locator("#bt-synthetic").innerText(), /Most of these prices are synthetic: this result says nothing about real markets/);
    await axe(page, "backtest");
  });

  test("phone (390×844): no sideways scroll; ticker, grade, dated price and actions stay in view", async () => {
    const { c, p } = await kit.signedIn(PREMIUM, "phone", { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await putWatchlist(p, ["AAPL", "TSLA", "BTC-USD", "^GSPC"]);

    await p.goto("/");
    await p.locator("#watchlist-table tbody tr .grade").first().waitFor();
    await p.waitForFunction(() => !document.body.innerText.includes("Loading verdict"));
    let l = await phoneLayout(p, [
      "#watchlist-table tbody tr a.ticker",
      "#watchlist-table tbody tr .grade",
      "#watchlist-table tbody tr .dated-price time",
      "#watchlist-table tbody tr button[aria-label^=Remove]",
      "#watchlist-table tbody tr a[aria-label^=Open]",
    ]);
    assert.ok(l.scrollWidth <= l.vw, `watchlist scrolls sideways: ${l.scrollWidth} > ${l.vw}`);
    assert.deepEqual(l.out, []);
    await shot(p, "watchlist-phone");
    await axe(p, "watchlist (phone)");

    await p.goto("/ranking?sort_by=score");
    await p.locator("#ranking-table[aria-busy=false] tbody tr").first().waitFor();
    const sel = (col) => `#ranking-table tbody tr td.c-${col}`;
    l = await phoneLayout(p, [sel("rank"), `${sel("ticker")} a.ticker`, `${sel("score")} .grade`, `${sel("current_price")} .dp-value`, `${sel("current_price")} time`, "#r-filter", "#ranking-next"]);
    // Every row's key cells, not just the first.
    const rowsOut = await p.$$eval("#ranking-table tbody tr", (trs) => {
      const vw = document.documentElement.clientWidth;
      return trs.flatMap((tr) =>
        [".c-ticker a", ".c-score .grade", ".c-current_price .dated-price"]
          .map((s) => [s, tr.querySelector(s)?.getBoundingClientRect()])
          .filter(([, r]) => !r || r.left < 0 || r.right > vw + 0.5)
          .map(([s]) => `${tr.dataset.ticker} ${s}`),
      );
    });
    assert.ok(l.scrollWidth <= l.vw, `ranking scrolls sideways: ${l.scrollWidth} > ${l.vw}`);
    assert.deepEqual(l.out, []);
    assert.deepEqual(rowsOut, []);
    // The screenshot shows the table (the filters are above it).
    await p.evaluate(() => document.querySelector("#ranking-count").scrollIntoView());
    await shot(p, "ranking-phone");
    await axe(p, "ranking (phone)");

    await p.goto("/backtest?universe=category&category=Crypto");
    await p.locator("#bt-total-return").waitFor({ timeout: 60_000 });
    l = await phoneLayout(p, ["#b-strategy", "#b-category", "#b-top_n", "form.bt-form button[type=submit]", "#bt-synthetic", "#bt-total-return", "#chart-equity canvas", "#trades tbody tr .dp-value", "#trades tbody tr .dated-price time", "#trades tbody tr td:last-child"]);
    assert.ok(l.scrollWidth <= l.vw, `backtest scrolls sideways: ${l.scrollWidth} > ${l.vw}`);
    assert.deepEqual(l.out, []);
    // The screenshot shows the result (the form is above it).
    await p.evaluate(() => document.querySelector("#bt-synthetic").scrollIntoView());
    await shot(p, "backtest-phone");
    await axe(p, "backtest (phone)");
    await c.close();
  });

  kit.closingChecks();
});
