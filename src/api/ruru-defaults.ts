// What Ruru (GraphiQL, development only) opens with: an example structured request and the development token's
// header, so the first query runs as the `dev` user without copying anything from the log. The example is the
// README's five-minute path: without provider keys the scripted provider plays the script in the message (list
// the demo workspace, then submit the listing), so the receipt holds what the message asked for.

const EXAMPLE_SCRIPT = {
  script: [
    { tool_calls: [{ name: "list_files", args: { path: "." } }] },
    { tool_calls: [{ name: "coder_structured_output", args: { output: { files: ["notes.txt", "README.md"] } } }] },
  ],
};

const EXAMPLE_FORMAT = {
  type: "json_schema",
  json_schema: {
    name: "listing",
    schema: {
      type: "object",
      properties: { files: { type: "array", items: { type: "string" } } },
      required: ["files"],
      additionalProperties: false,
    },
  },
};

export const EXAMPLE_QUERY = `# Structured output is an experiment, off by default; switch it on once with
#   npm run chatd -- experiments enable chat-structured-output
# Then run this, and query the receipt with the structuredOutputRequestId it returns (below).
mutation CreateChat($content: JSON!, $responseFormat: String) {
  createChat(input: {workspace: "demo", content: $content, responseFormat: $responseFormat}) {
    result { chatId structuredOutputRequestId }
  }
}

query Receipt($id: UUID!) {
  structuredOutputRequestByRowId(rowId: $id) {
    status
    chatMessageByReceiptMessageId { structuredOutput { status valueJson error { code message } } }
  }
}
`;

/** `responseFormat` is a string holding the envelope's JSON text (docs/api.md says why). */
export const EXAMPLE_VARIABLES = {
  content: [{ type: "text", text: JSON.stringify(EXAMPLE_SCRIPT) }],
  responseFormat: JSON.stringify(EXAMPLE_FORMAT),
  id: "<structuredOutputRequestId>",
};

type RuruPreset = NonNullable<GraphileConfig.Preset["ruru"]>;

export function ruruDefaults(developmentToken: string): RuruPreset {
  const clientConfig = {
    defaultQuery: EXAMPLE_QUERY,
    initialVariables: JSON.stringify(EXAMPLE_VARIABLES, null, 2),
    // initialHeaders, not defaultHeaders: a restart signs a new token, and the page must use the current one.
    initialHeaders: JSON.stringify({ Authorization: `Bearer ${developmentToken}` }, null, 2),
  };
  // The type lists every Ruru prop as required; grafserv spreads these over its own defaults.
  return { clientConfig: clientConfig as RuruPreset["clientConfig"] };
}
