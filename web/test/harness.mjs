// Test fixture: a temporary database with the demo universe and two users,
// `forecast serve` on a free port, and headless Chromium (Debian's, driven
// by playwright-core; no browser is downloaded).
//
// Environment:
//   FORECAST_BIN     the binary (default ../target/release/forecast)
//   CHROMIUM         the browser (default /usr/bin/chromium)
//   WEB_DIST_PROXY=1 serve this folder's dist/ through a small Node front
//                    server that proxies /api, /web and /auth to the binary,
//                    instead of the build embedded in the binary (for working
//                    on the front end without rebuilding the binary)
//   WEB_DIST_DIR     with WEB_DIST_PROXY, the build to serve (default dist/;
//                    e.g. `npx vite build --outDir /tmp/my-dist`)
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync, statSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve, extname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const here = fileURLToPath(new URL(".", import.meta.url));
export const webDir = resolve(here, "..");
export const repoRoot = resolve(webDir, "..");
const bin = resolve(webDir, process.env.FORECAST_BIN ?? join(repoRoot, "target/release/forecast"));

export const PASSWORD = "correct-horse-battery-" + Math.random().toString(36).slice(2, 10);
export const PREMIUM = "premium@forecast.test";
export const FREE = "free@forecast.test";

function run(args, env, input) {
  const r = spawnSync(bin, args, { env, input, encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`forecast ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * Starts everything; returns { base, browser, stop(), cli(args) }. `extraEnv`
 * is added to the binary's environment (e.g. FORECAST_ALERTS_INTERVAL_MS);
 * `cli(args)` runs the binary's CLI against the same database (e.g.
 * `["alerts", "check"]`) and returns its output.
 */
export async function start(extraEnv = {}) {
  if (!existsSync(bin)) throw new Error(`no forecast binary at ${bin}: run 'make build' (or set FORECAST_BIN)`);
  const work = mkdtempSync(join(tmpdir(), "forecast-web-test-"));
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite://${join(work, "f.db")}`,
    RUST_LOG: process.env.RUST_LOG ?? "warn",
    FORECAST_GRADING: "off",
    FORECAST_MATCH_PER_MINUTE: "100000",
    // Compiled uploads in the run's own folder, not the user's cache.
    FORECAST_MODULE_CACHE: join(work, "modules"),
    ...extraEnv,
  };
  delete env.FORECAST_ORIGIN;
  delete env.FORECAST_ADMIN_TOKEN;
  delete env.FORECAST_LLM_URL;

  const t0 = Date.now();
  const small = run(["demo", "load", "--help"], env).includes("--small");
  run(["demo", "load", ...(small ? ["--small"] : [])], env);
  run(["grade"], env);
  for (const [email, tier] of [
    [PREMIUM, "premium"],
    [FREE, "free"],
  ]) {
    run(["user", "add", "--email", email, "--tier", tier, "--password-stdin"], env, PASSWORD + "\n");
  }
  // The suite makes many data calls; quotas are not what it tests.
  run(["user", "set-limits", "--email", PREMIUM, "--per-minute", "100000", "--per-day", "1000000"], env);
  const setupMs = Date.now() - t0;

  // With WEB_DIST_PROXY the browser talks to a front server, which is then
  // the origin the binary must accept.
  let front = null;
  let frontPort = 0;
  if (process.env.WEB_DIST_PROXY === "1") {
    front = createServer();
    await new Promise((ok) => front.listen(0, "127.0.0.1", ok));
    frontPort = front.address().port;
    env.FORECAST_ORIGIN = `http://127.0.0.1:${frontPort}`;
  }

  env.FORECAST_ADDR = "127.0.0.1:0";
  const server = spawn(bin, ["serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const drain = (d) => {
    log += d.toString();
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  server.stderr.on("data", drain);
  const serverBase = await new Promise((ok, fail) => {
    let buf = "";
    const timer = setTimeout(() => fail(new Error(`forecast serve did not start:\n${log}`)), 60_000);
    server.stdout.on("data", (d) => {
      drain(d);
      buf += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(buf);
      if (m && buf.includes("\n")) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    server.on("exit", (code) => fail(new Error(`forecast serve exited (${code}):\n${log}`)));
  });

  let base = serverBase;
  if (front) {
    serveDist(front, serverBase);
    base = `http://127.0.0.1:${frontPort}`;
  }

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--font-render-hinting=none"],
  });

  const stop = async () => {
    await browser.close().catch(() => {});
    server.kill("SIGTERM");
    front?.close();
    await new Promise((ok) => (server.exitCode !== null ? ok() : server.once("exit", ok)));
    rmSync(work, { recursive: true, force: true });
  };
  return { base, serverBase, browser, stop, setupMs, serverLog: () => log, cli: (args) => run(args, env) };
}

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon" };

/** The front server of WEB_DIST_PROXY: dist/ for pages and /static, the rest proxied. */
function serveDist(front, target) {
  const dist = resolve(process.env.WEB_DIST_DIR ?? join(webDir, "dist"));
  const t = new URL(target);
  front.on("request", (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (/^\/(api|web|auth)(\/|$)/.test(path)) {
      const up = httpRequest({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on("error", () => {
        res.writeHead(502).end();
      });
      req.pipe(up);
      return;
    }
    let file = join(dist, path.startsWith("/static/") ? path : "index.html");
    if (!file.startsWith(dist) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"detail":"not found"}');
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
}

/** Signs `p` in through the sign-in page and waits to leave it. */
export async function signIn(p, email) {
  await p.goto("/login");
  await p.fill("#email", email);
  await p.fill("#password", PASSWORD);
  await p.click("button[type=submit]");
  await p.waitForURL((u) => !u.pathname.startsWith("/login"));
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core on `p`: its serious and critical violations, one line each, prefixed by `name`. */
export async function seriousA11y(p, name) {
  await p.addScriptTag({ content: axeSource });
  const r = await p.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${name}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
}
