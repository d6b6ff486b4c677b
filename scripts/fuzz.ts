// Long fast-check runs of the src/structured properties (`npm run fuzz`; FUZZ_RUNS overrides).
import { checkProperties } from "../test/structured/properties.ts";

const runs = Number(process.env.FUZZ_RUNS ?? 20_000);
const started = Date.now();
checkProperties(runs);
console.log(`fuzz: ${runs} runs per property passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
