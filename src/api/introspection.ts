// Who may look at the schema. In production anonymous callers get neither introspection (`__schema`, `__type`;
// `__typename` stays) nor "Did you mean ...?" suggestions in validation errors, which would spell the schema out
// field by field. CHATD_GRAPHQL_INTROSPECTION=all turns both on for everyone; `authenticated` (production's
// default) keeps introspection for callers with a valid token. Suggestions cannot follow the caller: grafserv caches
// validation per document text, so with `authenticated` they are off for everyone.
import { GraphQLError, type ValidationContext, type ValidationRule } from "postgraphile/graphql";
import type { DocumentCost } from "./query-cost.ts";

export type IntrospectionPolicy = "all" | "authenticated";

export function introspectionPolicy(development: boolean): IntrospectionPolicy {
  const raw = process.env.CHATD_GRAPHQL_INTROSPECTION;
  if (raw === undefined || raw === "") return development ? "all" : "authenticated";
  if (raw !== "all" && raw !== "authenticated") throw new Error("CHATD_GRAPHQL_INTROSPECTION must be all or authenticated");
  return raw;
}

/** The refusal of an introspection document from a caller the policy does not let see the schema. */
export function introspectionRefusal(policy: IntrospectionPolicy, cost: DocumentCost, authenticated: boolean): GraphQLError | null {
  if (policy === "all" || !cost.introspection || authenticated) return null;
  return new GraphQLError("Introspection is disabled for anonymous callers", { extensions: { code: "INTROSPECTION_DISABLED" } });
}

const SUGGESTION = / ?Did you mean .*\?$/s;

/** A rule whose errors lose their trailing "Did you mean ...?" (graphql-js 16 has no switch for it). */
function withoutSuggestions(rule: ValidationRule): ValidationRule {
  return (context: ValidationContext) => rule(Object.create(context, {
    reportError: {
      value: (error: GraphQLError) => context.reportError(SUGGESTION.test(error.message)
        ? new GraphQLError(error.message.replace(SUGGESTION, ""), { nodes: error.nodes, extensions: error.extensions })
        : error),
    },
  }) as ValidationContext);
}

export const NoSuggestionsPlugin: GraphileConfig.Plugin = {
  name: "ChatdNoSuggestionsPlugin",
  version: "1.0.0",
  grafserv: {
    middleware: {
      setPreset(next, event) {
        // In place: grafserv reads the rules from this very array.
        const rules = event.validationRules.map(withoutSuggestions);
        event.validationRules.splice(0, rules.length, ...rules);
        return next();
      },
    },
  },
};
