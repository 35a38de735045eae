// The strategies page in a real browser: upload a strategy component (file
// picker and drop zone), see it under "Mine", share it, backtest it, delete
// it, and the server's refusal of a file that is not a component.
// See test/harness.mjs (WEB_DIST_PROXY / WEB_DIST_DIR serve a fresh build).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, PREMIUM } from "./harness.mjs";
import { Suite, PHONE, overflowX } from "./kit.mjs";

const DIP_BUYER = join(repoRoot, "components/target/wasm32-wasip2/release/dip_buyer.wasm");

let env;
const kit = new Suite("strategies");
const { watch, newContext, axe, shot } = kit;

describe("the strategies page", { timeout: 180_000 }, () => {
  let ctx;
  let page;
  let name = ""; // @handle/dip-buyer

  before(async () => {
    ({ env, ctx, page } = await kit.startSignedIn());
  });

  after(() => kit.stop());

  test("the navigation links the page next to Backtest; it lists the built-ins", async () => {
    await page.goto("/");
    // The app renders its navigation after the session is read: wait for it.
    await page.locator("nav[aria-label=Main] a", { hasText: "Backtest" }).first().waitFor();
    const links = await page.locator("nav[aria-label=Main] a").allTextContents();
    const i = links.findIndex((t) => t.trim() === "Backtest");
    assert.ok(i >= 0, `navigation: ${links.join(" | ")}`);
    assert.equal(links[i + 1].trim(), "Strategies");
    await page.click("nav[aria-label=Main] >> text=Strategies");
    await page.waitForURL("**/strategies");
    await page.getByRole("heading", { level: 1, name: "Strategies" }).waitFor();
    assert.equal(await page.locator("nav[aria-label=Main] a[aria-current=page]").textContent(), "Strategies");
    for (const s of ["topn", "zscore", "longshort"]) await page.locator(`#builtin-table tr[data-strategy="${s}"]`).waitFor();
    assert.match(await page.locator("#builtin-table tr[data-strategy=topn]").textContent(), /unsigned/);
    assert.match(await page.locator("#builtin-table tr[data-strategy=topn] .wit-version").textContent(), /WIT \d+\.\d+\.\d+/);
    // Every strategy lists what it imports, built-ins too.
    await page.locator("#builtin-table tr[data-strategy=topn] details.imports summary").click();
    assert.match(await page.locator("#builtin-table tr[data-strategy=topn] details.imports").textContent(), /forecast:plugins\/types/);
    await page.locator("#builtin-table tr[data-strategy=topn] details.imports summary").click();
    assert.match(await page.locator("#mine").textContent(), /not uploaded a strategy yet/);
    assert.equal(await page.locator("#builtin-table button", { hasText: "Delete" }).count(), 0, "no delete on built-ins");
  });

  test("upload through the file input: Checking…, the result, then under Mine as private", async () => {
    // Hold the upload a moment so that its "Checking…" state can be seen.
    await page.route("**/web/api/strategies", async (route) => {
      if (route.request().method() === "POST") await new Promise((ok) => setTimeout(ok, 700));
      await route.continue();
    });
    await page.setInputFiles("#strategy-file", DIP_BUYER);
    await page.getByRole("status").filter({ hasText: "Checking dip_buyer.wasm…" }).waitFor();
    assert.ok(await page.locator("#strategy-file").isDisabled(), "the picker waits while the server checks");
    const result = page.locator("#upload-result");
    await result.waitFor({ timeout: 60_000 });
    await page.unroute("**/web/api/strategies");
    const text = await result.textContent();
    const m = /(@u[0-9a-f]{10}\/dip-buyer)/.exec(text);
    assert.ok(m, `the result names the strategy: ${text}`);
    name = m[1];
    assert.match(text, /Stored/);
    // The size the page shows is the file's own (a build elsewhere makes other bytes).
    assert.ok(text.includes(`${statSync(DIP_BUYER).size.toLocaleString("en-US")} bytes`), text);
    assert.match(text, /private/);
    assert.match(text, /Imports \(\d+\)/);

    const row = page.locator(`#mine-table tr[data-strategy="${name}"]`);
    await row.waitFor();
    assert.match(await row.locator(".badge").textContent(), /private/);
    assert.match(await row.textContent(), /unsigned/);
    assert.match(await row.textContent(), /Buys up to top_n assets/, "the description (from the upload answer)");
    assert.match(await row.locator(".resources-cell").textContent(), /Not run yet/);
    // The imports of the upload just made, the SHA-256 in full in a title.
    await row.locator("details.imports summary").click();
    assert.match(await row.locator("details.imports").textContent(), /forecast:plugins\/types/);
    await row.locator("details.imports summary").click(); // closed again, for the screenshot
    const sha = await row.locator("code.sha-short").getAttribute("title");
    assert.match(sha, /^[0-9a-f]{64}$/);
    assert.equal(await row.locator(".version-select").inputValue(), "0.1.0");
    assert.equal(await page.locator(`#shared-table tr[data-strategy="${name}"]`).count(), 0);

    // The same bytes again: 200, "Already stored".
    await page.setInputFiles("#strategy-file", DIP_BUYER);
    await page.locator("#upload-result", { hasText: "Already stored" }).waitFor({ timeout: 60_000 });
  });

  test("share it: still under Mine, now shared; the server agrees", async () => {
    const row = page.locator(`#mine-table tr[data-strategy="${name}"]`);
    await row.getByRole("button", { name: `Share ${name} with every Premium user` }).click();
    await row.locator(".badge", { hasText: "shared" }).waitFor();
    await row.getByRole("button", { name: `Make private (${name})` }).waitFor();
    const list = await page.evaluate(async () => (await fetch("/web/api/strategies")).json());
    const item = list.strategies.find((s) => s.owner && s.name.endsWith("/dip-buyer"));
    assert.equal(item.visibility, "shared");
    await page.waitForTimeout(150);
    await shot(page, "strategies", true);
    await axe(page, "strategies");
  });

  test("the phone layout: cards, no sideways scroll, axe clean", async () => {
    const { c, p } = await kit.signedIn(PREMIUM, "phone", { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await p.goto("/strategies");
    const row = p.locator(`#mine-table tr[data-strategy="${name}"]`);
    await row.waitFor();
    assert.ok((await overflowX(p)) <= 0, `scrolls sideways by ${await overflowX(p)} px`);
    for (const sel of [".card-title", ".actions-cell a", ".version-select"]) {
      const b = await row.locator(sel).first().boundingBox();
      assert.ok(b && b.x >= 0 && b.x + b.width <= PHONE.width, `${sel} is on screen (${JSON.stringify(b)})`);
    }
    // A new browser remembers no handle and the strategy is shared, not private:
    // the page still finds it is yours (only its owner may change it).
    assert.equal(await p.locator(`#shared-table tr[data-strategy="${name}"]`).count(), 0);
    await row.getByRole("button", { name: `Make private (${name})` }).waitFor();
    await row.scrollIntoViewIfNeeded();
    await shot(p, "strategies-phone");
    await axe(p, "strategies-phone");
    await c.close();
  });

  test("Run a backtest with it: the backtest page has it filled in and runs it", async () => {
    const row = page.locator(`#mine-table tr[data-strategy="${name}"]`);
    const first = page.waitForResponse((r) => r.url().endsWith("/web/api/backtest") && r.request().method() === "POST", { timeout: 60_000 });
    await row.getByRole("link", { name: `Run a backtest with it (${name})` }).click();
    await page.waitForURL("**/backtest?**");
    assert.equal(new URL(page.url()).searchParams.get("strategy"), name);
    await page.locator(`#b-strategy option[value="${name}"]`).waitFor({ state: "attached" });
    assert.equal(await page.locator("#b-strategy").inputValue(), name);
    assert.equal((await first).status(), 200, "the run the link asks for answers 200");
    // Again on a small universe.
    await page.locator("form.bt-form button[type=submit]:not([disabled])").waitFor();
    await page.selectOption("#b-category", "Indices");
    await page.fill("#b-top_n", "2");
    const again = page.waitForResponse((r) => r.url().endsWith("/web/api/backtest") && r.request().method() === "POST", { timeout: 60_000 });
    await page.click("form.bt-form button[type=submit]");
    const res = await again;
    assert.equal(res.status(), 200);
    assert.equal(JSON.parse(res.request().postData()).strategy, name);
    assert.equal(JSON.parse(res.request().postData()).category, "Indices");
    await page.locator("#chart-equity canvas").waitFor({ timeout: 60_000 });
    assert.match(await page.locator("#bt-window").textContent(), /dip-buyer/);
  });

  test("its recent runs: the two backtests, as the server counts them", async () => {
    await page.goto("/strategies");
    const row = page.locator(`#mine-table tr[data-strategy="${name}"]`);
    await row.waitFor();
    const list = await page.evaluate(async () => (await fetch("/web/api/strategies")).json());
    const r = list.strategies.find((s) => s.name === name).resources;
    assert.equal(r.runs, 2, JSON.stringify(r));
    assert.ok(r.fuel && r.fuel.max > 0, "an upload is metered");
    const cell = await row.locator(".resources-cell").textContent();
    assert.match(cell, /Runs\s*2/);
    assert.match(cell, /Guest time\s*[\d.,]+/);
    assert.match(cell, /MiB/);
    assert.doesNotMatch(cell, /not metered/);
    await row.scrollIntoViewIfNeeded();
    await shot(page, "strategies-runs");
    // A built-in not run in this session says so.
    assert.match(await page.locator("#builtin-table tr[data-strategy=longshort] .resources-cell").textContent(), /Not run yet/);
  });

  test("delete it, with a confirm step", async () => {
    await page.goto("/strategies");
    const row = page.locator(`#mine-table tr[data-strategy="${name}"]`);
    await row.waitFor();
    await row.getByRole("button", { name: `Delete ${name}` }).click();
    const confirm = row.getByRole("group", { name: `Confirm deleting ${name}` });
    await confirm.waitFor();
    await confirm.getByRole("button", { name: "Keep" }).click();
    await row.getByRole("button", { name: `Delete ${name}` }).click();
    const gone = page.waitForResponse((r) => r.request().method() === "DELETE");
    await row.getByRole("button", { name: "Yes, delete" }).click();
    assert.equal((await gone).status(), 204);
    await page.locator("#mine", { hasText: "not uploaded a strategy yet" }).waitFor();
    assert.equal(await page.locator(`tr[data-strategy="${name}"]`).count(), 0);
    const list = await page.evaluate(async () => (await fetch("/web/api/strategies")).json());
    assert.ok(!list.strategies.some((s) => s.name === name), "the server no longer lists it");
  });

  test("a file that is not a component: the server's detail in an alert (picker and drop zone)", async () => {
    await page.setInputFiles("#strategy-file", { name: "garbage.wasm", mimeType: "application/wasm", buffer: Buffer.from("this is not wasm at all\n") });
    const alert = page.locator("#upload-error[role=alert]");
    await alert.waitFor({ timeout: 60_000 });
    assert.match(await alert.textContent(), /not a loadable strategy/);
    assert.equal(await page.locator("#upload-result").count(), 0);

    // Dropped on the drop zone: the same path.
    await page.evaluate(() => (document.querySelector("#upload-error").textContent = ""));
    const dt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File([new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])], "dropped.wasm", { type: "application/wasm" }));
      return d;
    });
    await page.locator("#dropzone").dispatchEvent("dragover", { dataTransfer: dt });
    await page.locator("#dropzone").dispatchEvent("drop", { dataTransfer: dt });
    await page.locator("#upload-error[role=alert]", { hasText: /\w/ }).waitFor({ timeout: 60_000 });
    const detail = await alert.textContent();
    assert.ok(detail.length > 10 && !/Something went wrong/.test(detail), `the server's detail: ${detail}`);

    // Not a .wasm file at all: refused before sending.
    const txt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File(["hello"], "notes.txt", { type: "text/plain" }));
      return d;
    });
    await page.locator("#dropzone").dispatchEvent("drop", { dataTransfer: txt });
    await page.locator("#upload-error", { hasText: "not a .wasm file" }).waitFor();
    await axe(page, "strategies-error");
  });

  kit.closingChecks();
});
