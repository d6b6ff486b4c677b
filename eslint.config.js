// Lint runs as part of `npm test`; rules favour catching real mistakes over formatting, and keep the shape that
// CONTRIBUTING.md promises: files under 400 lines, no import cycles, the layers below. Each of these rules is shown
// failing on a planted file in test/repo/lint-rules.test.ts; unused exports are knip's (knip.json).
import js from "@eslint/js";
import importX from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

const MAX_LINES = 400;

// Files allowed past MAX_LINES, each with why and a ceiling it may not grow past.
const LONG_FILES = [];

// The layers, lowest first: a module never imports from a layer above its own. src/structured is the pure
// validation library; providers and tools build on it; the worker on those; the API and the CLI sit on top.
// log.ts, channels.ts, metrics.ts and process-alive.ts at src/ are leaves any layer may use.
const above = {
  "./src/structured": ["./src/providers", "./src/tools", "./src/mcp", "./src/hooks", "./src/db", "./src/api", "./src/cli", "./worker"],
  "./src/providers": ["./src/tools", "./src/mcp", "./src/hooks", "./src/db", "./src/api", "./src/cli", "./worker"],
  "./src/tools": ["./src/mcp", "./src/hooks", "./src/db", "./src/api", "./src/cli", "./worker"],
  "./src/mcp": ["./src/db", "./src/api", "./src/cli", "./worker"],
  "./src/hooks": ["./src/db", "./src/api", "./src/cli", "./worker"],
  "./src/db": ["./src/api", "./src/cli", "./worker"],
  "./worker": ["./src/api", "./src/cli"],
  "./src/api": ["./src/cli", "./worker"],
};
const zones = Object.entries(above).map(([target, from]) => ({
  target, from, message: `${target.slice(2)} sits below ${from.map((f) => f.slice(2)).join(", ")} (eslint.config.js, the layers)`,
}));

export default tseslint.config(
  { ignores: ["node_modules/**", ".chatd/**", "coverage/**", "client/dist/**", "console/dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "import-x": importX },
    settings: {
      // no-cycle follows imports into .ts files only when it may parse them.
      "import-x/extensions": [".ts", ".tsx", ".js"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [importX.createNodeResolver({ extensions: [".ts", ".tsx", ".js"] })],
    },
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
      eqeqeq: ["error", "always", { null: "ignore" }],
      "max-lines": ["error", { max: MAX_LINES }],
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": ["error", { zones }],
    },
  },
  ...LONG_FILES.map(({ file, max }) => ({ files: [file], rules: { "max-lines": ["error", { max }] } })),
);
