// What validation can reach through local `$ref`s. The screen (schema-screen.ts) records every
// schema position of the document as written: its own size and the edges to its subschemas, each
// marked with the step it takes into the value (a property name, an array index, any key, any item)
// or none (allOf/anyOf/oneOf/not/if/then/else/dependencies/$ref apply to the same value). This module
// then bounds validation before anything is compiled:
//
// - expansion: the schema with every `$ref` replaced by its target, except a reference back to a
//   schema already being expanded (recursion: the value is finite, so that walk ends with the value).
//   Nodes, branches, patterns and depth are counted on it against the same caps as the schema as
//   written, so a small schema whose references multiply is refused up front. A reference back that
//   has not stepped into the value since its target is a loop that never ends: refused.
// - recursion: a recursive schema could still apply more and more schemas to one value the deeper it
//   goes (two references to the same schema for the same child). For each value depth up to the
//   value cap, an upper bound of the schema nodes applied to one value node is computed and capped.

import { SCHEMA_MAX_BRANCHES, SCHEMA_MAX_DEPTH, SCHEMA_MAX_NODES, SCHEMA_MAX_PATTERNS, VALUE_MAX_DEPTH } from "./caps.ts";

/** The step an edge takes into the value; undefined for the same value. */
export type Step =
  | { kind: "name"; name: string }
  | { kind: "index"; index: number }
  | { kind: "anyKey" }
  | { kind: "anyIndex" }
  | { kind: "keyString" };

export interface Edge {
  readonly to: string;
  readonly step: Step | undefined;
  /** The pointer of the `$ref` keyword for a reference edge. */
  readonly refAt?: string;
}

export interface SchemaPosition {
  /** JSON nodes of this schema, not counting its subschemas (which are positions of their own). */
  ownNodes: number;
  branches: number;
  patterns: number;
  readonly edges: Edge[];
}

export interface SizeCounts {
  nodes: number;
  branches: number;
  patterns: number;
  depth: number;
}

export interface ExpandedSize extends SizeCounts {
  /** Upper bound of the schema nodes applied to one value node, over every value depth. */
  perValueNode: number;
}

export interface Expansion {
  readonly size: ExpandedSize;
  /** Positions that a reference re-enters while they are being expanded (recursion targets). */
  readonly recursive: ReadonlySet<string>;
}

export class GraphFailure extends Error {
  readonly pointer: string;
  constructor(pointer: string, detail: string) {
    super(detail);
    this.pointer = pointer;
  }
}

/** Expansion counts, or a GraphFailure naming the `$ref` through which a cap was passed. */
export function expandedSize(positions: ReadonlyMap<string, SchemaPosition>): Expansion {
  const recursive = new Set<string>();
  const size: SizeCounts = { nodes: 0, branches: 0, patterns: 0, depth: 0 };
  // Positions on the current expansion path -> value steps taken when each was entered.
  const onPath = new Map<string, number>();
  const refs: string[] = [];
  let steps = 0;
  let firstBackRef: string | undefined;

  const over = (what: string): never => {
    const at = refs[refs.length - 1] ?? "";
    throw new GraphFailure(at, `through $ref, validation reaches ${what} (each use of a reference counts its target)`);
  };
  const visit = (pointer: string, depth: number): void => {
    const p = positions.get(pointer);
    if (p === undefined) return;
    size.nodes += p.ownNodes;
    size.branches += p.branches;
    size.patterns += p.patterns;
    if (depth > size.depth) size.depth = depth;
    if (size.nodes > SCHEMA_MAX_NODES) over(`more than ${SCHEMA_MAX_NODES} schema nodes`);
    if (size.branches > SCHEMA_MAX_BRANCHES) over(`more than ${SCHEMA_MAX_BRANCHES} combinator branches`);
    if (size.patterns > SCHEMA_MAX_PATTERNS) over(`more than ${SCHEMA_MAX_PATTERNS} patterns`);
    if (depth > SCHEMA_MAX_DEPTH) over(`schema nesting deeper than ${SCHEMA_MAX_DEPTH} (a $ref counts one level)`);
    onPath.set(pointer, steps);
    for (const e of p.edges) {
      const entered = onPath.get(e.to);
      if (entered !== undefined) {
        const at = e.refAt ?? `${pointer}`;
        if (entered === steps + (e.step === undefined ? 0 : 1)) {
          throw new GraphFailure(at, "$ref cycle that never steps into the value (through allOf, anyOf, oneOf, not, if/then/else or $ref alone)");
        }
        firstBackRef ??= at;
        recursive.add(e.to);
        continue;
      }
      if (e.step !== undefined) steps++;
      if (e.refAt !== undefined) refs.push(e.refAt);
      visit(e.to, depth + 1);
      if (e.refAt !== undefined) refs.pop();
      if (e.step !== undefined) steps--;
    }
    onPath.delete(pointer);
  };
  visit("", 1);
  const perValueNode = firstBackRef === undefined ? size.nodes : recursionBound(positions, firstBackRef);
  return { size: { ...size, perValueNode: Math.max(perValueNode, size.nodes) }, recursive };
}

interface Closure {
  /** Schema nodes applied to the value by this position, through same-value edges. */
  readonly nodes: number;
  /** Edges into the value's children, with how many times the closure holds each. */
  readonly children: { step: Step; to: string; times: number }[];
}

const CLAMP = SCHEMA_MAX_NODES + 1;

/**
 * Max over value depths d ≤ VALUE_MAX_DEPTH of F(root, d), where F(P, 0) is P's closure size and
 * F(P, d + 1) = max over child keys k of Σ (times × F(child, d)) over the closure's child edges
 * that k can take. Summing per key (a name or index, plus the edges any key or item takes) keeps a
 * tree (left and right both referring to the root) at one application per node; a sum of maxima is
 * an upper bound of the maximum of sums, so the bound never under-counts a real value.
 */
function recursionBound(positions: ReadonlyMap<string, SchemaPosition>, refAt: string): number {
  const closures = new Map<string, Closure>();
  const closure = (pointer: string): Closure => {
    const known = closures.get(pointer);
    if (known !== undefined) return known;
    const p = positions.get(pointer);
    let nodes = p?.ownNodes ?? 0;
    const children = new Map<string, { step: Step; to: string; times: number }>();
    for (const e of p?.edges ?? []) {
      if (e.step === undefined) {
        const c = closure(e.to);
        nodes = Math.min(CLAMP, nodes + c.nodes);
        for (const ch of c.children) add(children, ch.step, ch.to, ch.times);
      } else {
        add(children, e.step, e.to, 1);
      }
    }
    const made = { nodes, children: [...children.values()] };
    closures.set(pointer, made);
    return made;
  };
  let level = new Map<string, number>();
  const reachable = new Set<string>();
  const collect = (pointer: string): void => {
    if (reachable.has(pointer)) return;
    reachable.add(pointer);
    for (const ch of closure(pointer).children) collect(ch.to);
  };
  collect("");
  for (const p of reachable) level.set(p, closure(p).nodes);
  let worst = level.get("") ?? 0;
  for (let d = 1; d <= VALUE_MAX_DEPTH; d++) {
    const next = new Map<string, number>();
    for (const p of reachable) next.set(p, stepBound(closure(p), level));
    level = next;
    const atRoot = level.get("") ?? 0;
    if (atRoot > SCHEMA_MAX_NODES) {
      throw new GraphFailure(refAt, `through recursion, validation can apply more than ${SCHEMA_MAX_NODES} schema nodes to one value node (at value depth ${d})`);
    }
    if (atRoot > worst) worst = atRoot;
  }
  return worst;
}

function add(into: Map<string, { step: Step; to: string; times: number }>, step: Step, to: string, times: number): void {
  const key = `${stepKey(step)}\u0000${to}`;
  const had = into.get(key);
  if (had === undefined) into.set(key, { step, to, times });
  else had.times = Math.min(CLAMP, had.times + times);
}

function stepKey(s: Step): string {
  return s.kind === "name" ? `n:${s.name}` : s.kind === "index" ? `i:${s.index}` : s.kind;
}

/** max over child keys of the applications one value node's child receives (see recursionBound). */
function stepBound(c: Closure, below: ReadonlyMap<string, number>): number {
  let anyKey = 0;
  let anyIndex = 0;
  let keyString = 0;
  const names = new Map<string, number>();
  const indexes = new Map<number, number>();
  for (const ch of c.children) {
    const w = Math.min(CLAMP, ch.times * (below.get(ch.to) ?? 0));
    switch (ch.step.kind) {
      case "anyKey": anyKey += w; break;
      case "anyIndex": anyIndex += w; break;
      case "keyString": keyString += w; break;
      case "name": names.set(ch.step.name, (names.get(ch.step.name) ?? 0) + w); break;
      case "index": indexes.set(ch.step.index, (indexes.get(ch.step.index) ?? 0) + w); break;
    }
  }
  const maxOf = (m: Map<unknown, number>): number => Math.max(0, ...m.values());
  return Math.min(CLAMP, Math.max(anyKey + maxOf(names), anyIndex + maxOf(indexes), keyString));
}
