// `make bench-web`: how fast the first page becomes interactive on
// loopback (issue 13's budget: ≤ 1 s), measured in Debian's Chromium
// against the real binary — a benchmark, not a test: it prints figures
// and never fails on them.
//
// Each sample is a fresh browser context (empty cache): navigation starts,
// then the page is interactive when its first control is enabled (the
// sign-in form's e-mail field; the signed-in watchlist's and asset page's
// content). Prints median and worst of RUNS samples per page.
import { start, PASSWORD, PREMIUM } from "./harness.mjs";
import { jsSizes } from "./size.mjs";

const RUNS = Number(process.env.RUNS ?? 15);
const env = await start();
const pages = [
  { name: "/login (signed out)", path: "/login", ready: "#email:enabled", signedIn: false },
  { name: "/ (watchlist, signed in)", path: "/", ready: "main h1", signedIn: true },
  { name: "/assets/%5EGSPC (charts, signed in)", path: "/assets/%5EGSPC", ready: "#chart-price canvas", signedIn: true },
];

async function signedInState() {
  const c = await env.browser.newContext({ baseURL: env.base });
  const p = await c.newPage();
  await p.goto("/login");
  await p.fill("#email", PREMIUM);
  await p.fill("#password", PASSWORD);
  await p.click("button[type=submit]");
  await p.waitForURL((u) => !u.pathname.startsWith("/login"));
  const state = await c.storageState();
  await c.close();
  return state;
}

const rows = [];
try {
  const state = await signedInState();
  for (const pg of pages) {
    const samples = [];
    for (let i = 0; i < RUNS; i++) {
      const c = await env.browser.newContext({ baseURL: env.base, storageState: pg.signedIn ? state : undefined });
      const p = await c.newPage();
      const t0 = performance.now();
      await p.goto(pg.path, { waitUntil: "commit" });
      await p.locator(pg.ready).first().waitFor({ timeout: 30_000 });
      samples.push(performance.now() - t0);
      await c.close();
    }
    samples.sort((a, b) => a - b);
    rows.push({ page: pg.name, median: samples[Math.floor(samples.length / 2)], worst: samples[samples.length - 1] });
  }
} finally {
  await env.stop();
}
const total = jsSizes().reduce((n, s) => n + s.gzip, 0);
console.log(`JavaScript: ${(total / 1024).toFixed(1)} KB gzip (budget 250 KB)`);
console.log(`| page | median to interactive | worst of ${RUNS} | target |`);
console.log("|---|---|---|---|");
for (const r of rows) console.log(`| ${r.page} | ${r.median.toFixed(0)} ms | ${r.worst.toFixed(0)} ms | ≤ 1,000 ms |`);
// `make bench` collects every bench's headline figures in one table.
if (process.env.BENCH_SUMMARY) {
  const { appendFileSync } = await import("node:fs");
  const verdict = (ok) => (ok ? "met" : "**missed**");
  const lines = [`| web app JavaScript (gzip) | ${(total / 1024).toFixed(1)} KB | ≤ 250 KB | ${verdict(total <= 250 * 1024)} |`];
  for (const r of rows) lines.push(`| web page ${r.page} to interactive (median of ${RUNS}) | ${r.median.toFixed(0)} ms | ≤ 1,000 ms | ${verdict(r.median <= 1000)} |`);
  appendFileSync(process.env.BENCH_SUMMARY, lines.join("\n") + "\n");
}
