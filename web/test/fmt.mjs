// The app's number formatter (src/format.ts), bundled for Node with
// esbuild, so the tests write expected text exactly as the pages do.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const out = await build({
  entryPoints: [fileURLToPath(new URL("../src/format.ts", import.meta.url))],
  bundle: true,
  format: "esm",
  platform: "neutral",
  write: false,
  logLevel: "silent",
});
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);

export const { compact, corr, int, num, pct, plural, price, signedNum, signedPct, tags } = mod;
