// What every browser suite does the same way, written once: the server and
// whether it serves this build, contexts, console-error and accessibility
// collection, screenshots, a signed-in Premium page, the closing checks.
// Each suite makes one `Suite` and takes what it needs from it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { start, webDir, repoRoot, PREMIUM, signIn, seriousA11y } from "./harness.mjs";

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
/** Three assets with real prices (AAPL's end in 2013). */
export const REAL_TRIO = ["AAPL", "MSFT", "^GSPC"];
/** Browser noise that is not an app error: the status line Chromium logs for an expected 4xx. */
export const EXPECTED_4XX = /Failed to load resource: the server responded with a status of 4\d\d/;
/** The same, and 503: the track record answers 503 until a grading run computed it. */
export const EXPECTED_4XX_503 = /Failed to load resource: the server responded with a status of (4\d\d|503)/;

/** How far the page scrolls sideways (0 when it does not). */
export const overflowX = (p) => p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

export class Suite {
  /**
   * `name` names the suite's screenshot folder under /tmp when the server
   * does not serve this build; `timeout` is each context's default wait;
   * `expected` the console lines that are not errors; `zone` makes every
   * context follow TZ (`make web-test` runs the suites under two).
   */
  constructor(name, { timeout = 15_000, expected = EXPECTED_4XX, zone = false } = {}) {
    this.name = name;
    this.timeout = timeout;
    this.expected = expected;
    this.zone = zone && process.env.TZ ? { timezoneId: process.env.TZ } : {};
    /** `start()`'s `{ base, browser, stop(), cli() }`. */
    this.env = null;
    /** Whether the binary embeds web/dist as built (only then do screenshots go to docs/). */
    this.servesThisBuild = false;
    this.consoleErrors = [];
    this.a11y = [];
    for (const m of ["watch", "newContext", "axe", "shot", "premiumPage", "signedIn"]) this[m] = this[m].bind(this);
  }

  /** Starts the server and the browser (harness.mjs); learns whether this build is served. */
  async start(extraEnv = {}) {
    this.env = await start(extraEnv);
    this.served = await (await fetch(`${this.env.base}/`)).text();
    this.built = readFileSync(join(webDir, "dist/index.html"), "utf8");
    this.servesThisBuild = process.env.WEB_DIST_PROXY !== "1" && this.served === this.built;
    console.log(`# server ${this.env.base} (setup ${this.env.setupMs} ms); screenshots to ${this.shotsDir}`);
    return this.env;
  }

  /** `start()`, then a watched Premium page signed in on a desktop context: `{ env, ctx, page }`. */
  async startSignedIn(extraEnv = {}) {
    await this.start(extraEnv);
    const { c, p } = await this.premiumPage("premium");
    return { env: this.env, ctx: c, page: p };
  }

  /** Stops the server and the browser, when they started. */
  async stop() {
    await this.env?.stop();
  }

  /** docs/screenshots when this build is served, else SHOTS_DIR or a folder under /tmp. */
  get shotsDir() {
    if (this.servesThisBuild) return join(repoRoot, "docs/screenshots");
    return process.env.SHOTS_DIR ?? join("/tmp/forecast-shots", this.name);
  }

  /** Collects the page's console errors (but `expected`) and uncaught exceptions, labelled. */
  watch(p, label) {
    p.on("console", (m) => {
      if (m.type() === "error" && !this.expected.test(m.text())) this.consoleErrors.push(`${label} ${p.url()}: ${m.text()}`);
    });
    p.on("pageerror", (e) => this.consoleErrors.push(`${label} ${p.url()}: ${e.message}`));
  }

  /** A light desktop context on the server (`opts` overrides: viewport, colorScheme, …). */
  async newContext(opts = {}) {
    const c = await this.env.browser.newContext({ viewport: DESKTOP, colorScheme: "light", baseURL: this.env.base, bypassCSP: true, ...this.zone, ...opts });
    c.setDefaultTimeout(this.timeout);
    return c;
  }

  /** A page in a new context with `opts`, watched as `label`, signed in as `email`: `{ c, p }`. */
  async signedIn(email, label, opts = {}) {
    const c = await this.newContext(opts);
    const p = await c.newPage();
    this.watch(p, label);
    await signIn(p, email);
    return { c, p };
  }

  /** A signed-in, watched Premium page in a new context with `opts`. */
  premiumPage(label, opts = {}) {
    return this.signedIn(PREMIUM, label, opts);
  }

  /** Keeps the page's serious and critical accessibility violations for `axeClean`. */
  async axe(p, name) {
    this.a11y.push(...(await seriousA11y(p, name)));
  }

  /**
   * A screenshot of a page or an element (`target`) to `shotsDir`; `opts`:
   * `full` (the whole page), `clip`, `tmp` (to /tmp whatever the build).
   */
  async shot(target, name, opts = {}) {
    const o = typeof opts === "boolean" ? { full: opts } : opts;
    const dir = o.tmp ? join("/tmp/forecast-shots", this.name) : this.shotsDir;
    mkdirSync(dir, { recursive: true });
    await target.screenshot({ path: join(dir, `${name}.png`), ...(o.full ? { fullPage: true } : {}), ...(o.clip ? { clip: o.clip } : {}) });
  }

  /** The suite's two closing tests: no accessibility violation and no console error was seen. */
  closingChecks() {
    test("no page has a serious or critical accessibility violation", () => {
      assert.deepEqual(this.a11y, [], this.a11y.join("\n"));
    });
    test("no page logged a console error", () => {
      assert.deepEqual(this.consoleErrors, [], this.consoleErrors.join("\n"));
    });
  }
}

/** Whether the page scrolls sideways, and which of `selectors`' first matches lie outside the viewport. */
export async function phoneLayout(p, selectors) {
  return p.evaluate((sels) => {
    const vw = document.documentElement.clientWidth;
    const out = [];
    for (const s of sels) {
      const el = document.querySelector(s);
      if (!el) {
        out.push(`${s}: missing`);
        continue;
      }
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) out.push(`${s}: not visible`);
      else if (r.left < 0 || r.right > vw + 0.5) out.push(`${s}: ${Math.round(r.left)}–${Math.round(r.right)} outside 0–${vw}`);
    }
    return { scrollWidth: document.documentElement.scrollWidth, bodyScroll: document.body.scrollWidth, vw, out };
  }, selectors);
}

/** How many requests `p` makes that `match(request)` accepts while `fn` runs. */
export async function counting(p, match, fn) {
  let n = 0;
  const on = (r) => match(r) && n++;
  p.on("request", on);
  try {
    await fn();
  } finally {
    p.off("request", on);
  }
  return n;
}

/** Deep equality, numbers equal to a relative 1e-12. */
export function assertClose(x, y, path) {
  if (typeof x === "number" && typeof y === "number") {
    assert.ok(Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(x), Math.abs(y)), `${path}: ${x} ≠ ${y}`);
  } else if (x && y && typeof x === "object" && typeof y === "object") {
    assert.deepEqual(Object.keys(x).sort(), Object.keys(y).sort(), `${path}: the same fields`);
    for (const k of Object.keys(x)) assertClose(x[k], y[k], `${path}.${k}`);
  } else {
    assert.equal(x, y, path);
  }
}

/** Pixels in a chart's plotting area drawn in a series colour (not grid, not background). */
export async function ink(p, chartId) {
  return p.evaluate((id) => {
    const root = document.getElementById(id);
    const canvas = root?.querySelector("canvas");
    const over = root?.querySelector(".u-over");
    if (!canvas || !over) return -1;
    const cs = getComputedStyle(document.documentElement);
    const colours = ["--accent", "--accent-2", "--neg", "--pos"].map((v) => {
      const probe = document.createElement("span");
      probe.style.color = cs.getPropertyValue(v);
      document.body.appendChild(probe);
      const m = getComputedStyle(probe).color.match(/\d+/g).map(Number);
      probe.remove();
      return m;
    });
    const cr = canvas.getBoundingClientRect();
    const or = over.getBoundingClientRect();
    const sx = canvas.width / cr.width;
    const sy = canvas.height / cr.height;
    const data = canvas.getContext("2d").getImageData(Math.round((or.left - cr.left) * sx), Math.round((or.top - cr.top) * sy), Math.round(or.width * sx), Math.round(or.height * sy)).data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] < 100) continue;
      for (const c of colours) {
        if (Math.abs(data[i] - c[0]) + Math.abs(data[i + 1] - c[1]) + Math.abs(data[i + 2] - c[2]) < 90) {
          n++;
          break;
        }
      }
    }
    return n;
  }, chartId);
}

export const isAnalysis = (r) => /\/web\/api\/analysis\/[^/?]+(\?|$)/.test(r.url()) && r.request().method() === "GET";
export const isVerdict = (r) => /\/web\/api\/analysis\/[^/?]+\/verdict/.test(r.url());

/**
 * Opens an asset page at `path` and waits for its verdict card; returns the
 * analysis and verdict responses the page itself fetched and their JSON.
 */
export async function openAsset(p, path) {
  const [analysis, verdict] = await Promise.all([p.waitForResponse(isAnalysis, { timeout: 60_000 }), p.waitForResponse(isVerdict, { timeout: 60_000 }), p.goto(path)]);
  await p.locator("#verdict .grade").waitFor();
  return { analysis, verdict, a: await analysis.json(), v: await verdict.json() };
}
