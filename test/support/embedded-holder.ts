// A chatd-like process that starts the embedded PostgreSQL on a data folder and holds it until killed
// (test/bootstrap/embedded.test.ts kills it with SIGKILL to leave an orphaned server behind).
import { startEmbedded } from "../../src/db/embedded.ts";

const dataDir = process.argv[2];
if (dataDir == null) throw new Error("usage: embedded-holder.ts DATA_DIR");
const server = await startEmbedded({ dataDir });
process.stdout.write(`ready ${server.port}\n`);
setInterval(() => {}, 60_000);
