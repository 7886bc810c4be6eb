#!/usr/bin/env bash
# Install llama-cpp-python built portably (never -march=native) into the venv given as $1.
# The wheel is cached under ~/.cache/mascot/llama-wheels/<key>, keyed by the version, the
# CMake flags and the Python version, because pip's own wheel cache ignores CMAKE_ARGS and would
# reinstall a wheel once built natively on this machine.
set -euo pipefail
PY="$1/bin/python"
VERSION="${LLAMA_CPP_VERSION:-0.3.36}"
case "$(uname -m)" in
  x86_64|amd64)
    # Haswell-level x86-64 (AVX2, FMA, F16C, BMI2): every x86-64 desktop CPU since 2013-2015.
    # No AVX-512 and no AMX: some VMs advertise AMX but trap on it (SIGILL).
    DEFAULT_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
  *)
    DEFAULT_ARGS="-DGGML_NATIVE=OFF" ;;
esac
ARGS="${LLAMA_CMAKE_ARGS:-$DEFAULT_ARGS}"
PYVER="$("$PY" -c 'import sys, sysconfig; print(sys.version_info[:2], sysconfig.get_platform())')"
KEY="$(printf '%s|%s|%s' "$VERSION" "$ARGS" "$PYVER" | sha256sum | cut -c1-16)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/mascot/llama-wheels/$KEY"
if ! ls "$CACHE"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "Building llama.cpp $VERSION portably (5-7 minutes on 2 cores, once per machine): $ARGS"
  rm -rf "$CACHE.tmp" && mkdir -p "$CACHE.tmp"
  start=$(date +%s)
  CMAKE_ARGS="$ARGS" FORCE_CMAKE=1 "$PY" -m pip wheel --quiet --no-cache-dir --no-deps \
      --no-binary llama-cpp-python "llama-cpp-python==$VERSION" -w "$CACHE.tmp"
  echo "$ARGS" > "$CACHE.tmp/CMAKE_ARGS"
  echo "built in $(( $(date +%s) - start )) s" > "$CACHE.tmp/BUILD_TIME"
  rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE"
fi
# --force-reinstall: replace a llama-cpp-python built earlier with other flags; then its deps.
"$PY" -m pip install --quiet --force-reinstall --no-deps "$CACHE"/llama_cpp_python-*.whl
"$PY" -m pip install --quiet "$CACHE"/llama_cpp_python-*.whl
# Check what was installed: the build's CPU features must not include AMX (see README).
"$PY" - <<'PYEOF'
import llama_cpp
info = llama_cpp.llama_print_system_info().decode()
print("llama.cpp", llama_cpp.__version__, "built for:", info.strip())
if "AMX_INT8 = 1" in info:
    raise SystemExit("llama.cpp was built with AMX; rebuild it portably: make rebuild-llama")
PYEOF
