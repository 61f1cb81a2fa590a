#!/usr/bin/env bash
# The official OpenAI Python client, for the tests that drive `thoughtscope serve` the way
# an application would: openai (pinned) from PyPI in a virtual environment under the user
# cache directory, shared by every clone on this machine.
#
#   tests/serve/openai-client.sh install   install it if missing (idempotent; prints nothing else on success)
#   tests/serve/openai-client.sh python    print the venv's python (exit 1 if not installed)
set -euo pipefail

OPENAI_VERSION=3.60.0

cache="${XDG_CACHE_HOME:-$HOME/.cache}/thoughtscope"
venv="$cache/openai-python-$OPENAI_VERSION"
python_bin="$venv/bin/python"

installed() {
  [[ -f "$venv/.installed" && -x "$python_bin" ]]
}

case "${1:-install}" in
  install)
    mkdir -p "$cache"
    exec 9>"$cache/.install.lock"
    flock 9
    installed && exit 0
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$python_bin" -m pip install --quiet --disable-pip-version-check "openai==$OPENAI_VERSION"
    "$python_bin" -c "import openai" >/dev/null
    touch "$venv/.installed"
    ;;
  python)
    installed || { echo "not installed: run $0 install" >&2; exit 1; }
    echo "$python_bin"
    ;;
  *)
    echo "usage: $0 install|python" >&2
    exit 2
    ;;
esac
