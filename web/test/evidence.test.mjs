// The evidence behind a grade, and how past grades turned out: the asset
// page shows the current bucket's independent episodes (the API's number),
// the thin-evidence line exactly when the API says thin, a grade history
// whose table is the API's by_grade; /methodology is reachable from the
// glossary; /track-record keeps its filters in the URL and shows the API's
// IC. See test/harness.mjs. Run alone:
//   npx vite build --outDir /tmp/dist-ev && WEB_DIST_PROXY=1 WEB_DIST_DIR=/tmp/dist-ev node --test test/evidence.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Suite, PHONE, EXPECTED_4XX_503, openAsset } from "./kit.mjs";
import { int, pct } from "./fmt.mjs";

let env;
const kit = new Suite("evidence", { timeout: 30_000, expected: EXPECTED_4XX_503 });
const { watch, axe, shot, premiumPage } = kit;

const phone = { viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

async function noSidewaysScroll(p, what) {
  const wide = await p.evaluate(() => ({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, view: window.innerWidth }));
  assert.ok(wide.doc <= wide.view && wide.body <= wide.view, `${what}: no sideways scroll ${JSON.stringify(wide)}`);
}

const isHistory = (r) => /\/web\/api\/track-record\/[^/?]+/.test(r.url());
const isUniverse = (r) => /\/web\/api\/track-record(\?|$)/.test(r.url());

describe("evidence, grade history, methodology, track record", { timeout: 600_000 }, () => {
  before(async () => {
    env = await kit.start();
  });

  after(() => kit.stop());

  test("^GSPC: the episodes shown are the API's, beside the bucket's figures and in the segment table", async () => {
    const { c, p } = await premiumPage("episodes");
    const { a, v } = await openAsset(p, "/assets/%5EGSPC");
    const ev = v.active_segment.evidence;
    assert.ok(ev, "the server sends the current bucket's evidence");
    assert.ok(ev.episodes > 0 && ev.episodes < v.active_segment.count, `episodes (${ev.episodes}) are fewer than days (${v.active_segment.count})`);
    const shown = p.locator("#verdict-episodes");
    assert.equal(Number(await shown.getAttribute("data-episodes")), ev.episodes);
    assert.equal((await shown.innerText()).replace(/\s+/g, " ").trim(), `${int(ev.episodes)} independent episodes (${int(v.active_segment.count)} days)`);
    // The interval of the median, the falls and the recoveries, as the API says.
    const ci = (await p.locator("#verdict-ci").innerText()).replace(/\s+/g, " ");
    assert.ok(ci.includes(pct(v.active_segment.static_median_return)), ci);
    assert.ok(ci.includes(`${pct(ev.median_return_ci[0])} to ${pct(ev.median_return_ci[1])}`), ci);
    assert.match(await p.locator("#verdict-fell").innerText(), new RegExp(`^${pct(ev.fell_further, 0)}`));
    assert.match((await p.locator("#verdict-recovery").innerText()).replace(/\s+/g, " "), new RegExp(`the ${int(ev.recovered)} that recovered; ${int(ev.unrecovered)} not yet`));
    // The bucket's return figures carry their episodes nearby.
    for (const label of ["Median return", "Expected return", "Win rate in bucket"]) {
      const dd = p.locator("#verdict .stats > div", { hasText: label }).locator("dd");
      assert.match(await dd.innerText(), new RegExp(`${int(ev.episodes)} independent episodes`), `${label} shows the episodes`);
    }
    // The segment table: one episodes cell per bucket, the API's.
    await p.locator("#segment-table tbody tr").first().waitFor();
    const rows = await p.$$eval("#segment-table tbody tr", (trs) =>
      trs.map((r) => ({ segment: Number(r.dataset.segment), episodes: r.querySelector(".episodes").textContent.trim(), ci: r.querySelector(".ci").textContent.trim() })),
    );
    assert.equal(rows.length, a.segments.length);
    for (const s of a.segments) {
      const row = rows.find((r) => r.segment === s.segment_idx);
      assert.equal(row.episodes, int(s.evidence.episodes), `bucket ${s.segment_idx}: episodes`);
      const want = s.evidence.median_return_ci ? `${pct(s.evidence.median_return_ci[0], 1)} to ${pct(s.evidence.median_return_ci[1], 1)}` : "—";
      assert.equal(row.ci, want, `bucket ${s.segment_idx}: interval`);
    }
    const cur = rows.find((r) => r.segment === a.current_state.segment);
    assert.equal(cur.episodes, int(ev.episodes), "the table's current bucket has the verdict's episodes");
    await c.close();
  });

  test("the thin-evidence line appears exactly when the API says thin", async () => {
    const { c, p } = await premiumPage("thin");
    // Find a thin and a not-thin case through the API (nothing hard-coded).
    const tickers = ["^GSPC", "^DJI", "SPY", "AAPL", "MSFT", "BTC-USD"];
    const cases = { thin: null, solid: null };
    outer: for (const rp of [90, 30, 7, 180, 365]) {
      for (const t of tickers) {
        const r = await p.request.get(`/web/api/analysis/${encodeURIComponent(t)}/verdict?return_period=${rp}`);
        if (!r.ok()) continue;
        const ev = (await r.json()).current_state.evidence;
        if (!ev) continue;
        const k = ev.thin ? "thin" : "solid";
        if (!cases[k]) cases[k] = { path: `/assets/${encodeURIComponent(t)}?return_period=${rp}`, ev };
        if (cases.thin && cases.solid) break outer;
      }
    }
    assert.ok(cases.thin, "a thin case exists in the demo universe");
    assert.ok(cases.solid, "a case with enough evidence exists in the demo universe");
    console.log(`# thin: ${cases.thin.path} (${cases.thin.ev.episodes} episodes); not thin: ${cases.solid.path} (${cases.solid.ev.episodes} episodes)`);
    for (const k of ["thin", "solid"]) {
      const { v } = await openAsset(p, cases[k].path);
      const ev = v.current_state.evidence;
      assert.equal(ev.thin, k === "thin", `${cases[k].path}: the page's own verdict agrees`);
      await p.locator("#verdict-episodes").waitFor();
      const note = p.locator("#thin-evidence");
      if (ev.thin) {
        await note.waitFor();
        assert.equal(await note.getAttribute("role"), "note");
        const text = (await note.innerText()).replace(/\s+/g, " ");
        assert.match(text, /^Thin evidence:/);
        assert.ok(ev.reasons.length > 0, "a thin answer gives its reasons");
        for (const reason of ev.reasons) assert.ok(text.includes(reason), `the line gives "${reason}"`);
      } else {
        assert.equal(await note.count(), 0, `${cases[k].path}: no thin-evidence line`);
        // (The forecast's own "thin evidence" mark, lower case, is another matter: see forecast.test.mjs.)
        assert.equal(await p.getByText(/Thin evidence/).count(), 0);
      }
      // insufficient_data keeps its own message.
      const few = p.getByText(/Few confirmed outcomes in this bucket/);
      assert.equal(await few.count(), v.current_state.insufficient_data ? 1 : 0);
    }
    await c.close();
  });

  test("the grade history's table is the API's by_grade, for the page's horizon", async () => {
    const { c, p } = await premiumPage("history");
    for (const [path, rp] of [
      ["/assets/%5EGSPC", "90"],
      ["/assets/%5EGSPC?return_period=30", "30"],
    ]) {
      const [res] = await Promise.all([p.waitForResponse(isHistory, { timeout: 120_000 }), p.goto(path)]);
      const url = new URL(res.url());
      assert.equal(url.searchParams.get("return_period") ?? "90", rp, "the history is asked for the page's horizon");
      const tr = await res.json();
      assert.equal(tr.return_period, Number(rp));
      await p.locator("#grade-history-table tbody tr").first().waitFor({ timeout: 60_000 });
      const rows = await p.$$eval("#grade-history-table tbody tr", (trs) => trs.map((r) => ({ grade: r.dataset.grade, count: r.querySelector(".gh-count").textContent.trim(), cells: [...r.querySelectorAll("td")].map((td) => td.textContent.trim()) })));
      assert.deepEqual(
        rows.map((r) => [r.grade, r.count]),
        tr.by_grade.map((g) => [g.grade, int(g.count)]),
        `${path}: one row per grade with the API's count`,
      );
      for (const g of tr.by_grade) {
        const r = rows.find((x) => x.grade === g.grade);
        assert.deepEqual(r.cells.slice(1), [pct(g.mean_realised_return), pct(g.median_realised_return), pct(g.hit_rate, 0)], `${path} grade ${g.grade}`);
      }
      // The chart: one point per month-end, drawn.
      const chart = p.locator("#chart-grade-history");
      await chart.locator("canvas").waitFor();
      assert.equal(Number(await chart.getAttribute("data-months")), tr.history.length);
      assert.match(await chart.locator(".u-legend").innerText(), /Score \(0–100\)[\s\S]*Realised/);
      const notes = await p.locator("#grade-history .gh-notes").innerText();
      assert.match(notes, /up to its month-end only/);
      assert.match(notes, /consecutive month-ends overlap/);
      assert.match(notes, /synthetic data the grades describe the generator, not a market/);
      assert.equal(await p.locator("#grade-history-synthetic").count(), tr.data_source === "synthetic" ? 1 : 0);
      // The download: the same month-ends as CSV, for the page's horizon.
      const href = await p.locator("#grade-history-download a").getAttribute("href");
      assert.equal(new URL(href, env.base).searchParams.get("return_period") ?? "90", rp);
      const csv = (await (await p.request.get(href)).text()).trim().split("\n");
      assert.equal(csv[0], "date,grade,score,predicted_median_return,realised_return,forecast_central,forecast_p10,forecast_p90,climatology_mean");
      assert.equal(csv.length, tr.history.length + 1);
      assert.ok(csv[1].startsWith(`${tr.history[0].date},${tr.history[0].grade},`), csv[1]);
    }
    // A synthetic history says its grades describe the generator.
    const [res] = await Promise.all([p.waitForResponse(isHistory, { timeout: 120_000 }), p.goto("/assets/BTC-USD")]);
    const btc = await res.json();
    assert.equal(btc.data_source, "synthetic");
    await p.locator("#grade-history-synthetic").waitFor();
    await c.close();
  });

  test("the methodology page is reachable from the glossary and the footer", async () => {
    const { c, p } = await premiumPage("methodology");
    await p.goto("/glossary");
    // The glossary is drawn after the session check: wait for it, and listen
    // for the navigation before clicking, so neither can be missed.
    await p.locator("main h1", { hasText: "Glossary" }).waitFor();
    const toMethodology = (u) => u.pathname === "/methodology";
    await Promise.all([p.waitForURL(toMethodology), p.locator("#glossary-methodology").click()]);
    await p.locator("main h1", { hasText: "Methodology" }).waitFor();
    const text = await p.locator("main").innerText();
    for (const s of ["Drawdown buckets", "Days and episodes", "1,000", "Thin evidence", "moving-block bootstrap", "Spearman", "Survivorship", "Synthetic histories are not markets"]) {
      assert.ok(text.includes(s), `the methodology explains ${s}`);
    }
    // Every in-page link leads to a section.
    const anchors = await p.$$eval("main a[href^='#']", (as) => as.map((a) => a.getAttribute("href").slice(1)));
    for (const id of anchors) assert.equal(await p.locator(`[id="${id}"]`).count(), 1, `#${id} exists`);
    // The glossary's "?" for episodes and the footer lead here too.
    await p.goto("/");
    await p.locator("main h1").waitFor();
    await Promise.all([p.waitForURL(toMethodology), p.locator("footer a", { hasText: "Methodology" }).click()]);
    await p.locator("main h1").waitFor();
    await shot(p, "methodology");
    await p.goto("/methodology#thin");
    await p.locator("#thin").waitFor();
    await axe(p, "methodology");
    await c.close();
    const ph = await premiumPage("methodology-phone", phone);
    await ph.p.goto("/methodology");
    await ph.p.locator("main h1").waitFor();
    await noSidewaysScroll(ph.p, "methodology (390 px)");
    await shot(ph.p, "methodology-phone");
    await ph.c.close();
  });

  test("the track-record page keeps its filters in the URL and shows the API's IC", async (t) => {
    const { c, p } = await premiumPage("track-record");
    const probe = await p.request.get("/web/api/track-record?return_period=90");
    if (probe.status() === 404 || probe.status() === 405) {
      const body = await probe.text();
      await c.close();
      t.skip(`this server has no GET /web/api/track-record (${probe.status()} ${body.slice(0, 80)})`);
      return;
    }
    // The navigation lists it next to Ranking.
    await p.goto("/");
    await p.locator('#main-nav a[href="/track-record"]').waitFor();
    const nav = await p.$$eval("#main-nav a", (as) => as.map((a) => a.getAttribute("href")));
    assert.equal(nav[nav.indexOf("/ranking") + 1], "/track-record", nav.join(" "));

    const [first] = await Promise.all([p.waitForResponse(isUniverse, { timeout: 60_000 }), p.goto("/track-record")]);
    assert.equal(new URL(first.url()).searchParams.get("source"), "real", "real prices by default");
    if (first.status() === 503) {
      // Not computed yet: the page says so with the server's detail.
      const detail = (await first.json()).detail;
      const note = p.locator("#tr-unavailable");
      await note.waitFor();
      const text = await note.innerText();
      assert.match(text, /computed by the daily grading run/);
      if (detail) assert.ok(text.includes(detail), "the server's detail is shown");
    } else {
      assert.equal(first.status(), 200);
    }

    // Change every filter: each lands in the URL and in the request.
    const choose = async (sel, value) => {
      const [res] = await Promise.all([p.waitForResponse(isUniverse, { timeout: 60_000 }), p.selectOption(sel, value)]);
      return res;
    };
    await choose("#tr-period", "30");
    await choose("#tr-metric", "sharpe");
    await choose("#tr-source", "all");
    const res = await choose("#tr-category", "Indices");
    const u = new URL(p.url());
    assert.equal(u.pathname, "/track-record");
    assert.deepEqual(
      ["return_period", "metric", "source", "category"].map((k) => u.searchParams.get(k)),
      ["30", "sharpe", "all", "Indices"],
      `the filters are in the URL: ${p.url()}`,
    );
    const asked = new URL(res.url()).searchParams;
    assert.deepEqual(["return_period", "metric", "source", "category"].map((k) => asked.get(k)), ["30", "sharpe", "all", "Indices"]);
    // The URL alone restores them.
    const [again] = await Promise.all([p.waitForResponse(isUniverse, { timeout: 60_000 }), p.reload()]);
    for (const [sel, v] of [
      ["#tr-period", "30"],
      ["#tr-metric", "sharpe"],
      ["#tr-source", "all"],
      ["#tr-category", "Indices"],
    ])
      assert.equal(await p.inputValue(sel), v, `${sel} after a reload`);
    assert.equal(new URL(again.url()).searchParams.get("category"), "Indices");

    // With data: the IC mean shown is the API's for the request the page made.
    const [def] = await Promise.all([p.waitForResponse(isUniverse, { timeout: 60_000 }), p.goto("/track-record?return_period=90")]);
    if (def.status() === 200) {
      const tr = await def.json();
      const mean = p.locator("#tr-ic-mean");
      await mean.waitFor();
      assert.equal((await mean.innerText()).trim(), tr.ic.mean === null ? "—" : tr.ic.mean.toFixed(3));
      const rows = await p.$$eval("#tr-grades tbody tr", (trs) => trs.map((r) => [r.dataset.grade, r.querySelector(".tr-count").textContent.trim()]));
      assert.deepEqual(rows, tr.by_grade.map((g) => [g.grade, int(g.count)]));
      const notes = tr.notes.length ? await p.locator("#tr-notes").innerText() : "";
      for (const n of tr.notes) assert.ok(notes.includes(n), `note shown: ${n}`);
      assert.match(await p.locator("#tr-sources").innerText(), new RegExp(`${int(tr.data_sources.real)} real · ${int(tr.data_sources.ingested)} ingested · ${int(tr.data_sources.synthetic)} synthetic`));
      if (tr.ic_series.length) await p.locator("#chart-tr-ic canvas").waitFor();
      // The download is the same table, with these filters.
      const href = await p.locator("#tr-download a.btn").getAttribute("href");
      const csvQ = new URL(href, "http://x").searchParams;
      assert.deepEqual([csvQ.get("return_period"), csvQ.get("format"), csvQ.get("table")], ["90", "csv", "by_grade"]);
      const csv = (await (await p.request.get(href)).text()).trim().split("\n");
      assert.equal(csv[0].split(",")[0], "grade");
      assert.deepEqual(csv.slice(1).map((l) => l.split(",").slice(0, 2)), tr.by_grade.map((g) => [g.grade, String(g.count)]));
    } else {
      console.log(`# /web/api/track-record answered ${def.status()}: the data part of this test did not run`);
      await p.locator("#tr-unavailable").waitFor();
    }
    await p.waitForTimeout(300);
    await shot(p, "track-record", true);
    await axe(p, "track record");
    await c.close();
    const ph = await premiumPage("track-record-phone", phone);
    await Promise.all([ph.p.waitForResponse(isUniverse, { timeout: 60_000 }), ph.p.goto("/track-record")]);
    await ph.p.waitForTimeout(300);
    await noSidewaysScroll(ph.p, "track record (390 px)");
    await shot(ph.p, "track-record-phone");
    await axe(ph.p, "track record (390 px)");
    await ph.c.close();
  });

  test("the asset page with its evidence and grade history at 1280 and 390 px: screenshots, axe", async () => {
    const { c, p } = await premiumPage("asset-desktop");
    await openAsset(p, "/assets/%5EGSPC");
    await p.locator("#grade-history-table").waitFor({ timeout: 120_000 });
    await p.locator("#chart-fan canvas").waitFor();
    await p.waitForTimeout(300);
    await shot(p.locator("#verdict-card"), "asset-evidence");
    await shot(p.locator("#grade-history"), "asset-grade-history");
    await axe(p, "asset with evidence (1280 px)");
    await c.close();
    const ph = await premiumPage("asset-phone", phone);
    const phoneVerdict = await openAsset(ph.p, "/assets/%5EGSPC");
    await ph.p.locator("#grade-history-table").waitFor({ timeout: 120_000 });
    await noSidewaysScroll(ph.p, "asset (390 px)");
    // The segment table keeps bucket, days, episodes and both medians without scrolling sideways.
    const tableScroll = await ph.p.$eval("#segment-table .table-wrap", (w) => w.scrollWidth - w.clientWidth);
    assert.ok(tableScroll <= 1, `the segment table does not scroll sideways (${tableScroll} px)`);
    // On a phone the episodes sit under the days of each bucket.
    const cur = ph.p.locator("#segment-table tr.current .seg-ep-phone");
    assert.ok(await cur.isVisible(), "the current bucket's episodes are visible on a phone");
    assert.equal((await cur.innerText()).trim(), `${int(phoneVerdict.v.active_segment.evidence.episodes)} ep.`);
    const ghScroll = await ph.p.$eval("#grade-history .table-wrap", (w) => w.scrollWidth - w.clientWidth);
    assert.ok(ghScroll <= 1, `the grade history table does not scroll sideways (${ghScroll} px)`);
    await shot(ph.p.locator("#verdict-card"), "asset-evidence-phone");
    await axe(ph.p, "asset with evidence (390 px)");
    await ph.c.close();
  });

  kit.closingChecks();
});
