#!/usr/bin/env bash
# Start JupyterLab on the workbench (notebooks/) on 127.0.0.1 with a fresh token and print its URL.
# Usage: scripts/run-jupyter.sh VENV PORT.  Stop it with Ctrl-C.
set -euo pipefail
VENV=${1:-.venv}
PORT=${2:-8888}
ROOT_FLAG=()
if [ "$(id -u)" = "0" ]; then ROOT_FLAG=(--allow-root); fi  # containers often run as root
# JupyterLab draws a stored widget view (a panel as `make notebooks` saved it, before the kernel runs) only in a
# trusted notebook: these are the workbench's own, so sign them in this user's trust database (jupyter trust)
"$VENV/bin/jupyter" trust notebooks/*.ipynb >/dev/null
TOKEN=$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(16))')
echo
echo "kafkafmt workbench: open http://127.0.0.1:${PORT}/lab/tree/01-format-anatomy.ipynb?token=${TOKEN}"
echo "(JupyterLab on 127.0.0.1 only; the documentation site, with every notebook as a tutorial, is build/docs/index.html; Ctrl-C stops the server)"
echo
exec "$VENV/bin/jupyter" lab --no-browser --ip=127.0.0.1 --port="$PORT" --ServerApp.port_retries=0 \
    --IdentityProvider.token="$TOKEN" --ServerApp.root_dir="$(pwd)/notebooks" \
    --LabApp.news_url=None --ServerApp.log_level=WARN "${ROOT_FLAG[@]}"
