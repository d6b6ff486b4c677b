// Imported first by main.tsx. The AI SDK validates with zod, which probes `new Function("")` to decide whether to
// compile its validators; under the console's Content-Security-Policy (script-src 'self', no 'unsafe-eval') that
// probe is refused and reported as a violation. jitless skips the probe: validation is interpreted instead.
import { config } from "zod";

config({ jitless: true });
