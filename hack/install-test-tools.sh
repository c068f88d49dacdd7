#!/usr/bin/env bash
# The system tools some tests drive, from Debian's packages (never a download): promtool for
# the chart's rules and dashboard queries, headless chromium and its driver for the ui's
# browser test. `make test` and .ci/run call this; a no-op once they are installed.
set -euo pipefail

say() { printf '\n[install-test-tools] %s\n' "$*" >&2; }
sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  command -v apt-get >/dev/null 2>&1 || {
    echo "install-test-tools: no apt-get here: install $* with your package manager" >&2
    exit 1
  }
  sudo_ apt-get update -qq
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# promtool parses and unit-tests the chart's alert rules and dashboard queries
# (tests/test_chart_monitoring.py). Debian ships it in `prometheus` (about 20 MB; a no-op once
# installed). Only the tool is wanted: the package's server is stopped if its install started it.
if ! command -v promtool >/dev/null 2>&1; then
  say "installing promtool (Debian's prometheus package) with apt"
  apt_install prometheus
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    sudo_ systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

# The ui's browser test (tests/ui/test_ui_browser.py) drives Debian's headless chromium through
# its chromedriver (selenium, from the test extra); never a browser download. fonts-dejavu-core
# gives the page's labels a font on a machine that has none. A no-op once installed.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! [[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]]; then
  say "installing chromium, chromium-driver and fonts-dejavu-core with apt"
  apt_install chromium chromium-driver fonts-dejavu-core
fi

