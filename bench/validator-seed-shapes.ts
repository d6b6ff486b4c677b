// The seed's worst-case shapes, and their measurement as `chatd schema validate --jsonl` runs them:
// one {"schema", "value"} line each, the JSON boundary's parse included (as the reference
// validator's figures include Go's parse), 100 lines per round, best of 3 rounds, with plain ajv
// (JSON.parse + validate: floats, native RegExp, strict off) beside it. bench/validator.ts runs
// `node bench/validator-seed-shapes.ts <index> [rounds]` once per shape, so each shape has a process of its
// own, as a `chatd schema validate --jsonl` run over that shape's lines would: compiled code and
// heap are not shaped by the other shapes or the rest of the benchmark.
// The reference figures are gojsonschema v1.2.0 on the same kind of VM, from the issue that set the
// target (>= 100x): they are not measured here (Go is not part of this project's toolchain).
import { Ajv } from "ajv";
import { validateJsonlLine } from "../src/cli/schema-command.ts";

export const keys4095 = JSON.stringify(Object.fromEntries(Array.from({ length: 4095 }, (_, i) => [`${"a".repeat(1 + (i % 20))}${"b".repeat(1 + (i % 7))}${i}`, "v"])));
export const ints4000 = (last: string): string => JSON.stringify(Object.fromEntries([...Array.from({ length: 3999 }, (_, i) => [`k${i}`, i] as [string, unknown]), ["zz", last]]));
export const depSchema = (n: number): string =>
  JSON.stringify({ dependencies: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { additionalProperties: { type: ["integer", "string"] } }])) });
export const patternPropertiesSchema = JSON.stringify({ patternProperties: { "^(a{1,20}b{1,20}){1,10}[0-9]+$": { type: "string" }, "^(?:a|b){2,40}[0-9]{1,4}$": { type: "string", maxLength: 4 } } });
export const allOfSchema = JSON.stringify({ allOf: Array.from({ length: 32 }, (_, i) => ({ additionalProperties: i === 31 ? { type: "integer" } : { type: ["integer", "string"] } })) });
export const oneOfSchema = JSON.stringify({ oneOf: Array.from({ length: 8 }, (_, i) => ({ type: "array", items: { type: "integer", multipleOf: i + 2 } })) });
export const allOf8Schema = JSON.stringify({ allOf: Array.from({ length: 8 }, (_, i) => ({ type: "array", items: { type: "integer", multipleOf: i + 1 } })) });
export const oneOfValue = JSON.stringify(Array.from({ length: 4094 }, (_, i) => i * 840));

export interface SeedShape {
  label: string;
  schema: string;
  value: string;
  gojsonschemaMs: number;
}

export const SEED_SHAPES: readonly SeedShape[] = [
  { label: "2 patternProperties x 4,095 keys", gojsonschemaMs: 269, schema: patternPropertiesSchema, value: keys4095 },
  { label: "32 failing allOf x 4,000 keys", gojsonschemaMs: 235, schema: allOfSchema, value: ints4000("x") },
  { label: "60 schema-form dependencies x 4,000 keys", gojsonschemaMs: 519, schema: depSchema(60), value: ints4000("s") },
  // 840 is a multiple of 2..8, so every branch matches and oneOf fails.
  { label: "8 oneOf branches x 4,095 nodes", gojsonschemaMs: 26, schema: oneOfSchema, value: oneOfValue },
  // Every branch matches, so all 8 run over every item; the figure issue #31 reported (28 ms).
  { label: "8 valid allOf branches x 4,095 nodes", gojsonschemaMs: 28, schema: allOf8Schema, value: oneOfValue },
];

export interface SeedResult {
  oursMs: number;
  plainMs: number;
  valid: boolean;
}

function bestPerLine(f: () => unknown, lines = 100, rounds = 3): number {
  f();
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < lines; i++) f();
    best = Math.min(best, (performance.now() - t0) / lines);
  }
  return best;
}

/** `rounds` other than 3 (the method) shows the steady state on a loaded machine. */
export function measureSeedShape({ schema, value }: SeedShape, rounds = 3): SeedResult {
  const line = `{"schema":${schema},"value":${value}}`;
  const valid = validateJsonlLine(line).ok;
  const oursMs = bestPerLine(() => validateJsonlLine(line), 100, rounds);
  const plainFn = new Ajv({ strict: false }).compile(JSON.parse(schema) as object);
  const plainMs = bestPerLine(() => plainFn((JSON.parse(line) as { value: unknown }).value), 100, rounds);
  return { oursMs, plainMs, valid };
}

const shapeIndex = process.argv[1]?.endsWith("validator-seed-shapes.ts") === true ? Number(process.argv[2]) : undefined;
if (shapeIndex !== undefined) {
  const shape = SEED_SHAPES[shapeIndex];
  if (shape === undefined) throw new Error(`no seed shape ${String(process.argv[2])}`);
  process.stdout.write(`${JSON.stringify(measureSeedShape(shape, Number(process.argv[3] ?? "3")))}\n`);
}
