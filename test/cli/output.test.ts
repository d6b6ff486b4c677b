// What a person at a terminal sees from the CLI: readable logs on a terminal and JSON otherwise; files named on the
// command line resolved against the caller's folder (INIT_CWD under npm); a file that cannot be read reported as
// one line; `line` in every `schema validate --jsonl` verdict. Commands run as real child processes.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { callerFolder } from "../../src/cli/user-files.ts";
import { projectRoot } from "../../src/db/database.ts";
import { logFormat } from "../../src/log.ts";

const folder = mkdtempSync(join(tmpdir(), "chatd-cli-"));
test.after(() => rmSync(folder, { recursive: true, force: true }));

const main = join(projectRoot, "src", "cli", "main.ts");

/** `chatd ARGS` started from the package root, as npm does, with the user's folder in INIT_CWD. */
function chatd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { cwd: projectRoot, env: { ...process.env, INIT_CWD: folder, ...env } },
      (error, stdout, stderr) => resolve({ code: error == null ? 0 : Number(error.code ?? 1), stdout, stderr }));
  });
}

test("log format: pretty exactly on a terminal unless CHATD_LOG_FORMAT says otherwise; anything else is refused", () => {
  assert.is(logFormat(undefined, true), "pretty");
  assert.is(logFormat(undefined, false), "json");
  assert.is(logFormat("", true), "pretty");
  assert.is(logFormat("json", true), "json");
  assert.is(logFormat("pretty", false), "pretty");
  assert.throws(() => logFormat("yaml", true), /CHATD_LOG_FORMAT must be json or pretty/);
});

test("a log line is readable text on a terminal (a pseudo-terminal from script(1)) and JSON in a pipe", async () => {
  const program = `import(${JSON.stringify(join(projectRoot, "src", "log.ts"))}).then(({ logger }) => logger.info({ chats: 2 }, "hello"))`;
  const run = (command: string, args: string[]) => new Promise<string>((resolve, reject) => {
    execFile(command, args, { env: { ...process.env, CHATD_LOG_FORMAT: "" } }, (error, stdout, stderr) =>
      (error ? reject(error) : resolve(stdout + stderr)));
  });
  const piped = await run(process.execPath, ["--input-type=module", "-e", program]);
  const line = JSON.parse(piped) as Record<string, unknown>;
  assert.equal([line.level, line.msg, line.chats], [30, "hello", 2]);
  const quoted = `'${process.execPath}' --input-type=module -e '${program.replaceAll("'", "'\\''")}'`;
  const terminal = await run("script", ["-qec", quoted, "/dev/null"]);
  assert.match(terminal, /INFO.*hello.*"chats":2/);
  assert.not.match(terminal, /"level":30/);
});

test("files resolve against INIT_CWD, falling back to the working folder", () => {
  assert.is(callerFolder({ INIT_CWD: "/somewhere" }, "/pkg"), "/somewhere");
  assert.is(callerFolder({}, "/pkg"), "/pkg");
  assert.is(callerFolder({ INIT_CWD: "" }, "/pkg"), "/pkg");
});

test("schema validate reads relative paths from the caller's folder; verdicts are numbered by line", async () => {
  writeFileSync(join(folder, "schema.json"), '{"type":"integer"}');
  writeFileSync(join(folder, "values.jsonl"), '3\n\n"three"\n');
  const r = await chatd(["schema", "validate", "schema.json", "values.jsonl"]);
  assert.is(r.code, 1, r.stderr);
  assert.equal(r.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { line: number; ok: boolean })).map((v) => [v.line, v.ok]),
    [[1, true], [3, false]]);
});

test("schema validate --jsonl: every verdict carries its line number, blank lines counted", async () => {
  writeFileSync(join(folder, "pairs.jsonl"), '{"schema":{"type":"integer"},"value":1}\n\n{"schema":{"$ref":"#"},"value":1}\nnot json\n');
  const r = await chatd(["schema", "validate", "--jsonl", "pairs.jsonl"]);
  const verdicts = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { line?: number; ok: boolean });
  assert.equal(verdicts.map((v) => [v.line, v.ok]), [[1, true], [3, false], [4, false]]);
});

test("a missing file or a folder is one clear line on stderr and exit code 2, nothing on stdout", async () => {
  for (const [args, line] of [
    [["schema", "check", "missing.json"], "chatd: cannot read missing.json: no such file"],
    [["schema", "validate", "--jsonl", "."], "chatd: cannot read .: it is a folder"],
  ] as const) {
    const r = await chatd([...args]);
    assert.equal([r.code, r.stderr, r.stdout], [2, `${line}\n`, ""]);
  }
});

test.run();
