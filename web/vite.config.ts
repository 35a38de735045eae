import { defineConfig } from "vite";

// The forecast binary embeds dist/ and serves it at "/". Hashed files go
// under /static/ because /assets/{ticker} is a page URL of the app.
const target = process.env.FORECAST_URL ?? "http://127.0.0.1:8080";

// `npm run dev`: the API, the session routes and the /web data routes are
// proxied to a running `forecast serve`. The server refuses state-changing
// session requests whose Origin is not its own, so the proxy rewrites it.
const proxied = {
  target,
  changeOrigin: true,
  configure(proxy: { on(event: "proxyReq", cb: (req: { setHeader(k: string, v: string): void; getHeader(k: string): unknown }) => void): void }) {
    proxy.on("proxyReq", (req) => {
      if (req.getHeader("origin")) req.setHeader("origin", new URL(target).origin);
    });
  },
};

export default defineConfig({
  base: "/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    assetsDir: "static",
    emptyOutDir: true,
    target: "es2020",
    sourcemap: false,
  },
  server: {
    proxy: { "/api": proxied, "/web": proxied, "/auth": proxied },
  },
});
