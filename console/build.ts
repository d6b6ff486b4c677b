// Bundles the console (React, the AI SDK's useChat) into console/dist with esbuild: one script, one stylesheet
// and the page, no CDN. Run by the repository's `prepare` script, so `npm install` / `npm ci` build it.
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
  logLevel: "warning",
});
await copyFile(join(here, "src", "index.html"), join(dist, "index.html"));
await copyFile(join(here, "src", "style.css"), join(dist, "style.css"));
console.log(`console built in ${dist}`);
