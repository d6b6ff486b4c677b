// A validation rule that refuses documents nested deeper than `maxDepth` fields (PostGraphile OSS has no cost
// analysis). Fragments are followed (cycles are already a validation error); introspection (`__schema`,
// `__type`) is not counted, so GraphiQL and schema tooling keep working.
import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from "postgraphile/graphql";

export const DEFAULT_MAX_DEPTH = 12;

export function depthLimitRule(maxDepth = DEFAULT_MAX_DEPTH) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    const depthOf = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (!set) return 0;
      let deepest = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value.startsWith("__")) continue;
          deepest = Math.max(deepest, 1 + depthOf(selection.selectionSet, seen));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depthOf(selection.selectionSet, seen));
        } else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (!fragment || seen.has(name)) continue;
          deepest = Math.max(deepest, depthOf(fragment.selectionSet, new Set([...seen, name])));
        }
        if (deepest > maxDepth) return deepest;
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(`Query depth ${depth} exceeds the limit of ${maxDepth}`,
            { nodes: [node], extensions: { code: "QUERY_TOO_DEEP" } }));
        }
      },
    };
  };
}

export const DepthLimitPlugin = (maxDepth = DEFAULT_MAX_DEPTH): GraphileConfig.Plugin => ({
  name: "ChatdDepthLimitPlugin",
  version: "1.0.0",
  grafserv: {
    middleware: {
      setPreset(next, event) {
        event.validationRules.push(depthLimitRule(maxDepth));
        return next();
      },
    },
  },
});
