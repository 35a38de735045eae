#!/bin/sh
# build.sh APP.ts OUT.wasm TSCONFIG: a TypeScript strategy to a component of
# the `strategy` world. tsc checks the types (TSCONFIG), esbuild bundles the
# app with the SDK into one ES module (OUT.wasm.js), componentize-js builds
# the component with every WASI feature disabled, so it imports only the
# world's host-log (the server's upload check refuses anything else).
# The tools come from target/ts-sdk (`make ts-sdk` at the repository root).
set -eu
app=$1 out=$2 tsconfig=$3
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$root/target/ts-sdk/node_modules/.bin
"$bin/tsc" -p "$tsconfig"
"$bin/esbuild" "$app" --bundle --format=esm --platform=neutral --target=es2022 \
  --tsconfig="$tsconfig" '--external:forecast:plugins/*' --log-level=warning \
  --outfile="$out.js"
node "$root/sdk/ts/tools/run.mjs" "$root/target/ts-sdk" componentize-js "$out.js" \
  --wit "$root/wit" -n strategy -d stdio random clocks http fetch-event -o "$out.tmp"
mv "$out.tmp" "$out"
