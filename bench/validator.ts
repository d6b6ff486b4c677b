// Benchmark for src/structured: `npm run bench:validator` (node --expose-gc bench/validator.ts).
// Time: median of repeated runs, wall (performance.now) and CPU (process.cpuUsage). Memory: heap growth of one validation, measured
// as process.memoryUsage().heapUsed after the run minus before it, with a forced GC just before
// (so it counts everything the validation allocated, garbage included: an upper bound on growth).
import { execFileSync, spawnSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import ajvFormats from "ajv-formats";
import { clearCompileCache } from "../src/structured/compile.ts";
import { compileCacheStats, compileSchema, parseJsonSafe, SCHEMA_LIMITS, validateValue, type CompiledSchema } from "../src/structured/index.ts";
import { allOfSchema, defs200, defs200Value, depSchema, ints4000, keys4095, oneOfSchema, oneOfValue, patternPropertiesSchema, recursiveSchema, SEED_SHAPES, treeValue, type SeedResult } from "./validator-seed-shapes.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn("warning: run with --expose-gc for meaningful memory figures");

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

// Median CPU ms (process.cpuUsage, user + system) of the runs timed by the last time() call.
let lastCpu = NaN;

function time(runs: number, f: () => void): number {
  f();
  const ts: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpus.push((d.user + d.system) / 1000);
  }
  lastCpu = median(cpus);
  return median(ts);
}

function heapGrowth(f: () => unknown): number {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const keep = f();
  const after = process.memoryUsage().heapUsed;
  if (keep === Symbol.for("never")) console.log(keep);
  return (after - before) / 1024 / 1024;
}

function compileText(text: string): CompiledSchema {
  const p = parseJsonSafe(text, SCHEMA_LIMITS);
  if (!p.ok) throw new Error(p.error.message);
  const c = compileSchema(p.value);
  if (!c.ok) throw new Error(JSON.stringify(c.errors));
  return c.validator;
}

const rows: string[][] = [];
function row(...cells: (string | number)[]): void {
  rows.push(cells.map((c) => (typeof c === "number" ? c.toFixed(c < 10 ? 3 : 1) : c)));
}

// Typical: a 50-property object schema with patterns, formats, enums and numeric bounds.
const props: Record<string, unknown> = {};
for (let i = 0; i < 50; i++) {
  props[`f${i}`] = [
    { type: "string", maxLength: 200, pattern: "^[a-z0-9 ]*$" },
    { type: "integer", minimum: 0, maximum: 1000000 },
    { type: "number", multipleOf: 0.01 },
    { type: "string", format: "date-time" },
    { enum: ["low", "medium", "high"] },
  ][i % 5];
}
const typicalSchema = JSON.stringify({ type: "object", properties: props, required: Object.keys(props).slice(0, 25), additionalProperties: false });
const typicalValue = JSON.stringify(
  Object.fromEntries(Object.keys(props).map((k, i) => [k, ["some text 42", 123456, 19.99, "2024-05-01T12:00:00Z", "medium"][i % 5]])),
);

const compileTypical = time(30, () => {
  clearCompileCache();
  compileText(typicalSchema);
});
const compileTypicalCpu = lastCpu;
row("compile typical (50 props, 10 patterns)", compileTypical, compileTypicalCpu, "", "");

const worstSchema = JSON.stringify({
  type: "object",
  anyOf: Array.from({ length: 60 }, (_, i) => ({ required: [`k${i}`] })),
  patternProperties: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`^(a{1,20}b{1,20}){1,5}${"x".repeat(400)}${i}$`, { type: "string" }])),
  properties: { deep: JSON.parse('{"not":'.repeat(30) + "{}" + "}".repeat(30)) as unknown },
});
const compileWorst = time(10, () => {
  clearCompileCache();
  compileText(worstSchema);
});
row("compile worst (60 branches, 32x512-char patterns, depth 32)", compileWorst, lastCpu, "", "");

const typical = compileText(typicalSchema);
const ours = time(2000, () => validateValue(typical, typicalValue));
const oursCpu = lastCpu;
const plainAjv = new Ajv({ strict: false });
ajvFormats.default(plainAjv);
const plainValidate = plainAjv.compile(JSON.parse(typicalSchema) as object);
const plain = time(2000, () => plainValidate(JSON.parse(typicalValue)));
const plainCpu = lastCpu;
row("validate typical (ours: parse+validate+canonical)", ours, oursCpu, heapGrowth(() => validateValue(typical, typicalValue)), "ok");
row("validate typical (plain ajv: JSON.parse+validate)", plain, plainCpu, heapGrowth(() => plainValidate(JSON.parse(typicalValue))), "");

// Worst-case shapes at the caps.
function shape(label: string, schema: string, value: string, runs = 20): void {
  const v = compileText(schema);
  const r = validateValue(v, value);
  row(label, time(runs, () => validateValue(v, value)), lastCpu, heapGrowth(() => validateValue(v, value)), r.ok ? "valid" : "invalid");
}
shape("2 patternProperties (counted reps) x 4,095 keys", patternPropertiesSchema, keys4095);
shape(
  "32 failing anyOf branches x 4,000 keys",
  JSON.stringify({ anyOf: Array.from({ length: 32 }, (_, i) => ({ additionalProperties: { type: "integer", minimum: -i } })) }),
  ints4000("x"),
);
shape("32 allOf branches x 4,000 keys (last fails)", allOfSchema, ints4000("x"));
{
  const p = parseJsonSafe(depSchema(120), SCHEMA_LIMITS);
  const c = p.ok ? compileSchema(p.value) : undefined;
  row("120 schema-form dependencies x 4,000 keys", "-", "-", "-", c !== undefined && !c.ok ? "rejected at compile (branch cap)" : "ACCEPTED?");
}
shape("60 schema-form dependencies x 4,000 keys", depSchema(60), ints4000("s"));
shape("8 oneOf branches x 4,095 nodes", oneOfSchema, oneOfValue);
shape("uniqueItems over 16,383 exact numbers", '{"uniqueItems":true}', JSON.stringify(Array.from({ length: 16383 }, (_, i) => i + 0.5)), 5);

// Local references (issue #31): a recursive schema over a 10,000-node value, and 200 $defs
// (bench/validator-seed-shapes.ts builds them; the --jsonl table below measures them too).
shape("recursive $ref schema x 10,000-node tree", recursiveSchema, treeValue);
row("compile: 200 $defs, each referenced once", time(10, () => {
  clearCompileCache();
  compileText(defs200);
}), lastCpu, "", `${defs200.length} bytes`);
shape("200 $defs schema x its 1,001-node value", defs200, defs200Value);

// Reference: plain ajv (native RegExp, float numbers, for…in) on two of the shapes above, to show how
// much of the time is ajv's own per-key loop (V8 dictionary lookups on a 4,000-key object).
function plainShape(label: string, schema: string, value: string): void {
  const ajv = new Ajv({ strict: false });
  const v = ajv.compile(JSON.parse(schema) as object);
  row(label, time(20, () => v(JSON.parse(value))), lastCpu, heapGrowth(() => v(JSON.parse(value))), v(JSON.parse(value)) ? "valid" : "invalid");
}
plainShape(
  "plain ajv: 32 failing anyOf branches x 4,000 keys",
  JSON.stringify({ anyOf: Array.from({ length: 32 }, (_, i) => ({ additionalProperties: { type: "integer", minimum: -i } })) }),
  ints4000("x"),
);
plainShape("plain ajv: 60 schema-form dependencies x 4,000 keys", depSchema(60), ints4000("s"));

// The seed's worst-case shapes as `chatd schema validate --jsonl` runs them, each in a process of
// its own (bench/validator-seed-shapes.ts says how and why).
const seedScript = fileURLToPath(new URL("./validator-seed-shapes.ts", import.meta.url));
const seedRounds = process.env.SEED_ROUNDS ?? "3";
const jsonlRows: string[] = [];
const ms = (x: number): string => x.toFixed(3).padStart(7);
SEED_SHAPES.forEach(({ label, gojsonschemaMs }, i) => {
  const run = spawnSync(process.execPath, [seedScript, String(i), seedRounds], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${seedScript} ${i} failed: ${run.stderr}`);
  const r = JSON.parse(run.stdout) as SeedResult;
  const ratio = gojsonschemaMs === undefined ? "    -" : `${(gojsonschemaMs / r.oursCpuMs).toFixed(0).padStart(4)}x`;
  jsonlRows.push(`${label.padEnd(42)} | ${ms(r.oursCpuMs)} | ${ms(r.oursWallMs)} | ${ms(r.plainCpuMs)} | ${ms(r.plainWallMs)} | ${String(gojsonschemaMs ?? "-").padStart(7)} | ${ratio} | ${r.valid ? "valid" : "invalid"}`);
});

// Linearity: adversarial inputs at n and 2n characters (ratio ~2 means linear).
function linear(label: string, schema: string, make: (n: number) => string): void {
  const v = compileText(schema);
  const n = 100_000;
  const t1 = time(5, () => validateValue(v, JSON.stringify(make(n))));
  const t2 = time(5, () => validateValue(v, JSON.stringify(make(2 * n))));
  row(`${label}: 100k vs 200k chars`, t2, lastCpu, "", `ratio ${(t2 / t1).toFixed(2)}`);
}
linear("pattern ^(a+)+$ on a..a!", '{"pattern":"^(a+)+$"}', (n) => "a".repeat(n) + "!");
linear("pattern (x+x+)+y on x..x", '{"pattern":"(x+x+)+y"}', (n) => "x".repeat(n));
for (const f of ["email", "hostname", "uri", "uri-reference", "uri-template", "ipv6", "date-time", "json-pointer", "relative-json-pointer", "uuid", "ipv4", "date", "time"]) {
  linear(`format ${f}`, `{"format":"${f}"}`, (n) => (f === "uri" ? "a:" : "") + "a-.%20".repeat(Math.floor(n / 6)) + "!");
}

// Cache: 10,000 distinct schemas in a row.
clearCompileCache();
gc?.();
const heap0 = process.memoryUsage().heapUsed;
let t = performance.now();
for (let i = 0; i < 10_000; i++) compileText(`{"type":"object","properties":{"a${i}":{"type":"string","pattern":"^x${i}$"}}}`);
t = performance.now() - t;
gc?.();
const heap1 = process.memoryUsage().heapUsed;
row("10,000 distinct schemas (heap after GC)", t / 10_000, "", (heap1 - heap0) / 1024 / 1024, `cache ${compileCacheStats().size}/${compileCacheStats().capacity}`);

const header = ["case", "median ms", "cpu ms", "heap MiB", "note"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
const fmt = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ");
console.log(fmt(header));
console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
for (const r of rows) console.log(fmt(r));
console.log(`\nshapes through chatd schema validate --jsonl (runSchemaValidateJsonl: per line, best of ${seedRounds} rounds of 100 lines, parse and verdict line included, start-up excluded, one process per shape)`);
console.log(`${"shape".padEnd(42)} | cpu ms  | wall ms | ajv cpu | ajv wall | gojson. | ratio | verdict`);
for (const r of jsonlRows) console.log(r);
console.log("ratio: gojsonschema v1.2.0's ms (from the issue that set the >= 100x target, not measured here) / our CPU ms");
console.log(`\nours / plain ajv on the typical payload: ${(ours / plain).toFixed(1)}x (${ours.toFixed(3)} ms vs ${plain.toFixed(3)} ms)`);
console.log("time: median wall-clock ms of repeated runs (performance.now); cpu: median process.cpuUsage (user + system, all threads) of the same runs");
console.log("heap MiB: process.memoryUsage().heapUsed after one validation minus before it, forced GC just before (garbage included: an upper bound on growth)");
console.log(`node ${process.version}, ${process.platform}/${process.arch}, ${os.availableParallelism()} cores`);
// The machine is shared: its load is printed beside the figures (noisy when above the core count).
console.log(`uptime: ${execFileSync("uptime", { encoding: "utf8" }).trim()}`);
