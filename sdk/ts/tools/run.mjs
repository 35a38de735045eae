// Runs one of the SDK's npm tools (jco, componentize-js) installed in
// target/ts-sdk, with the host's filesystem visible to the WebAssembly
// parts of those tools: @bytecodealliance/preview2-shim 0.26 starts with
// no preopened directory, so `jco types wit` and componentize-js would
// find no WIT file. Usage: node run.mjs <sdk-dir> <tool> args...
import { fileURLToPath, pathToFileURL } from "node:url";
import { join, resolve } from "node:path";

const [sdk, tool, ...args] = process.argv.slice(2);
const root = resolve(sdk, "node_modules");
const shim = join(root, "@bytecodealliance/preview2-shim/dist/nodejs/filesystem.js");
const { _addPreopen } = await import(pathToFileURL(shim).href);
_addPreopen("/", "/");
const bins = {
  jco: "@bytecodealliance/jco/dist/jco.js",
  "componentize-js": "@bytecodealliance/componentize-js/src/cli.js",
};
if (!bins[tool]) {
  console.error(`unknown tool ${tool}: ${Object.keys(bins).join(", ")}`);
  process.exit(2);
}
// componentize-js: wizer's snapshot through wizer-merge.mjs (its data
// segments merged to fit the server's upload bounds).
const extra =
  tool === "componentize-js"
    ? ["--wizer-bin", fileURLToPath(new URL("./wizer-merge.mjs", import.meta.url))]
    : [];
process.argv = [process.argv[0], tool, ...args, ...extra];
await import(pathToFileURL(join(root, bins[tool])).href);
