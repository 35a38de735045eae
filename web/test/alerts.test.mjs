// Alerts in the browser (issue 30): "Alert me" on an asset page and on the
// watchlist, the alert firing (the server's follower checks every 200 ms;
// `forecast alerts check` evaluates on demand), the header's unread badge,
// the inbox (its pages, marking read), the user's alerts with their
// per-asset states, the New alert form's refusals by field, webhooks (the
// secret shown once, a signed test call to a local receiver, the delivery
// log, a failing endpoint), a Free account's locked page, phones, axe and
// the console. See test/harness.mjs (WEB_DIST_PROXY / WEB_DIST_DIR serve a
// fresh build). Screenshots go to SHOTS_DIR when set, else to
// docs/screenshots when the server serves this build, else to /tmp.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { PREMIUM, FREE, signIn } from "./harness.mjs";
import { Suite, DESKTOP, PHONE, overflowX } from "./kit.mjs";
import { pct } from "./fmt.mjs";


let env;
const kit = new Suite("alerts", { zone: true });
const { watch, newContext, axe, shot } = kit;

/** A GET through the page's session: what the server says. */
const get = (p, path) => p.evaluate(async (u) => (await fetch(u)).json(), path);

/** Polls `fn` until it returns something truthy (the alerts follower runs every 200 ms). */
async function until(fn, what, ms = 30_000, why = async () => "") {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what} ${await why()}`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

/** As the app prints a fraction: -0.3804 → "-38.0 %". */
const pct1 = (v) => pct(v, 1);
/** As the app prints a timestamp: always UTC. */
const utc = (v) => `${new Date(v).toISOString().slice(0, 10)} ${new Date(v).toISOString().slice(11, 16)} UTC`;

/** A local webhook receiver answering `status`; records every request. */
async function receiver(status) {
  const calls = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      calls.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "no");
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}/hooks/forecast`, calls, close: () => server.close() };
}

describe("alerts", { timeout: 300_000 }, () => {
  let ctx;
  let page;
  /** The watchlist of the watchlist alert: graded assets, more than an inbox page. */
  let watchlist = [];

  before(async () => {
    ({ env, ctx, page } = await kit.startSignedIn({ FORECAST_ALERTS_INTERVAL_MS: "200", FORECAST_WEBHOOK_ALLOW_PRIVATE: "on" }));
  });

  after(() => kit.stop());

  test("Alert me on an asset page: it fires, the header's badge counts it, the inbox shows it, Mark all read clears it", async () => {
    const verdict = page.waitForResponse((r) => /\/web\/api\/analysis\/AAPL\/verdict/.test(r.url()), { timeout: 60_000 });
    await page.goto("/assets/AAPL");
    const drawdown = (await (await verdict).json()).current_state.drawdown;
    const bell = page.locator("#alerts-bell");
    await page.locator("#alerts-bell[aria-label='Alerts, none unread']").waitFor();
    assert.equal(await page.locator(".bell-badge").count(), 0, "no badge at 0");

    const open = page.getByRole("button", { name: "Alert me", exact: true });
    assert.equal(await open.getAttribute("aria-expanded"), "false");
    await open.click();
    assert.equal(await open.getAttribute("aria-expanded"), "true");
    const form = page.locator("#alert-me");
    await form.waitFor();
    // Drawdown at or below the current drawdown less 10 points, in whole percent; the focus on the condition.
    assert.equal(await form.locator("#alert-me-f-condition").inputValue(), "drawdown_below");
    assert.equal(await form.locator("#alert-me-f-level").inputValue(), String(Math.round(drawdown * 100 - 10)));
    assert.equal(await page.evaluate(() => document.activeElement?.id), "alert-me-f-condition");
    assert.equal(await form.locator("#alert-me-f-return_period").inputValue(), "90");
    const labels = await form.locator("#alert-me-f-condition option").allTextContents();
    assert.equal(labels.length, 10, "every condition is offered");
    await page.waitForTimeout(100);
    await shot(page, "alerts-asset-form");
    await axe(page, "asset page with the alert form");

    // Level 0 holds for every asset: the first check fires.
    await form.locator("#alert-me-f-level").fill("0");
    const created = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts") && r.request().method() === "POST");
    await form.getByRole("button", { name: "Create alert" }).click();
    const res = await created;
    assert.equal(res.status(), 201);
    assert.deepEqual(JSON.parse(res.request().postData()), { ticker: "AAPL", condition: "drawdown_below", level: 0, return_period: 90 });
    const done = page.locator("#alert-me .alert-me-done");
    await done.waitFor();
    assert.match(await done.innerText(), /Alert created: drawdown at or below 0\.0 % \(AAPL, 90-day horizon\)/);
    assert.equal(await done.getByRole("link", { name: "Alerts page" }).getAttribute("href"), "/alerts");

    // The server's follower checks it; after the next navigation the header counts the event.
    await until(async () => (await get(page, "/web/api/alerts/unread")).unread === 1, "the event");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Glossary" }).click();
    await page.waitForURL("**/glossary");
    await page.locator("#alerts-bell[aria-label='Alerts, 1 unread']").waitFor();
    assert.equal(await page.locator(".bell-badge").innerText(), "1");

    // The bell opens the inbox: the event with its message, change, evidence and provenance.
    await bell.click();
    await page.waitForURL("**/alerts");
    await page.getByRole("heading", { level: 1, name: "Alerts" }).waitFor();
    const { events } = await get(page, "/web/api/alerts/events?limit=10");
    assert.equal(events.length, 1);
    const e = events[0];
    const item = page.locator(`#event-${e.id}`);
    await item.waitFor();
    assert.match(await item.getAttribute("class"), /\bunread\b/);
    assert.equal((await item.locator(".tag-unread").innerText()).trim(), "Unread", "unread is said in words, not only by colour");
    assert.equal((await item.locator(".event-msg").innerText()).trim(), e.message);
    assert.match(e.message, /^AAPL: drawdown .* is at or below 0\.0 %/);
    // Read out as "first check became -38.0 %" (the arrow is for the eyes).
    assert.equal((await item.locator(".event-change").textContent()).replace(/\s+/g, " ").trim(), `first check → became ${pct1(e.after.drawdown)}`);
    const ev = e.after.evidence;
    assert.match(await item.locator(".event-evidence").innerText(), new RegExp(`${ev.bucket_samples} past days in the bucket, ${ev.episodes} independent episodes`));
    assert.equal(await item.locator(".mark-thin").count(), ev.thin ? 1 : 0, "the thin mark exactly when the server says thin");
    const run = await item.locator(".event-run").innerText();
    for (const part of [`engine ${e.engine_version}`, `scorer ${e.scorer_version}`]) assert.ok(run.includes(part), `${part} in “${run}”`);
    // The run and evaluation ids are folded away until asked for.
    assert.ok(!(await item.locator(".event-ids .mono").first().isVisible()), "ids hidden at first");
    await item.locator(".event-ids summary").click();
    const ids = await item.locator(".event-ids").innerText();
    for (const part of [`run ${e.run_id}`, `evaluation ${e.evaluation}`]) assert.ok(ids.includes(part), `${part} in “${ids}”`);
    assert.equal(await item.locator("time").innerText(), utc(e.created_at), "the time in UTC, whatever the browser's zone");
    assert.equal(await item.getByRole("link", { name: "Open AAPL" }).getAttribute("href"), "/assets/AAPL");
    assert.match(await page.locator("#inbox-count").innerText(), /1 unread of 1 event/);
    // The alert under "Your alerts", with what the check saw.
    const { 0: alert } = await get(page, "/web/api/alerts");
    const row = page.locator(`#alert-${alert.id} tr[data-ticker=AAPL]`);
    await row.waitFor();
    assert.equal(await row.locator(".holds").innerText(), "yes");
    assert.equal(await row.locator(".watched").innerText(), pct1(alert.states[0].observed.drawdown));
    await shot(page, "alerts", true);
    await axe(page, "alerts");

    await page.getByRole("button", { name: "Mark all read" }).click();
    await page.locator("#alerts-bell[aria-label='Alerts, none unread']").waitFor();
    assert.equal(await page.locator(".bell-badge").count(), 0, "the badge goes at once");
    assert.doesNotMatch(await item.getAttribute("class"), /\bunread\b/);
    assert.equal(await item.locator(".tag-unread").count(), 0);
    assert.ok(await page.getByRole("button", { name: "Mark all read" }).isDisabled());
    assert.equal((await get(page, "/web/api/alerts/unread")).unread, 0, "the server agrees");
  });

  test("the New alert form: ?ticker= fills it in, a bad level and an unknown ticker are refused by field", async () => {
    await page.goto("/alerts?ticker=MSFT");
    const form = page.locator("#new-alert-form");
    await form.waitFor();
    assert.equal(await page.inputValue("#na-ticker"), "MSFT");
    assert.ok(await page.isChecked("input[name=target][value=ticker]"));
    await page.waitForFunction(() => document.activeElement?.id === "na-condition");
    assert.ok(await form.isVisible());
    const box = await page.locator("#new-alert").boundingBox();
    assert.ok(box.y >= -1 && box.y < DESKTOP.height / 2, `the form is brought into view (top at ${box.y})`);

    // 5 % is not a drawdown: the server's detail under the level.
    await page.selectOption("#na-condition", "drawdown_below");
    await page.fill("#na-level", "5");
    let refused = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts") && r.request().method() === "POST");
    await form.getByRole("button", { name: "Create alert" }).click();
    let r = await refused;
    assert.equal(r.status(), 400);
    const detail = (await r.json()).detail;
    assert.match(detail, /^level /);
    await page.locator("#na-level-err[role=alert]").waitFor();
    assert.equal((await page.locator("#na-level-err").innerText()).trim(), detail);
    assert.equal(await page.getAttribute("#na-level", "aria-invalid"), "true");
    assert.equal(await page.getAttribute("#na-level", "aria-describedby"), "na-level-err");

    // Top N takes its own parameter; an unknown ticker is said under the ticker.
    await page.selectOption("#na-condition", "top_n_entered");
    assert.equal(await page.locator("#na-level").count(), 0, "only the parameter the condition needs");
    await page.fill("#na-top_n", "5");
    await page.selectOption("#na-category", "US Stocks");
    await page.fill("#na-ticker", "NOPE");
    refused = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts") && r.request().method() === "POST");
    await form.getByRole("button", { name: "Create alert" }).click();
    r = await refused;
    assert.equal(r.status(), 404);
    assert.deepEqual(JSON.parse(r.request().postData()), { ticker: "NOPE", condition: "top_n_entered", top_n: 5, category: "US Stocks", return_period: 90, metric: "return", email: true });
    await page.locator("#na-ticker-err[role=alert]", { hasText: "NOPE" }).waitFor();
    assert.equal(await page.locator("#na-level-err").count(), 0, "the old message is gone");
    assert.equal((await get(page, "/web/api/alerts")).length, 1, "nothing was created");
  });

  test("Alert me on my watchlist: it fires for each asset (forecast alerts check), states per asset, the inbox's pages", async () => {
    // More graded assets than an inbox page holds.
    const ranking = await get(page, "/web/api/ranking?limit=12");
    watchlist = ranking.ranked_assets.map((a) => a.ticker);
    assert.equal(watchlist.length, 12);
    const put = await page.request.put("/web/watchlist", { data: { tickers: watchlist }, headers: { Origin: env.base } });
    assert.equal(put.status(), 200);

    await page.goto("/");
    const open = page.getByRole("button", { name: "Alert me on my watchlist" });
    await open.click();
    const form = page.locator("#alert-me");
    await form.waitFor();
    assert.equal(await form.locator("#alert-me-f-level").inputValue(), "-20");
    await form.locator("#alert-me-f-level").fill("0");
    const created = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts") && r.request().method() === "POST");
    await form.getByRole("button", { name: "Create alert" }).click();
    const res = await created;
    assert.equal(res.status(), 201);
    assert.equal(JSON.parse(res.request().postData()).watchlist, true);
    const id = (await res.json()).id;
    await form.locator(".alert-me-done", { hasText: "your watchlist" }).waitFor();
    await axe(page, "watchlist with the alert confirmation");

    // Evaluated now by the CLI (the server's follower may have been first: each state of the data is evaluated once).
    env.cli(["alerts", "check"]);
    const alert = await until(async () => {
      const a = (await get(page, "/web/api/alerts")).find((x) => x.id === id);
      return a && a.states.length === watchlist.length && a;
    }, "a state per asset");
    const unread = await until(async () => {
      const n = (await get(page, "/web/api/alerts/unread")).unread;
      return n === watchlist.length && n;
    }, "an event per asset", 30_000, async () => JSON.stringify(await get(page, "/web/api/alerts/events?limit=100")));

    await page.goto("/alerts");
    await page.locator(`#alerts-bell[aria-label='Alerts, ${unread} unread']`).waitFor();
    const item = page.locator(`#alert-${id}`);
    await item.waitFor();
    assert.match(await item.locator(".alert-title").innerText(), /Your watchlist\s+drawdown at or below 0\.0 %/);
    // More than a few assets: folded under a summary.
    const summary = item.locator(".alert-states-box summary");
    assert.equal((await summary.innerText()).trim(), `Last check: ${watchlist.length} assets, the condition holds for ${watchlist.length}`);
    await summary.click();
    for (const s of alert.states) {
      const row = item.locator(`tr[data-ticker="${s.ticker}"]`);
      assert.equal(await row.locator(".holds").innerText(), s.holds ? "yes" : "no");
      assert.equal(await row.locator(".watched").innerText(), pct1(s.observed.drawdown), s.ticker);
      assert.equal(await row.locator(".grade-cell").innerText(), s.observed.letter ?? "—");
    }

    // The inbox in pages of 10, newest first; Older and Newer keep the offset in the URL.
    const total = watchlist.length + 1;
    await page.locator("#inbox-count", { hasText: `${unread} unread of ${total} events` }).waitFor();
    assert.equal(await page.locator(".events > li").count(), 10);
    assert.ok(await page.locator("#inbox-newer").isDisabled());
    await page.locator("#inbox-older").click();
    await page.waitForURL((u) => u.searchParams.get("offset") === "10");
    await page.locator(".events > li").nth(total - 11).waitFor();
    assert.equal(await page.locator(".events > li").count(), total - 10);
    const oldest = (await get(page, `/web/api/alerts/events?limit=10&offset=10`)).events.map((e) => e.id);
    assert.deepEqual(await page.locator(".events > li").evaluateAll((ls) => ls.map((l) => l.dataset.eventId)), oldest);
    await page.locator("#inbox-newer").click();
    await page.waitForURL((u) => !u.searchParams.has("offset"));
    await page.locator(".events > li").nth(9).waitFor();

    // Mark one read: one fewer on the badge at once, the focus stays on that event.
    const first = page.locator(".events > li.unread").first();
    const eid = await first.getAttribute("data-event-id");
    await first.getByRole("button", { name: /^Mark read/ }).click();
    await page.locator(`#alerts-bell[aria-label='Alerts, ${unread - 1} unread']`).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), `event-${eid}`);
    assert.equal((await get(page, "/web/api/alerts/unread")).unread, unread - 1);

    // The switches are the server's: e-mail off, paused and on again.
    const email = item.getByRole("checkbox", { name: "In the e-mail digest" });
    await email.uncheck();
    await until(async () => (await get(page, `/web/api/alerts/${id}`)).email === false, "e-mail off");
    const enabled = item.getByRole("checkbox", { name: "Enabled" });
    await enabled.uncheck();
    await item.locator(".tag-paused").waitFor();
    assert.equal((await get(page, `/web/api/alerts/${id}`)).enabled, false);
    await enabled.check();
    await item.locator(".tag-paused").waitFor({ state: "detached" });
    assert.equal((await get(page, `/web/api/alerts/${id}`)).enabled, true);
    await axe(page, "alerts with a watchlist alert");
  });

  test("webhooks: the secret once, a signed test call, the delivery log, a failing endpoint", async () => {
    const ok = await receiver(200);
    const bad = await receiver(500);
    try {
      await page.goto("/alerts");
      await page.locator("#webhooks").getByText("No endpoints.").waitFor();
      // A refused URL: the server's detail under the field.
      await page.fill("#hook-url", "ftp://example.com/x");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await page.locator("#hook-url-err[role=alert]", { hasText: "url must be http or https" }).waitFor();

      await page.fill("#hook-url", ok.url);
      const made = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts/webhooks") && r.request().method() === "POST");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const hook = await (await made).json();
      const secret = await page.inputValue("#new-secret");
      assert.equal(secret, hook.secret);
      assert.match(secret, /^whsec_[0-9a-f]{16,}/);
      await page.getByText("Copy it now — it will not be shown again.").waitFor();
      assert.equal(await page.locator("#hook-url-err").count(), 0);
      const li = page.locator(`#hook-${hook.id}`);
      await li.waitFor();
      assert.equal((await li.locator(".hook-url").innerText()).trim(), ok.url);
      assert.equal((await li.locator(".badge").innerText()).trim(), "enabled");
      await page.locator("#webhooks").scrollIntoViewIfNeeded();
      await shot(page, "alerts-webhook-secret");
      await axe(page, "alerts with the webhook secret");

      // Send test: delivered, and the receiver can check the signature with the secret.
      await li.getByRole("button", { name: "Send test" }).click();
      const result = li.locator(".hook-test");
      await result.waitFor({ timeout: 30_000 });
      assert.equal(await result.getAttribute("data-status"), "delivered");
      assert.match(await result.innerText(), /^Test call delivered \(HTTP 200\)\.$/);
      const call = ok.calls.find((c) => JSON.parse(c.body.toString()).type === "alert.test");
      assert.ok(call, `the receiver got the test call (${ok.calls.length} calls)`);
      assert.equal(call.method, "POST");
      assert.equal(call.url, "/hooks/forecast");
      const sig = Object.fromEntries(call.headers["x-forecast-signature"].split(",").map((kv) => kv.split("=", 2)));
      assert.match(sig.t, /^\d+$/);
      assert.ok(Math.abs(Date.now() / 1000 - Number(sig.t)) < 300, "a current timestamp");
      const want = createHmac("sha256", secret).update(`${sig.t}.`).update(call.body).digest("hex");
      assert.equal(sig.v1, want, "v1 is HMAC-SHA256(secret, t.body)");
      assert.ok(call.headers["x-forecast-delivery"], "a delivery id to deduplicate on");

      // The delivery log lists it.
      const logBtn = li.getByRole("button", { name: "Delivery log" });
      await logBtn.click();
      assert.equal(await logBtn.getAttribute("aria-expanded"), "true");
      const logRow = li.locator(".deliveries tbody tr").first();
      await logRow.waitFor();
      assert.equal(await logRow.getAttribute("data-status"), "delivered");
      assert.match(await logRow.innerText(), /test\s+delivered\s+1\s+200/);

      // Shown once: gone after a reload, and nowhere on the page.
      await page.reload();
      await li.waitFor();
      assert.equal(await page.locator("#new-secret").count(), 0);
      assert.ok(!(await page.locator("main").innerText()).includes(secret), "the secret is not shown again");

      // A failing endpoint: the test says so with its HTTP status; the failure is counted.
      await page.fill("#hook-url", bad.url);
      const made2 = page.waitForResponse((r) => r.url().endsWith("/web/api/alerts/webhooks") && r.request().method() === "POST");
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const hook2 = await (await made2).json();
      const li2 = page.locator(`#hook-${hook2.id}`);
      await li2.getByRole("button", { name: "Send test" }).click();
      const failed = li2.locator(".hook-test");
      await failed.waitFor({ timeout: 30_000 });
      assert.equal(await failed.getAttribute("data-status"), "failed");
      assert.match(await failed.innerText(), /^Test call failed: HTTP 500/);
      await li2.locator(".hook-state", { hasText: "1 failed attempt since the last success" }).waitFor();
      assert.equal(bad.calls.length, 1, "tried once (a test is not retried)");
      await li2.getByRole("button", { name: "Delivery log" }).click();
      const badRow = li2.locator(".deliveries tbody tr").first();
      await badRow.waitFor();
      assert.equal(await badRow.getAttribute("data-status"), "failed");
      assert.match(await badRow.locator("td").nth(4).innerText(), /500/);
      await li.scrollIntoViewIfNeeded();
      await shot(page, "alerts-webhook-log");

      // Disable, then Enable again.
      await li2.getByRole("button", { name: "Disable" }).click();
      await li2.locator(".badge", { hasText: "disabled" }).waitFor();
      assert.ok(await li2.getByRole("button", { name: "Send test" }).isDisabled(), "a disabled endpoint is not tested");
      await li2.getByRole("button", { name: "Enable again" }).click();
      await li2.locator(".badge", { hasText: "enabled" }).waitFor();
      await axe(page, "alerts with two endpoints and their logs");

      // Delete, after confirming.
      await li2.getByRole("button", { name: "Delete" }).click();
      const confirm = li2.getByRole("group", { name: `Confirm deleting the endpoint ${bad.url}` });
      await confirm.getByRole("button", { name: "Keep" }).click();
      await li2.getByRole("button", { name: "Delete" }).click();
      const gone = page.waitForResponse((r) => r.request().method() === "DELETE");
      await li2.getByRole("button", { name: "Yes, delete" }).click();
      assert.equal((await gone).status(), 204);
      await li2.waitFor({ state: "detached" });
      assert.deepEqual((await get(page, "/web/api/alerts/webhooks")).map((w) => w.id), [hook.id]);
    } finally {
      ok.close();
      bad.close();
    }
  });

  test("an alert is deleted after confirming", async () => {
    await page.goto("/alerts");
    const [a] = await get(page, "/web/api/alerts");
    const item = page.locator(`#alert-${a.id}`);
    await item.getByRole("button", { name: "Delete" }).click();
    await item.getByRole("group", { name: "Confirm deleting the alert on AAPL" }).getByRole("button", { name: "Yes, delete" }).click();
    await item.waitFor({ state: "detached" });
    assert.ok(!(await get(page, "/web/api/alerts")).some((x) => x.id === a.id));
    // Its events stay in the inbox.
    assert.ok((await get(page, "/web/api/alerts/events?limit=100")).events.some((e) => e.alert_id === a.id));
  });

  test("a Free user: the locked page at /alerts without a data call, no bell, a padlocked Alert me", async () => {
    const { c, p } = await kit.signedIn(FREE, "free");
    const dataCalls = [];
    p.on("request", (r) => new URL(r.url()).pathname.startsWith("/web/api/") && dataCalls.push(r.url()));
    const nav = p.getByRole("navigation", { name: "Main" });
    const link = nav.getByRole("link", { name: "Alerts (Premium)", exact: true });
    await link.waitFor();
    assert.equal(await link.locator("svg.lock").count(), 1);
    await link.click();
    await p.getByRole("heading", { level: 1, name: /^Alerts/ }).waitFor();
    await p.getByText("This page needs the Premium tier.").waitFor();
    assert.match(await p.locator(".locked-card").innerText(), /With Premium, this page shows alerts on an asset or on your whole watchlist/);
    assert.equal(await p.locator("#alerts-bell").count(), 0, "no bell, no badge");
    assert.deepEqual(dataCalls, [], "a locked page makes no data call");
    await axe(p, "alerts (free)");
    // The watchlist's control leads to the plans.
    await p.request.put("/web/watchlist", { data: { tickers: ["AAPL"] }, headers: { Origin: env.base } });
    await p.goto("/");
    const locked = p.getByRole("link", { name: "Alert me on my watchlist (Premium)" });
    await locked.waitFor();
    assert.equal(await locked.getAttribute("href"), "/plans");
    await c.close();
  });

  test("on a phone and in the dark theme: no sideways scroll, the bell beside the menu, axe clean", async () => {
    const { c, p } = await kit.signedIn(PREMIUM, "phone", { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await p.goto("/alerts");
    await p.locator(".events > li").first().waitFor();
    await p.locator(".hook").first().waitFor();
    const bell = await p.locator("#alerts-bell").boundingBox();
    const menu = await p.getByRole("button", { name: "Menu" }).boundingBox();
    assert.ok(bell && menu && bell.x + bell.width <= PHONE.width && Math.abs(bell.y - menu.y) < 12, "the bell is on the menu's row, on screen");
    await shot(p, "alerts-phone");
    // The watchlist alert's states, unfolded.
    await p.locator(".alert-states-box summary").first().click();
    await p.locator(".alert-states").first().waitFor();
    assert.ok((await overflowX(p)) <= 0, `scrolls sideways by ${await overflowX(p)} px`);
    await shot(p, "alerts-phone-full", true);
    await axe(p, "alerts (phone)");
    // The delivery log as cards.
    await p.locator(".hook").first().getByRole("button", { name: "Delivery log" }).click();
    await p.locator(".deliveries tbody tr").first().waitFor();
    assert.ok((await overflowX(p)) <= 0, "the delivery log does not scroll sideways");
    await c.close();

    const d = await newContext({ colorScheme: "dark" });
    const dp = await d.newPage();
    watch(dp, "dark");
    await signIn(dp, PREMIUM);
    await dp.goto("/alerts");
    await dp.locator(".events > li").first().waitFor();
    await shot(dp, "alerts-dark");
    await axe(dp, "alerts (dark)");
    await d.close();
  });

  kit.closingChecks();
});
