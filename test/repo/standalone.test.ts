// The repository stands alone: no tracked file points outside it. A relative path that climbs above the
// repository root, an absolute path into a development machine's folders, or a section reference to a document
// that is not in the repository (the word "design" or "notes", a section sign and a number) all fail, with the file
// and line named. This file is checked like any other, so its samples are assembled at run time.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

/** What a file mentions that lies outside the repository, as `file:line: text`. */
function outsideMentions(file: string, text: string, root: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    for (const match of line.matchAll(/(?:\.\.\/)+[\w.-]*/g)) {
      const target = relative(root, resolve(root, dirname(file), match[0]));
      if (target === ".." || target.startsWith("../")) found.push(`${where}: ${match[0]} leaves the repository`);
    }
    for (const match of line.matchAll(/(?:^|[\s"'`(=:])(\/(?:work|home|root|Users)\/[\w./-]*)/g)) {
      found.push(`${where}: ${match[1]} is a path on a development machine`);
    }
    for (const match of line.matchAll(/\b(?:design|notes)(?: [a-z-]+)? §\s*\d+|\bdesign\.md\b|\bnotes\/[\w-]+\.md\b/g)) {
      found.push(`${where}: "${match[0]}" refers to a document outside the repository`);
    }
  });
  return found;
}

test("the checker catches each kind of outside mention, and leaves paths inside the repository alone", () => {
  const root = "/repo";
  const up = "..";
  const section = "\u00a7";
  assert.equal(outsideMentions("README.md", `See \`${up}/shared/${"design"}.md\`.`, root).length, 2);
  assert.equal(outsideMentions("src/a.ts", `// (design ${section}4 "Request contract")`, root).length, 1);
  assert.equal(outsideMentions("src/a.ts", `// from ${"notes"}/providers.md (notes ${section}9.2)`, root).length, 2);
  assert.equal(outsideMentions("docs/x.md", `kept in /${"work"}/shared/notes`, root).length, 1);
  assert.equal(outsideMentions("test/a/b.ts", 'import "../../src/db/database.ts"; [api](../docs/api.md)', root), []);
  assert.equal(outsideMentions("docs/api.md", "[schema](../schema.graphql) and /tmp/x and https://example.com/a/b", root), []);
});

test("no tracked file mentions a path or a document outside the repository", () => {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: projectRoot, encoding: "utf8" }).split("\0").filter(Boolean);
  assert.ok(files.length > 100, "git ls-files lists the repository");
  const found: string[] = [];
  for (const file of files) {
    if (file === "package-lock.json") continue;
    let text: string;
    try {
      text = readFileSync(join(projectRoot, file), "utf8");
    } catch {
      continue; // deleted in the working tree
    }
    if (text.includes("\0")) continue; // binary
    found.push(...outsideMentions(file, text, projectRoot));
  }
  assert.equal(found, []);
});

test.run();
