// What a GraphQL document costs, measured before PostGraphile validates, plans or executes it: validation and
// planning are synchronous, so a document they are slow on stalls every request of the process. Counted after
// fragment expansion (a fragment spread ten times counts ten times; each fragment is measured once, so measuring
// stays linear in the document's size). A token limit, checked by the lexer first, bounds the work of parsing.
// Nodes are estimated without the schema: a field with `first`/`last`, or one selecting `nodes` or `edges`, is a
// connection of that many rows (the maximum page size without either), and the rows of a connection inside another's
// nodes multiply: allChats(first: 100) { nodes { messages(first: 10) { ... } } } is 100 + 100 * 10.
import {
  GraphQLError,
  Kind,
  Lexer,
  parse,
  Source,
  TokenKind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "postgraphile/graphql";

export interface CostLimits {
  /** Lexical tokens in the document (names, punctuation, values; a string literal is one token). */
  maxTokens: number;
  /** Operations defined in one document (only one runs, but every one is validated). */
  maxOperations: number;
  /** Aliased fields in one operation. */
  maxAliases: number;
  /** Selected fields in one operation, introspection and `__typename` included. */
  maxFields: number;
  /** Nested fields (introspection fields excepted, so schema tooling keeps working). */
  maxDepth: number;
  /** `first` and `last` of a connection; also what a connection without either counts for in `maxNodes`. */
  maxPageSize: number;
  /** Estimated rows in one operation: each connection's page size times the page sizes of the ones around it, summed. */
  maxNodes: number;
}

export const DEFAULT_COST_LIMITS: Readonly<CostLimits> = {
  maxTokens: 10_000,
  maxOperations: 5,
  maxAliases: 30,
  maxFields: 500,
  maxDepth: 12,
  maxPageSize: 1_000,
  maxNodes: 250_000,
};

export interface DocumentCost {
  operations: number;
  /** The most expensive operation's counts. */
  aliases: number;
  fields: number;
  depth: number;
  nodes: number;
  /** The document selects `__schema` or `__type` somewhere. */
  introspection: boolean;
}

interface SetCost {
  fields: number;
  aliases: number;
  depth: number;
  /** Estimated rows, for one row of the parent: they scale with the parent's rows, so a fragment is measured once. */
  nodes: number;
  /** The set selects `nodes` or `edges` itself (its field is a connection). */
  listing: boolean;
  introspection: boolean;
}

const EMPTY: Readonly<SetCost> = { fields: 0, aliases: 0, depth: 0, nodes: 0, listing: false, introspection: false };

const PAGE_ARGUMENTS = new Set(["first", "last", "offset"]);

function refusal(code: string, message: string, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extensions } });
}

/** A field's `first`/`last` (the smaller of the two), null when it has neither as a number. */
function pageSize(field: FieldNode, values: ArgumentValues): number | null {
  let size: number | null = null;
  for (const argument of field.arguments ?? []) {
    if (argument.name.value !== "first" && argument.name.value !== "last") continue;
    const value = values(argument.value);
    if (typeof value === "number") size = size === null ? value : Math.min(size, value);
  }
  return size;
}

function measure(document: DocumentNode, values: ArgumentValues, defaultPageSize: number): DocumentCost {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const measured = new Map<string, SetCost>();
  const measuring = new Set<string>();
  const fragmentCost = (name: string): SetCost => {
    const known = measured.get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    // An unknown or cyclic spread is a validation error reported later; it adds nothing here.
    if (!fragment || measuring.has(name)) return EMPTY;
    measuring.add(name);
    const cost = setCost(fragment.selectionSet);
    measuring.delete(name);
    measured.set(name, cost);
    return cost;
  };
  const setCost = (set: SelectionSetNode | undefined): SetCost => {
    const total: SetCost = { ...EMPTY };
    if (!set) return total;
    for (const selection of set.selections) {
      let part: SetCost;
      if (selection.kind === Kind.FIELD) {
        const inner = setCost(selection.selectionSet);
        const name = selection.name.value;
        const meta = name.startsWith("__");
        const paged = pageSize(selection, values);
        const rows = paged ?? (inner.listing ? defaultPageSize : null);
        part = {
          fields: inner.fields + 1,
          aliases: inner.aliases + (selection.alias ? 1 : 0),
          depth: meta ? 0 : inner.depth + 1,
          nodes: rows === null ? inner.nodes : rows + rows * inner.nodes,
          listing: name === "nodes" || name === "edges",
          introspection: inner.introspection || name === "__schema" || name === "__type",
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        part = setCost(selection.selectionSet);
      } else {
        part = fragmentCost(selection.name.value);
      }
      total.fields += part.fields;
      total.aliases += part.aliases;
      total.depth = Math.max(total.depth, part.depth);
      total.nodes += part.nodes;
      total.listing ||= part.listing;
      total.introspection ||= part.introspection;
    }
    return total;
  };
  const cost: DocumentCost = { operations: 0, aliases: 0, fields: 0, depth: 0, nodes: 0, introspection: false };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    cost.operations += 1;
    const operation = setCost(definition.selectionSet);
    cost.aliases = Math.max(cost.aliases, operation.aliases);
    cost.fields = Math.max(cost.fields, operation.fields);
    cost.depth = Math.max(cost.depth, operation.depth);
    cost.nodes = Math.max(cost.nodes, operation.nodes);
    cost.introspection ||= operation.introspection;
  }
  return cost;
}

type ArgumentValues = (value: ValueNode) => unknown;

/** An argument's value: an integer literal, or a variable's value (its default when the request has none). */
function argumentValues(document: DocumentNode, variables: Readonly<Record<string, unknown>>): ArgumentValues {
  const defaults = new Map<string, unknown>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const variable of definition.variableDefinitions ?? []) {
      const value = variable.defaultValue;
      if (value?.kind === Kind.INT) defaults.set(variable.variable.name.value, Number(value.value));
    }
  }
  return (value) => {
    if (value.kind === Kind.INT) return Number(value.value);
    if (value.kind !== Kind.VARIABLE) return undefined;
    const name = value.name.value;
    return Object.hasOwn(variables, name) ? variables[name] : defaults.get(name);
  };
}

/** Every `first`/`last`/`offset` argument in the document with its value. */
function pageArguments(document: DocumentNode, values: ArgumentValues): { name: string; value: unknown }[] {
  const found: { name: string; value: unknown }[] = [];
  const visitField = (field: FieldNode) => {
    for (const argument of field.arguments ?? []) {
      if (PAGE_ARGUMENTS.has(argument.name.value)) found.push({ name: argument.name.value, value: values(argument.value) });
    }
  };
  const walk = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) visitField(selection);
      if (selection.kind !== Kind.FRAGMENT_SPREAD) walk(selection.selectionSet);
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) {
      walk(definition.selectionSet);
    }
  }
  return found;
}

export interface Analysis {
  /** The refusal, or null when the document is within every limit (or does not parse: GraphQL reports that). */
  error: GraphQLError | null;
  cost: DocumentCost | null;
}

export function analyzeDocument(query: string, variables: Readonly<Record<string, unknown>> | null | undefined,
  limits: Readonly<CostLimits> = DEFAULT_COST_LIMITS): Analysis {
  let document: DocumentNode;
  try {
    // Counted with the lexer rather than parse's maxTokens, whose refusal is told apart only by its message.
    const lexer = new Lexer(new Source(query));
    let tokens = 0;
    while (lexer.advance().kind !== TokenKind.EOF) {
      tokens += 1;
      if (tokens > limits.maxTokens) {
        return { cost: null, error: refusal("QUERY_TOO_LARGE", `The document has more than ${limits.maxTokens} tokens`, { limit: limits.maxTokens }) };
      }
    }
    document = parse(query, { noLocation: true });
  } catch {
    // A syntax error: GraphQL reports it as usual.
    return { cost: null, error: null };
  }
  const values = argumentValues(document, variables ?? {});
  const cost = measure(document, values, limits.maxPageSize);
  const over = (code: string, what: string, actual: number, limit: number) =>
    refusal(code, `${what} ${actual} exceeds the limit of ${limit}`, { limit, actual });
  if (cost.operations > limits.maxOperations) {
    return { cost, error: over("TOO_MANY_OPERATIONS", "Operations in the document:", cost.operations, limits.maxOperations) };
  }
  if (cost.depth > limits.maxDepth) return { cost, error: over("QUERY_TOO_DEEP", "Query depth", cost.depth, limits.maxDepth) };
  if (cost.aliases > limits.maxAliases) {
    return { cost, error: over("TOO_MANY_ALIASES", "Aliases in one operation:", cost.aliases, limits.maxAliases) };
  }
  if (cost.fields > limits.maxFields) {
    return { cost, error: over("TOO_MANY_FIELDS", "Fields in one operation (after fragment expansion):", cost.fields, limits.maxFields) };
  }
  for (const { name, value } of pageArguments(document, values)) {
    if (typeof value !== "number") continue;
    if (value < 0 || !Number.isInteger(value)) {
      return { cost, error: refusal("INVALID_PAGE_ARGUMENT", `\`${name}\` must be a non-negative integer`, { argument: name }) };
    }
    if (name !== "offset" && value > limits.maxPageSize) {
      return { cost, error: refusal("PAGE_TOO_LARGE", `\`${name}\` ${value} exceeds the maximum page size of ${limits.maxPageSize}`,
        { argument: name, limit: limits.maxPageSize }) };
    }
  }
  // After the page arguments, so that a refused `first` is reported as such rather than as its product.
  if (cost.nodes > limits.maxNodes) {
    return { cost, error: over("TOO_MANY_NODES", "Estimated nodes in one operation (page sizes multiplied through nested connections):",
      cost.nodes, limits.maxNodes) };
  }
  return { cost, error: null };
}
