// What Ruru (GraphiQL, development only) opens with: an example structured request and the development token's
// header, so the first query runs as the `dev` user without copying anything from the log.
const EXAMPLE_FORMAT = JSON.stringify({
  type: "json_schema",
  json_schema: {
    name: "workspace_report",
    schema: {
      type: "object",
      properties: { files: { type: "array", items: { type: "string" } } },
      required: ["files"],
      additionalProperties: false,
    },
  },
});

/** The example: a chat on the demo workspace whose first message asks for a structured result. */
export const EXAMPLE_QUERY = `# Structured output is an experiment, off by default; switch it on once with
#   npm run chatd -- experiments enable chat-structured-output
# Run this, then subscribe to chatEvents(chatId: ...) or query chatByRowId for the receipt.
mutation CreateStructuredChat {
  createChat(input: {
    workspace: "demo"
    content: [{type: "text", text: "List the files in my workspace"}]
    responseFormat: ${JSON.stringify(EXAMPLE_FORMAT)}
  }) {
    result { chatId structuredOutputRequestId }
  }
}
`;

/** The `ruru` part of the preset (grafserv passes clientConfig to the page). */
type RuruPreset = NonNullable<GraphileConfig.Preset["ruru"]>;

export function ruruDefaults(developmentToken: string): RuruPreset {
  const clientConfig = {
    defaultQuery: EXAMPLE_QUERY,
    // initialHeaders, not defaultHeaders: a restart signs a new token, and the page must use the current one.
    initialHeaders: JSON.stringify({ Authorization: `Bearer ${developmentToken}` }, null, 2),
  };
  // The type lists every Ruru prop as required; grafserv spreads these over its own defaults.
  return { clientConfig: clientConfig as RuruPreset["clientConfig"] };
}
