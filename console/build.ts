// Bundles the console (React, the AI SDK's useChat) into console/dist with esbuild: one script, one stylesheet
// and the page, no CDN. Run by the repository's `prepare` script, so `npm install` / `npm ci` build it.
// @chatd/client is bundled from its TypeScript source (the workspace next door), so the console builds without
// the client's own tsc build having run first (and in an --omit=dev install, which has no tsc).
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const here = import.meta.dirname;
const dist = join(here, "dist");
await mkdir(dist, { recursive: true });
await build({
  entryPoints: [join(here, "src", "main.tsx")],
  outfile: join(dist, "app.js"),
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  alias: { "@chatd/client": join(here, "..", "client", "src", "index.ts") },
  logLevel: "warning",
});
await copyFile(join(here, "src", "index.html"), join(dist, "index.html"));
await copyFile(join(here, "src", "style.css"), join(dist, "style.css"));
console.log(`console built in ${dist}`);
