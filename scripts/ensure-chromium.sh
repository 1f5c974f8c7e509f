#!/usr/bin/env bash
# Make sure Debian's chromium is present for the real-browser notebook test (tests/test_browser.py).
# Installs the `chromium` Debian package with apt-get when it is missing and we may (root, or sudo
# without a password); otherwise says what to do.  Never runs `playwright install`.
set -u
BIN=${KAFKAFMT_CHROMIUM:-/usr/bin/chromium}
if [ -x "$BIN" ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: $BIN is missing and apt-get is not available; the browser test will be skipped (fails under CI=true)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        echo "ensure-chromium: $BIN is missing; run 'sudo apt-get install -y chromium' (the browser test is skipped until then, and fails under CI=true)"
        exit 0
    fi
fi
echo "ensure-chromium: $BIN is missing: installing the Debian package 'chromium' with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null \
    && echo "ensure-chromium: installed $($BIN --version 2>/dev/null)" \
    || echo "ensure-chromium: apt-get could not install chromium; the browser test will be skipped (fails under CI=true)"
exit 0
