import fc from "fast-check";

/** JSON number literals of every shape JSON allows, including big and tiny ones. */
export const numberLiteral: fc.Arbitrary<string> = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,30}$/)),
    fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.integer({ min: 0, max: 70 })), { nil: undefined }),
  )
  .map(([neg, int, frac, exp]) => `${neg ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}${exp === undefined ? "" : `${exp[0]}${exp[1]}${exp[2]}`}`);

const stringValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 8 }),
  fc.constantFrom("", "\u2028", "\u007f", "\\", '"', "\u0001\u001f", "\u{1F600}", "\uff61", "é", "/", "~", "__proto__"),
).filter((s) => !s.includes("\u0000"));

/** JSON text (with duplicate-free objects) as a string, built without JSON.stringify for numbers. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom("null", "true", "false"),
    numberLiteral,
    stringValue.map((s) => JSON.stringify(s)),
    fc.array(tie("value"), { maxLength: 5 }).map((xs) => `[${xs.join(",")}]`),
    fc
      .uniqueArray(fc.tuple(stringValue, tie("value")), { maxLength: 5, selector: (e) => e[0] })
      .map((es) => `{${es.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")}}`),
  ),
})).value;
