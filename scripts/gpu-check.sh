#!/usr/bin/env bash
# The sidecar's transformers paths on a lent GPU machine, in one prepared run of at most about
# 8 minutes (python/rubric-trainer/README.md, "Checking the transformers paths on a GPU"):
#
#   1. the machine: nvidia-smi, and the versions of python, torch (with CUDA), transformers, peft,
#      tokenizers, accelerate and safetensors                                    -> $OUT/env.txt
#   2. pytest -x on the transformers policy, μ on transformers + peft LoRA (its CUDA tests run where
#      torch sees CUDA), the tiny μ's LoRA and the tiny μ (its CUDA test too)   -> $OUT/pytest.txt
#   3. a small μ (transformers + LoRA) on the GPU (device "cuda", bfloat16 backbone; the CPU in
#      float32 where there is none): 20 timed mu.step calls of 64 steps each (16 trajectories of
#      4), with μ_ref set, per-call wall time, the step's own compute_ms, mu.scores and greedy
#      mu.generate timing, and torch.cuda.max_memory_allocated          -> $OUT/mu-lora-bench.json
#      and ARCO's π the same way (a chat model with LoRA r 8): 64 sampled actions, π_old's
#      log-probs, 5 updates with the KL to π_ref, the peft checkpoint    -> $OUT/pi-lora-bench.json
#
# Nothing is downloaded: the tests and the bench write small random models themselves, and the
# Hugging Face libraries are told to stay offline. Every step runs even when an earlier one
# failed, so that one device run brings back all it can; the script then exits non-zero, naming
# what failed ($OUT/status.txt). PYTHON picks the interpreter (default: python3, the one with torch
# on the lent machines; /usr/bin/python3 there may have none). OUT defaults to a new temporary folder.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export OUT
failures=""
started=$(date +%s)
: >"$OUT/status.txt"

note() { echo "gpu-check: $*" | tee -a "$OUT/status.txt"; }
fail() {
  failures="$failures $1"
  echo "gpu-check: FAILED: $1" | tee -a "$OUT/status.txt" >&2
}

note "out: $OUT; python: $(command -v "$PYTHON" || echo "$PYTHON (not found)")"
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
  fail "no torch in $PYTHON: set PYTHON to the interpreter that has it"
  exit 1
fi

# 1. The machine and the versions.
{
  echo "== nvidia-smi"
  timeout 20 nvidia-smi || echo "(nvidia-smi failed or is missing)"
  echo "== versions"
} 2>&1 | tee "$OUT/env.txt"
timeout 45 "$PYTHON" - <<'EOF' 2>&1 | tee -a "$OUT/env.txt" || fail "versions"
import importlib, sys
import torch
print("python", sys.version.split()[0], sys.executable)
print("torch", torch.__version__, "cuda build", torch.version.cuda, "cuda available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0), "memory GiB", round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1))
for name in ("transformers", "peft", "tokenizers", "accelerate", "safetensors", "onnx", "onnxscript"):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as error:  # a missing package is reported, not fatal here: the tests say what it stops
        print(name, "MISSING:", type(error).__name__, error)
EOF

# 2. The tests (-x: the first failure ends them; its traceback is in pytest.txt).
rc=0
(cd "$ROOT/python/rubric-trainer" && timeout 280 "$PYTHON" -m pytest -q -x -p no:cacheprovider -rs \
  tests/test_transformers_policy.py tests/test_mu_transformers.py tests/test_mu_lora.py tests/test_mu.py) 2>&1 | tee "$OUT/pytest.txt" || rc=$?
[ "$rc" = 0 ] || fail "pytest (exit $rc; 124 is the 280 s limit)"

# 3. The benches (tests/gpu_bench.py): μ on transformers + LoRA (mu.step, mu.scores, mu.generate)
# and ARCO's π on transformers + LoRA (sampling, the update with its KL, the peft checkpoint). Each
# rewrites its JSON after every phase, so a failure or the time limit leaves what was measured.
for bench in mu pi; do
  rc=0
  (cd "$ROOT/python/rubric-trainer" && timeout 120 "$PYTHON" tests/gpu_bench.py "$bench" --out "$OUT/$bench-lora-bench.json") 2>&1 | tee "$OUT/$bench-bench.txt" || rc=$?
  [ "$rc" = 0 ] || fail "$bench bench (exit $rc; 124 is the 120 s limit)"
done

note "took $(($(date +%s) - started)) s"
if [ -n "$failures" ]; then
  note "summary: failed:$failures"
  exit 1
fi
note "all passed"
