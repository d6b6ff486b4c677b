#!/usr/bin/env bash
# A batch of structured requests from the CLI: one schema file, one prompt per JSONL line, every result exact.
#
# Needs: chatd running (`npm start`; the CLI finds its database, or set DATABASE_URL), the experiment on
# (`npm run chatd -- experiments enable chat-structured-output`). Run from the repository root:
#   bash examples/batch/run.sh
# CHATD_BIN overrides how the CLI is started (default: npm run --silent chatd --). BATCH_USER names the owner.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
chatd() {
  if [ -n "${CHATD_BIN:-}" ]; then
    # shellcheck disable=SC2086
    $CHATD_BIN "$@"
  else
    npm run --silent chatd -- "$@"
  fi
}
id=$(chatd batch submit --schema "$here/schema.json" --input "$here/prompts.jsonl" --user "${BATCH_USER:-alice}" \
  --name sentiment | tail -n 1)
echo "batch $id submitted"
chatd batch wait "$id"
chatd batch results "$id" --format jsonl
