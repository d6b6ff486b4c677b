// A/B of the JSON boundary's parser: `node bench/parse-ab.ts [ref]` parses each input with src/structured as
// committed at ref (default main) and as it is in the working tree, in one process, alternating which runs first.
// `--self` compares the working tree with a copy of itself: the difference it shows is the noise. Each of the rounds
// (`--rounds N`, default 7) times 200 parses per input and side with process.cpuUsage (the machine is shared, so CPU
// time, not wall time); the best round is reported, since neighbours only ever add time. `--only TEXT` keeps the
// inputs whose name has TEXT: V8 then compiles the parser for that shape alone, as in bench:validator's processes.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type Parse = (input: string) => { ok: boolean };

const PARSES = 200;

const args = process.argv.slice(2);
const self = args.includes("--self");
const option = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const ROUNDS = Number(option("--rounds") ?? 7);
const only = option("--only");
const ref = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--")) ?? "main";
const root = join(import.meta.dirname, "..");

const dir = mkdtempSync(join(tmpdir(), "parse-ab-"));
if (self) cpSync(join(root, "src", "structured"), join(dir, "src", "structured"), { recursive: true });
else execFileSync("sh", ["-c", `git -C "${root}" archive "${ref}" src/structured | tar -x -C "${dir}"`]);

async function load(folder: string): Promise<Parse> {
  const mod = (await import(pathToFileURL(join(folder, "src", "structured", "json-boundary.ts")).href)) as { parseJsonSafe: Parse };
  return mod.parseJsonSafe;
}
const a = await load(dir);
const b = await load(root);
rmSync(dir, { recursive: true, force: true });

const esc = "line\\n \\\"quoted\\\" tab\\t caf\\u00e9 \\ud83d\\ude00 back\\\\slash ";
const typicalSchema = JSON.stringify({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: Object.fromEntries(
    Array.from({ length: 24 }, (_, i) => [`field${i}`, [
      { type: "string", maxLength: 200, pattern: "^[a-z0-9 ]*$", description: "A short free-text field." },
      { type: "integer", minimum: 0, maximum: 1000000 },
      { type: "number", multipleOf: 0.01, exclusiveMinimum: 0 },
      { enum: ["low", "medium", "high"] },
    ][i % 4]]),
  ),
  required: ["field0", "field1", "field2"],
  additionalProperties: false,
});
function tree(depth: number, id: number): unknown {
  return depth === 0 ? { id, leaf: true } : { id, name: `n${id}`, ok: id % 2 === 0, kids: [tree(depth - 1, id * 2), tree(depth - 1, id * 2 + 1)] };
}
const mixed = JSON.stringify(
  Array.from({ length: 620 }, (_, i) => ({
    id: i, name: `item number ${i}`, price: (i * 1.37).toFixed(2), tags: ["a", "bb", "ccc"], active: i % 3 === 0,
    note: i % 5 === 0 ? "needs \"review\"\nsoon" : null, dims: { w: i % 17, h: 2.5, d: -i }, ratio: i / 7,
  })),
);

const allInputs: [string, string][] = [
  ["4,094 integers", JSON.stringify(Array.from({ length: 4094 }, (_, i) => (i * 7919) % 1_000_003 - 500_000))],
  ["4,094 decimals", `[${Array.from({ length: 4094 }, (_, i) => `${(i * 7919) % 100_003}.${String(i % 1000).padStart(3, "0")}`).join(",")}]`],
  ["depth-10 object tree", JSON.stringify(tree(10, 1))],
  ["long strings, escapes", `[${Array.from({ length: 120 }, (_, i) => `"${"plain text run ".repeat(8 + (i % 5))}${esc.repeat(4)}"`).join(",")}]`],
  ["typical 2 KB schema", typicalSchema],
  ["100 KB mixed", mixed],
];
const inputs = allInputs.filter(([name]) => only === undefined || name.includes(only));

function cpuMicros(parse: Parse, text: string): number {
  const c = process.cpuUsage();
  for (let i = 0; i < PARSES; i++) if (!parse(text).ok) throw new Error("input rejected");
  const d = process.cpuUsage(c);
  return (d.user + d.system) / PARSES;
}

const best = inputs.map(() => [Infinity, Infinity]);
for (let r = 0; r < ROUNDS; r++) {
  inputs.forEach(([, text], i) => {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) best[i]![side] = Math.min(best[i]![side]!, cpuMicros(side === 0 ? a : b, text));
  });
}

console.log(`A = ${self ? "copy of the working tree" : ref}, B = working tree; best of ${ROUNDS} rounds x ${PARSES} parses, CPU µs per parse`);
console.log(["input", "bytes", "A µs", "B µs", "B/A"].join("\t"));
inputs.forEach(([name, text], i) => {
  const [ta, tb] = best[i]!;
  console.log([name, text.length, ta!.toFixed(1), tb!.toFixed(1), `${((tb! / ta! - 1) * 100).toFixed(1)} %`].join("\t"));
});
