// Bounded property runs (a few seconds); scripts/fuzz.ts runs the same properties for much longer.
import { test } from "uvu";
import { checkProperties } from "./properties.ts";

test("fast-check: boundary, envelope, compile and validate never crash and agree with themselves", () => {
  checkProperties(150);
});

test.run();
