// The seed's worst-case shapes (and the two reference shapes of issue #31), measured as
// `chatd schema validate --jsonl` runs them: runSchemaValidateJsonl, the command's own function, over
// 100 {"schema", "value"} lines per round (readline, the JSON boundary's parse of each line, one
// verdict line written per line), best of N rounds, with plain ajv (JSON.parse of the line + validate:
// floats, native RegExp, strict off) beside it. Start-up (module loading, the first compile) is
// excluded: one warm-up round runs first. CPU time (process.cpuUsage, user + system: it counts the
// GC's and compiler's threads too) is what is compared; wall time is printed beside it, because the
// machine is shared and wall time there measures the neighbours as well.
//
// bench/validator.ts runs `node bench/validator-seed-shapes.ts <index> [rounds]` once per shape, so
// each shape has a process of its own, as a `chatd schema validate --jsonl` run over that shape's
// lines would: compiled code and heap are not shaped by the other shapes or the rest of the benchmark.
// The reference figures are gojsonschema v1.2.0 on the same kind of VM, from the issue that set the
// target (>= 100x): they are not measured here (Go is not part of this project's toolchain).
import { Readable, Writable } from "node:stream";
import { Ajv } from "ajv";
import { runSchemaValidateJsonl } from "../src/cli/schema-command.ts";

export const keys4095 = JSON.stringify(Object.fromEntries(Array.from({ length: 4095 }, (_, i) => [`${"a".repeat(1 + (i % 20))}${"b".repeat(1 + (i % 7))}${i}`, "v"])));
export const ints4000 = (last: string): string => JSON.stringify(Object.fromEntries([...Array.from({ length: 3999 }, (_, i) => [`k${i}`, i] as [string, unknown]), ["zz", last]]));
export const depSchema = (n: number): string =>
  JSON.stringify({ dependencies: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { additionalProperties: { type: ["integer", "string"] } }])) });
export const patternPropertiesSchema = JSON.stringify({ patternProperties: { "^(a{1,20}b{1,20}){1,10}[0-9]+$": { type: "string" }, "^(?:a|b){2,40}[0-9]{1,4}$": { type: "string", maxLength: 4 } } });
export const allOfSchema = JSON.stringify({ allOf: Array.from({ length: 32 }, (_, i) => ({ additionalProperties: i === 31 ? { type: "integer" } : { type: ["integer", "string"] } })) });
export const oneOfSchema = JSON.stringify({ oneOf: Array.from({ length: 8 }, (_, i) => ({ type: "array", items: { type: "integer", multipleOf: i + 2 } })) });
const allOf8Schema = JSON.stringify({ allOf: Array.from({ length: 8 }, (_, i) => ({ type: "array", items: { type: "integer", multipleOf: i + 1 } })) });
export const oneOfValue = JSON.stringify(Array.from({ length: 4094 }, (_, i) => i * 840));

// Local references (issue #31): a recursive schema over a 10,000-node value, and 200 $defs.
interface TreeNode { v: number; children: TreeNode[] }
function tree(nodes: number): TreeNode {
  // Breadth-first, 4 children each: every tree node is 3 value nodes (object, integer, array).
  const root: TreeNode = { v: 0, children: [] };
  const queue = [root];
  for (let made = 1; made < nodes; ) {
    const parent = queue.shift();
    if (parent === undefined) break;
    for (let c = 0; c < 4 && made < nodes; c++, made++) {
      const child: TreeNode = { v: made, children: [] };
      parent.children.push(child);
      queue.push(child);
    }
  }
  return root;
}
export const recursiveSchema = JSON.stringify({
  $defs: { Node: { type: "object", properties: { v: { type: "integer", minimum: 0 }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["v", "children"], additionalProperties: false } },
  $ref: "#/$defs/Node",
});
export const treeValue = JSON.stringify(tree(3334));
export const defs200 = JSON.stringify({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { $ref: `#/$defs/D${i}` }])),
  required: Array.from({ length: 200 }, (_, i) => `p${i}`),
  $defs: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`D${i}`, { type: "object", properties: { a: { type: "string", maxLength: 8 }, b: { type: "integer", minimum: i }, c: { enum: ["x", "y", i] } }, required: ["a", "b"], additionalProperties: false }])),
});
export const defs200Value = JSON.stringify(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { a: "abc", b: i + 1, c: "x" }])));

export interface SeedShape {
  label: string;
  schema: string;
  value: string;
  /** gojsonschema v1.2.0's figure from the issue, when the issue gives one. */
  gojsonschemaMs?: number;
}

export const SEED_SHAPES: readonly SeedShape[] = [
  { label: "2 patternProperties x 4,095 keys", gojsonschemaMs: 269, schema: patternPropertiesSchema, value: keys4095 },
  { label: "32 failing allOf x 4,000 keys", gojsonschemaMs: 235, schema: allOfSchema, value: ints4000("x") },
  { label: "60 schema-form dependencies x 4,000 keys", gojsonschemaMs: 519, schema: depSchema(60), value: ints4000("s") },
  // 840 is a multiple of 2..8, so every branch matches and oneOf fails.
  { label: "8 oneOf branches x 4,095 nodes", gojsonschemaMs: 26, schema: oneOfSchema, value: oneOfValue },
  // Every branch matches, so all 8 run over every item; the figure issue #31 reported (28 ms).
  { label: "8 valid allOf branches x 4,095 nodes", gojsonschemaMs: 28, schema: allOf8Schema, value: oneOfValue },
  { label: "recursive $ref x 10,000-node tree", schema: recursiveSchema, value: treeValue },
  { label: "200 $defs x 1,001-node value", schema: defs200, value: defs200Value },
];

export interface SeedResult {
  /** Per line, best round: CPU ms (user + system) and wall ms; plain ajv's beside. */
  oursCpuMs: number;
  oursWallMs: number;
  plainCpuMs: number;
  plainWallMs: number;
  valid: boolean;
}

const LINES = 100;

/** Best per-line CPU and wall time of `rounds` rounds of `run` (one warm-up round first). */
async function best(run: () => Promise<unknown> | unknown, rounds: number): Promise<{ cpu: number; wall: number }> {
  await run();
  let cpu = Infinity;
  let wall = Infinity;
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    const w = performance.now() - t0;
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1000 / LINES);
    wall = Math.min(wall, w / LINES);
  }
  return { cpu, wall };
}

/** runSchemaValidateJsonl over `lines`; the verdict of the first line. */
async function runJsonl(lines: string[]): Promise<boolean> {
  let first: string | undefined;
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      first ??= chunk.toString("utf8");
      done();
    },
  });
  await runSchemaValidateJsonl(Readable.from(lines), out);
  return first !== undefined && (JSON.parse(first) as { ok: boolean }).ok;
}

/**
 * `rounds` other than 3 (the method) shows the steady state on a loaded machine. `withPlain` false
 * leaves plain ajv out (NaN, null in the JSON line): on a loaded machine its 4,000-key shapes take minutes, and an A/B of two
 * checkouts only needs ours (`SEED_PLAIN=0 node bench/validator-seed-shapes.ts <index> 10` in each).
 */
export async function measureSeedShape({ schema, value }: SeedShape, rounds = 3, withPlain = true): Promise<SeedResult> {
  const line = `{"schema":${schema},"value":${value}}`;
  const lines = Array.from({ length: LINES }, () => `${line}\n`);
  const valid = await runJsonl(lines);
  const ours = await best(() => runJsonl(lines), rounds);
  if (!withPlain) return { oursCpuMs: ours.cpu, oursWallMs: ours.wall, plainCpuMs: NaN, plainWallMs: NaN, valid };
  const plainFn = new Ajv({ strict: false }).compile(JSON.parse(schema) as object);
  const plain = await best(() => {
    for (const l of lines) plainFn((JSON.parse(l) as { value: unknown }).value);
  }, rounds);
  return { oursCpuMs: ours.cpu, oursWallMs: ours.wall, plainCpuMs: plain.cpu, plainWallMs: plain.wall, valid };
}

const shapeIndex = process.argv[1]?.endsWith("validator-seed-shapes.ts") === true ? Number(process.argv[2]) : undefined;
if (shapeIndex !== undefined) {
  const shape = SEED_SHAPES[shapeIndex];
  if (shape === undefined) throw new Error(`no seed shape ${String(process.argv[2])}`);
  process.stdout.write(`${JSON.stringify(await measureSeedShape(shape, Number(process.argv[3] ?? "3"), process.env.SEED_PLAIN !== "0"))}\n`);
}
