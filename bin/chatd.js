#!/usr/bin/env node
// Plain JavaScript so that an older Node gets a clear message instead of a syntax or loader error.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `chatd needs Node.js 22.18 or newer (this is ${process.version}). ` +
      "Run it through npm (`npm start`, `npm run chatd -- ...`), which uses the Node 22 that `npm install` put in node_modules.",
  );
  process.exit(1);
}
await import("../src/cli/main.ts");
