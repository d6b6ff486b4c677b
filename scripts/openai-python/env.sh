#!/usr/bin/env bash
# The Python side of test/openai/: a virtual environment in .chatd/openai-venv with the official `openai` SDK and
# Pydantic at the pinned versions of scripts/openai-python/requirements.txt (pip's configured index). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.chatd/openai-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# --retries 0: a configured index that cannot be reached is skipped at once (the local one answers).
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 -r scripts/openai-python/requirements.txt
