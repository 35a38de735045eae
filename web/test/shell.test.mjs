// The app's shell in the browser: the skip link and the focus after each
// navigation, the header's asset search, the in-app not-found page, the
// Free tier's locks and the plans page, the glossary, and the shell's pages
// at 1280×800 and on a phone (390×844): no sideways scroll, no serious or
// critical axe violation, the useful columns on screen. See test/harness.mjs.
//
// FORECAST_UPGRADE_URL is set for the server (the harness passes the
// environment through), so the plans page must link to it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Suite, DESKTOP, PHONE, overflowX } from "./kit.mjs";

const UPGRADE = "https://billing.example.test/upgrade?from=forecast";
process.env.FORECAST_UPGRADE_URL = UPGRADE;
const { webDir, PREMIUM, FREE, signIn } = await import("./harness.mjs");

/** Every TermId of src/glossary-link.tsx (the `Help` links' targets). */
const TERMS = (() => {
  const src = readFileSync(join(webDir, "src/glossary-link.tsx"), "utf8");
  const block = /export type TermId =([\s\S]*?);/.exec(src)[1];
  return [...block.matchAll(/"([a-z0-9-]+)"/g)].map((m) => m[1]);
})();

let env;
const kit = new Suite("shell");
const { watch, newContext, axe, shot } = kit;

/** The element that has the focus: tag, text and whether it is inside #main. */
const focused = (p) =>
  p.evaluate(() => {
    const a = document.activeElement;
    return { tag: a?.tagName ?? "", text: (a?.textContent ?? "").trim(), inMain: !!a?.closest?.("#main"), id: a?.id ?? "" };
  });

/** Waits until the focus is on the page's h1 and its text matches `re`. */
async function focusOnHeading(p, re) {
  await p.waitForFunction(
    (src) => {
      const a = document.activeElement;
      return a?.tagName === "H1" && !!a.closest("#main") && new RegExp(src).test(a.textContent ?? "");
    },
    re.source,
  );
}

describe("the app's shell", { timeout: 240_000 }, () => {
  let premium; // the Premium user's context and page
  let page;

  before(async () => {
    ({ env, ctx: premium, page } = await kit.startSignedIn());
  });

  after(() => kit.stop());

  test("the skip link moves the focus to the page's heading", async () => {
    await page.goto("/explore");
    await page.getByRole("heading", { level: 1, name: "Explore the catalog" }).waitFor();
    await page.keyboard.press("Tab");
    const first = await focused(page);
    assert.equal(first.text, "Skip to content", "the skip link is the first stop");
    assert.ok(await page.locator("a.skip").isVisible(), "the focused skip link is visible");
    await page.keyboard.press("Enter");
    const after = await focused(page);
    assert.deepEqual([after.tag, after.inMain, after.text], ["H1", true, "Explore the catalog"]);
    // The next Tab goes on from the main content, not from the header.
    await page.keyboard.press("Tab");
    assert.ok((await focused(page)).inMain, "Tab continues inside the main content");
  });

  test("after each in-app navigation the focus is on the new page's heading and the title follows", async () => {
    await page.goto("/explore");
    await page.getByRole("heading", { level: 1, name: "Explore the catalog" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Ranking" }).click();
    await page.waitForURL((u) => u.pathname === "/ranking");
    await focusOnHeading(page, /Ranking/);
    await page.waitForFunction(() => document.title.startsWith("Ranking"));
    // A link inside the page (the catalog's ticker) too, to a page that loads its data first.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Explore" }).click();
    await focusOnHeading(page, /Explore the catalog/);
    await page.fill("#search", "nasdaq");
    // Filtering changes the query string, not the page: the focus stays in the field.
    await page.waitForURL((u) => u.searchParams.get("q") === "nasdaq");
    assert.equal((await focused(page)).id, "search");
    await page.locator("tbody a.ticker", { hasText: "^IXIC" }).click();
    await page.waitForURL((u) => u.pathname === "/assets/%5EIXIC");
    await focusOnHeading(page, /\^IXIC/);
    // Back goes back, and the focus follows too.
    await page.goBack();
    await page.waitForURL((u) => u.pathname === "/explore");
    await focusOnHeading(page, /Explore the catalog/);
    // A "?" opens its glossary entry over the page; Escape closes it and
    // the focus returns; "More in the glossary" lands on the entry.
    await page.goto("/explore");
    const help = page.locator("a.help[href='/glossary#data-sources']").first();
    await help.click();
    const pop = page.locator(".help-pop:popover-open");
    await pop.waitFor();
    assert.equal(new URL(page.url()).pathname, "/explore", "the page stays");
    assert.match(await pop.innerText(), /Data source/i);
    await page.waitForFunction(() => document.activeElement?.className === "help-pop-close");
    await page.keyboard.press("Escape");
    await page.locator(".help-pop:popover-open").waitFor({ state: "detached" });
    await help.click();
    await pop.getByRole("link", { name: "More in the glossary" }).click();
    await page.waitForURL((u) => u.pathname === "/glossary" && u.hash === "#data-sources");
    await page.waitForFunction(() => document.activeElement?.id === "data-sources");
  });

  test("the header search finds an asset by ticker or by name", async () => {
    await page.goto("/glossary");
    const box = page.locator("#header-search");
    assert.equal(await box.getAttribute("role"), "combobox");
    // An exact ticker and Enter: straight to its page.
    await box.fill("msft");
    await box.press("Enter");
    await page.waitForURL((u) => u.pathname === "/assets/MSFT");
    await focusOnHeading(page, /MSFT/);
    // A name: suggestions, chosen with the keyboard.
    await box.fill("nasdaq");
    const option = page.locator("#header-search-list [role=option]", { hasText: "^IXIC" });
    await option.waitFor();
    assert.equal(await box.getAttribute("aria-expanded"), "true");
    const options = await page.locator("#header-search-list [role=option] .ticker").allTextContents();
    const i = options.indexOf("^IXIC");
    for (let k = 0; k <= i; k++) await box.press("ArrowDown");
    assert.equal(await box.getAttribute("aria-activedescendant"), `header-search-opt-${i}`);
    assert.equal(await page.getAttribute(`#header-search-opt-${i}`, "aria-selected"), "true");
    await box.press("Enter");
    await page.waitForURL((u) => u.pathname === "/assets/%5EIXIC");
    assert.equal(await box.inputValue(), "", "the field is cleared after going");
    // The asset a name means comes first: Bitcoin before Bitcoin Cash,
    // gold before Goldman Sachs.
    for (const [text, first] of [["bitcoin", "BTC-USD"], ["gold", "GC=F"]]) {
      await box.fill(text);
      // The suggestions of this text, not the last one's.
      await page.waitForFunction((q) => {
        const o = [...document.querySelectorAll("#header-search-list [role=option]")];
        return o.length > 0 && o.every((e) => e.textContent.toLowerCase().includes(q));
      }, text);
      const shown = await page.locator("#header-search-list [role=option] .ticker").allTextContents();
      assert.equal(shown[0], first, `${text}: ${shown}`);
    }
    // By mouse too.
    await box.fill("bitcoin");
    await page.locator("#header-search-list [role=option]", { hasText: "BTC-USD" }).click();
    await page.waitForURL((u) => u.pathname === "/assets/BTC-USD");
    // Escape closes the suggestions.
    await box.fill("app");
    await page.locator("#header-search-list [role=option]").first().waitFor();
    await box.press("Escape");
    assert.equal(await box.getAttribute("aria-expanded"), "false");
    assert.ok(await page.locator("#header-search-list").isHidden());
    // Text that is no ticker: the catalog filtered by it.
    await box.fill("zzzz no such asset");
    await page.locator(".search-note", { hasText: "No asset matches" }).waitFor();
    await box.press("Enter");
    await page.waitForURL((u) => u.pathname === "/explore" && u.searchParams.get("q") === "zzzz no such asset");
    await page.getByText(/0 of \d+ assets match/).waitFor();
  });

  test("an unknown path is the in-app not-found page, and its search works", async () => {
    const r = await page.goto("/nope");
    // The binary answers an unknown path with the app and a 404 (WEB_DIST_PROXY's front server says 200).
    if (process.env.WEB_DIST_PROXY !== "1") assert.equal(r.status(), 404, "the server still answers 404 for the document");
    await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor();
    assert.match(await page.locator("main p").first().innerText(), /^There is nothing at this address\..*\.$/);
    // The title is set by an effect after the page has rendered.
    await page.waitForFunction(() => document.title === "Page not found · Forecast Engine", null, { timeout: 5_000 });
    const box = page.locator("#nf-search");
    await box.fill("apple");
    await page.locator("#nf-search-list [role=option]", { hasText: "AAPL" }).waitFor();
    await box.fill("AAPL");
    await box.press("Enter");
    await page.waitForURL((u) => u.pathname === "/assets/AAPL");
    // In-app navigation to an unknown path shows it too, with the focus on its heading.
    await page.evaluate(() => {
      const a = document.createElement("a");
      a.href = "/also/not/here";
      a.textContent = "x";
      document.querySelector("#main").appendChild(a);
      a.click();
    });
    await focusOnHeading(page, /Page not found/);
    await page.getByRole("link", { name: "your watchlist" }).waitFor();
  });

  test("an unknown ticker is the same not-found page, with the ticker in the search (needs the asset page's part)", async () => {
    await page.goto("/assets/NOPE");
    await page.getByRole("heading", { level: 1, name: /NOPE/ }).waitFor();
    assert.equal(await page.locator("#nf-search").inputValue(), "NOPE");
    assert.equal(await page.locator(".note-error").count(), 0, "no raw error");
  });

  test("a Free user sees the locks before clicking, a locked page instead of an error, and the plans", async () => {
    const c = await newContext();
    const p = await c.newPage();
    watch(p, "free");
    const dataCalls = [];
    p.on("request", (r) => {
      if (new URL(r.url()).pathname.startsWith("/web/api/")) dataCalls.push(r.url());
    });
    await signIn(p, FREE);
    const nav = p.getByRole("navigation", { name: "Main" });
    for (const name of ["Explore", "Ranking", "Backtest", "API keys"]) {
      const link = nav.getByRole("link", { name: `${name} (Premium)`, exact: true });
      await link.waitFor();
      assert.equal(await link.locator("svg.lock").count(), 1, `${name} carries a padlock`);
    }
    for (const name of ["Watchlist", "Glossary"]) await nav.getByRole("link", { name, exact: true }).waitFor();
    // Clicking one: the page says what it would show and links to the plans.
    await nav.getByRole("link", { name: "Ranking (Premium)" }).click();
    await p.getByRole("heading", { level: 1, name: /^Ranking/ }).waitFor();
    await focusOnHeading(p, /Ranking/);
    await p.getByText("This page needs the Premium tier.").waitFor();
    assert.match(await p.locator(".locked-card").innerText(), /With Premium, this page shows every graded asset ranked/);
    assert.equal(await p.locator(".note-error").count(), 0);
    for (const [path, h] of [
      ["/explore", "Explore the catalog"],
      ["/backtest", "Backtest a strategy"],
      ["/assets/%5EGSPC", "^GSPC"],
    ]) {
      await p.goto(path);
      await p.getByRole("heading", { level: 1, name: new RegExp(`^${h.replace(/\^/g, "\\^")}`) }).waitFor();
      await p.getByText("This page needs the Premium tier.").waitFor();
      await axe(p, `locked ${path}`);
    }
    assert.deepEqual(dataCalls, [], "a locked page asks the server for nothing");
    // The keys page: no form to fill and fail; the explanation instead.
    await p.goto("/keys");
    await p.getByRole("heading", { name: /Creating keys needs Premium/ }).waitFor();
    assert.equal(await p.locator("#key-name").count(), 0);
    await p.getByText("No active keys.").waitFor();
    // The plans page.
    await p.getByRole("link", { name: "Compare the plans" }).click();
    await p.waitForURL((u) => u.pathname === "/plans");
    await focusOnHeading(p, /Plans/);
    const text = await p.locator("main").innerText();
    assert.match(text, /Your account is on the Free tier\./);
    assert.match(text, /60 units per minute and 1,000 per day/);
    assert.match(text, /up to 5 active at once/);
    await axe(p, "plans (free)");
    // The header's search asks the matcher for a Free account (the catalog is Premium data).
    const box = p.locator("#header-search");
    await box.fill("microsoft");
    await box.press("Enter");
    await p.locator("#header-search-list [role=option]", { hasText: "MSFT" }).waitFor();
    await box.press("Enter");
    await p.waitForURL((u) => u.pathname === "/assets/MSFT");
    await p.getByText("This page needs the Premium tier.").waitFor();
    assert.deepEqual(dataCalls, [], "searching as a Free account makes no data call");
    await c.close();
  });

  test("the plans page links to the operator's upgrade page (needs FORECAST_UPGRADE_URL on the server)", async () => {
    const { c, p } = await kit.signedIn(FREE, "free");
    await p.goto("/plans");
    const link = p.locator("#upgrade-link");
    await link.waitFor();
    assert.equal(await link.getAttribute("href"), UPGRADE);
    assert.equal(await p.locator("#upgrade-ask").count(), 0);
    await c.close();
  });

  test("the glossary has an entry for every term, and every help link on the pages lands on one", async () => {
    await page.goto("/glossary");
    await page.getByRole("heading", { level: 1, name: "Glossary" }).waitFor();
    const ids = await page.$$eval("main [id]", (els) => els.map((e) => e.id));
    const missing = TERMS.filter((t) => !ids.includes(t));
    assert.ok(TERMS.length >= 20, `read ${TERMS.length} term ids`);
    assert.deepEqual(missing, [], "every TermId has a glossary entry");
    for (const t of TERMS) {
      const text = (await page.locator(`[id="${t}"] + dd`).innerText()).trim();
      assert.ok(text.length > 60 && /\.$/.test(text), `${t}: a sentence or more (${text.slice(0, 40)}…)`);
    }
    // In-page links of the glossary resolve too.
    const inner = await page.$$eval("main a[href^='#']", (as) => as.map((a) => a.getAttribute("href").slice(1)));
    assert.deepEqual(inner.filter((h) => !ids.includes(h)), []);
    // Every "?" on the pages points at an existing entry.
    await page.request.put("/web/watchlist", { data: { tickers: ["AAPL", "BTC-USD"] }, headers: { Origin: env.base } });
    const links = new Set();
    for (const path of ["/", "/explore", "/ranking", "/assets/%5EGSPC", "/backtest", "/keys", "/plans"]) {
      await page.goto(path);
      await page.locator("h1").first().waitFor();
      await page.waitForLoadState("networkidle");
      for (const h of await page.$$eval("a.help", (as) => as.map((a) => a.getAttribute("href")))) links.add(`${path} → ${h}`);
    }
    const bad = [...links].filter((l) => {
      const m = /→ \/glossary#(.+)$/.exec(l);
      return !m || !ids.includes(m[1]);
    });
    assert.ok(links.size > 0, "the pages have help links");
    assert.deepEqual(bad, [], "help links without a glossary entry");
  });

  for (const [label, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ]) {
    test(`the shell's pages at ${viewport.width}×${viewport.height}: no sideways scroll, axe clean`, async () => {
      const c = await newContext({ viewport });
      const p = await c.newPage();
      watch(p, label);
      // Signed out first: the sign-in page.
      await p.goto("/login");
      await p.locator("#email").waitFor();
      assert.ok((await overflowX(p)) <= 0, `/login scrolls sideways by ${await overflowX(p)} px`);
      await axe(p, `login (${label})`);
      if (label === "phone") await shot(p, "login-phone");
      await signIn(p, PREMIUM);
      // A key, so the keys table has a row.
      await p.request.post("/api/keys", { data: { name: `a rather long key name for ${label} screens` }, headers: { Origin: env.base } });
      const pages = [
        ["/onboarding", "onboarding"],
        ["/explore?category=Indices", "explore"],
        ["/keys", "keys"],
        ["/plans", "plans"],
        ["/glossary", "glossary"],
        ["/nope", "not-found"],
      ];
      for (const [path, name] of pages) {
        await p.goto(path);
        await p.locator("h1").first().waitFor();
        await p.waitForLoadState("networkidle");
        const ox = await overflowX(p);
        assert.ok(ox <= 0, `${path} scrolls sideways by ${ox} px at ${viewport.width} px`);
        await axe(p, `${name} (${label})`);
        if (label === "phone") await shot(p, `${name}-phone`);
      }
      if (label === "phone") {
        // The keys table keeps the name, the prefix and Revoke on screen.
        await p.goto("/keys");
        const row = p.locator("tbody tr").first();
        await row.waitFor();
        for (const cell of [row.locator("td").first(), row.locator("td.mono"), row.getByRole("button", { name: /^Revoke / })]) {
          const b = await cell.boundingBox();
          assert.ok(b && b.x >= 0 && b.x + b.width <= viewport.width, `${await cell.innerText()} is on screen (${JSON.stringify(b)})`);
        }
        // The catalog keeps the ticker (the link to the asset) and the name.
        await p.goto("/explore?category=Indices");
        const er = p.locator("tbody tr", { hasText: "^GSPC" });
        await er.waitFor();
        for (const cell of [er.locator("a.ticker"), er.locator("td.card-sub")]) {
          const b = await cell.boundingBox();
          assert.ok(b && b.x >= 0 && b.x + b.width <= viewport.width, `${await cell.innerText()} is on screen`);
        }
        // The header: the search on screen, the navigation behind the menu button.
        const search = await p.locator("#header-search").boundingBox();
        assert.ok(search && search.width >= 200 && search.x + search.width <= viewport.width, "the search is usable");
        const menu = p.getByRole("button", { name: "Menu" });
        assert.equal(await menu.getAttribute("aria-expanded"), "false");
        assert.ok(await p.getByRole("link", { name: "Ranking" }).isHidden());
        await menu.click();
        assert.equal(await menu.getAttribute("aria-expanded"), "true");
        await p.getByRole("link", { name: "Ranking" }).waitFor();
        assert.ok(await p.getByRole("button", { name: "Sign out" }).isVisible());
        assert.ok((await overflowX(p)) <= 0, "the open menu does not scroll sideways");
        await axe(p, "menu open (phone)");
        await shot(p, "menu-phone");
        await p.getByRole("link", { name: "Ranking" }).click();
        await p.waitForURL((u) => u.pathname === "/ranking");
        // The menu closes when the new page renders, just after the URL
        // changes: poll for it (up to 5 s) before asserting.
        for (let i = 0; i < 100 && (await menu.getAttribute("aria-expanded")) !== "false"; i++) {
          await p.waitForTimeout(50);
        }
        assert.equal(await menu.getAttribute("aria-expanded"), "false", "the menu closes after going");
        // The search's suggestions fit the screen.
        await p.locator("#header-search").fill("a");
        await p.locator("#header-search-list [role=option]").first().waitFor();
        assert.ok((await overflowX(p)) <= 0, "the suggestions do not scroll sideways");
        await shot(p, "search-phone");
        // A Free account's locked page and the plans, on a phone.
        const f = await newContext({ viewport });
        const fp = await f.newPage();
        watch(fp, "free phone");
        await signIn(fp, FREE);
        for (const [path, name] of [
          ["/ranking", "locked-phone"],
          ["/plans", "plans-free-phone"],
        ]) {
          await fp.goto(path);
          await fp.locator("h1").first().waitFor();
          assert.ok((await overflowX(fp)) <= 0, `${path} (free) scrolls sideways`);
          await axe(fp, `${name}`);
          await shot(fp, name);
        }
        await f.close();
      }
      await c.close();
    });
  }

  kit.closingChecks();
});
