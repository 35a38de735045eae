// `npm run size`: the gzip size of every JavaScript file the build ships
// (dist/static/*.js), against the budget. Exits non-zero above it.
import { readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const BUDGET_BYTES = 250 * 1024;

export function jsSizes(dist = fileURLToPath(new URL("../dist/static/", import.meta.url))) {
  const files = readdirSync(dist).filter((f) => f.endsWith(".js"));
  if (files.length === 0) throw new Error(`no JavaScript in ${dist}: run npm run build first`);
  return files.map((f) => {
    const bytes = readFileSync(join(dist, f));
    return { file: f, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = jsSizes();
  let total = 0;
  for (const s of sizes) {
    total += s.gzip;
    console.log(`${s.file}: ${(s.raw / 1024).toFixed(1)} KB raw, ${(s.gzip / 1024).toFixed(1)} KB gzip`);
  }
  console.log(`total JavaScript: ${(total / 1024).toFixed(1)} KB gzip (budget ${BUDGET_BYTES / 1024} KB)`);
  if (total > BUDGET_BYTES) {
    console.error("over the JavaScript budget");
    process.exit(1);
  }
}
