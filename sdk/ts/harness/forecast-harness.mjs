// A backtest of a built TypeScript strategy component through the real server.
//
// The Node twin of sdk/python/harness/forecast_harness.py: it uploads the
// component as `forecast-plugin publish` would (`POST /api/strategies`: the
// server's own type check, self-test, fuel, memory cap and deadline apply)
// and backtests the version it stored with `POST /api/backtest`. The answer
// is the server's. The server is either
//  * a running one, when FORECAST_URL and FORECAST_API_KEY are set (the
//    server you publish to; no Rust build needed): the upload is yours there,
//    a private version of your strategy, as `publish` would store it; or
//  * the `forecast` binary (FORECAST_BIN, else target/release/forecast),
//    started on a private copy of the demo universe (its real histories ship
//    in data/prices/, data/PROVENANCE.md) and stopped afterwards.
//
//     const h = await Harness.start();
//     const name = await h.upload("build/my_strategy.wasm");   // "@handle/name@version"
//     const report = await h.backtest({ strategy: name, tickers: REAL_TICKERS, top_n: 3 });
//     await h.close();
//
// Only Node's standard library is used (Node 18 or later: global fetch).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Assets of the demo universe whose histories are real (data/prices/). */
export const REAL_TICKERS = [
  "AAPL", "AMZN", "BA", "CAT", "CVX", "DIS", "GE", "HD", "IBM", "INTC",
  "JNJ", "JPM", "KO", "MCD", "MMM", "MRK", "MSFT", "PEP", "PFE", "PG",
  "WMT", "XOM", "SPY", "DIA", "TLT", "XLE", "XLF", "XLK",
];

const EMAIL = "harness@forecast.local";
const PASSWORD = "harness-password-1234";

/** The server refused or failed something; `status` and `body` say what. */
export class HarnessError extends Error {
  constructor(what, status, body) {
    super(`${what}: ${status} ${JSON.stringify(body).slice(0, 2000)}`);
    this.status = status;
    this.body = body;
  }
}

/** `FORECAST_BIN`, else the repository's target/release/forecast. */
export function forecastBin() {
  const path = process.env.FORECAST_BIN ?? join(ROOT, "target/release/forecast");
  if (!existsSync(path)) {
    throw new Error(
      `${path} not found. Either test on a running server (the one you publish to): set FORECAST_URL and ` +
        "FORECAST_API_KEY (a Premium key); or build the server with `cargo build --release --bin forecast` " +
        "at the repository root (or set FORECAST_BIN)",
    );
  }
  return path;
}

/** FORECAST_URL and FORECAST_API_KEY, when both are set. */
export function remote() {
  const url = (process.env.FORECAST_URL ?? "").trim().replace(/\/+$/, "");
  const key = (process.env.FORECAST_API_KEY ?? "").trim();
  if (url && !key) {
    throw new Error("FORECAST_URL is set but FORECAST_API_KEY is not: a Premium API key of that server is needed to upload");
  }
  return url ? { url, key } : undefined;
}

/** A running server (FORECAST_URL, FORECAST_API_KEY), else `forecast serve`
 * on a free port over a fresh copy of the demo universe, with a Premium
 * account whose quotas never bind. */
export class Harness {
  constructor(binary, dir) {
    this.binary = binary;
    this.dir = dir;
    this.base = "";
    this.key = "";
    this.process = undefined;
    this.remote = false;
  }

  env() {
    return {
      ...process.env,
      DATABASE_URL: `sqlite://${join(this.dir, "forecast.db")}`,
      FORECAST_MODULE_CACHE: "off",
      // No background grading or alerts: they would only slow the run down.
      FORECAST_GRADING: "off",
      FORECAST_ALERTS: "off",
      RUST_LOG: process.env.RUST_LOG ?? "error",
    };
  }

  cli(args, input = "") {
    const out = spawnSync(this.binary, args, { input, env: this.env(), encoding: "utf8", cwd: ROOT });
    if (out.status !== 0) throw new Error(`forecast ${args.join(" ")} failed: ${out.stderr.slice(-2000)}`);
    return out.stdout;
  }

  static async start(binary) {
    const server = binary ? undefined : remote();
    if (server) {
      const h = new Harness(undefined, undefined);
      h.remote = true;
      h.base = server.url;
      h.key = server.key;
      const [status, body] = await h.request("GET", "/api/health");
      if (status !== 200) throw new HarnessError(`GET ${h.base}/api/health`, status, body);
      return h;
    }
    binary ??= forecastBin();
    const h = new Harness(binary, mkdtempSync(join(tmpdir(), "forecast-harness-")));
    h.cli(["demo", "load"]);
    h.cli(["user", "add", "--email", EMAIL, "--tier", "premium", "--password-stdin"], `${PASSWORD}\n`);
    h.cli(["user", "set-limits", "--email", EMAIL, "--per-minute", "1000000", "--per-day", "1000000"]);
    h.key = h.cli(["key", "create", "--email", EMAIL, "--name", "harness"]).trim().split("\n").pop().trim();
    h.process = spawn(binary, ["serve"], {
      env: { ...h.env(), FORECAST_ADDR: "127.0.0.1:0" },
      cwd: ROOT, // where data/models and data/reference are
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines = createInterface({ input: h.process.stdout });
    const first = await new Promise((ok, fail) => {
      lines.once("line", ok);
      h.process.once("exit", (code) => fail(new Error(`forecast serve exited with ${code}`)));
    });
    // Keep draining stdout so the server never writes into a full pipe.
    lines.on("line", () => {});
    h.base = first.trim().split(" ").pop();
    if (!h.base.startsWith("http://")) {
      await h.close();
      throw new Error(`unexpected first line from forecast serve: ${first}`);
    }
    return h;
  }

  async close() {
    if (this.process && this.process.exitCode === null) {
      const exited = new Promise((ok) => this.process.once("exit", ok));
      this.process.kill("SIGTERM");
      await exited;
    }
    this.process = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's status and JSON answer (null when not JSON). */
  async request(method, path, body, contentType = "application/json") {
    const headers = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers["content-type"] = contentType;
    const r = await fetch(this.base + path, { method, headers, body, signal: AbortSignal.timeout(300_000) });
    const text = await r.text();
    try {
      return [r.status, JSON.parse(text)];
    } catch {
      return [r.status, null];
    }
  }

  /** Publishes the component (private to the key's account); the name of
   * the version it stored (`@handle/name@version`). The same bytes again are
   * stored once; other bytes under a stored version are a 409: raise
   * VERSION (a pre-release such as 0.1.1-dev.1 will do). */
  async upload(wasm) {
    const [status, body] = await this.request("POST", "/api/strategies", readFileSync(wasm), "application/wasm");
    if (status === 409 && this.remote) {
      throw new HarnessError(
        `upload of ${wasm} to ${this.base} (raise VERSION in your class, e.g. to a pre-release such as 0.1.1-dev.1, to test changed code there)`,
        status,
        body,
      );
    }
    if (status !== 200 && status !== 201) throw new HarnessError(`upload of ${wasm}`, status, body);
    return `${body.strategy}@${body.version}`;
  }

  /** `POST /api/backtest`; its 200 answer (else HarnessError). */
  async backtest(request) {
    const [status, body] = await this.request("POST", "/api/backtest", JSON.stringify(request));
    if (status !== 200) throw new HarnessError("backtest", status, body);
    return body;
  }
}

/** One line: total return, CAGR, Sharpe, worst drawdown, trades. */
export function summary(report) {
  const m = report.metrics;
  const parts = ["total_return", "cagr", "sharpe_ratio", "max_drawdown"].map((k) => `${k} ${m[k]}`);
  return `${parts.join(", ")}, ${report.trades.length} trades`;
}
