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

# 3. The μ transformers + LoRA mu.step bench. It rewrites mu-lora-bench.json after every phase,
# so a failure or the time limit leaves what was measured so far, with "status" saying where.
rc=0
(cd "$ROOT/python/rubric-trainer" && timeout 120 "$PYTHON" - <<'EOF') 2>&1 | tee "$OUT/bench.txt" || rc=$?
import json, os, statistics, sys, tempfile, time, traceback
from pathlib import Path

sys.path[:0] = ["src", "tests"]
import torch

result = {"status": "started", "torch": torch.__version__, "cuda_available": torch.cuda.is_available()}
path = Path(os.environ["OUT"]) / "mu-lora-bench.json"


def save() -> None:
    path.write_text(json.dumps(result, indent=2) + "\n")


save()
try:
    import peft
    import transformers

    from hf_model import write_model
    from rubric_trainer.distributed import DistContext
    from rubric_trainer.protocol import Request
    from rubric_trainer.server import Session

    result.update(transformers=transformers.__version__, peft=peft.__version__, torch_threads=torch.get_num_threads())
    if torch.cuda.is_available():
        result["gpu"] = torch.cuda.get_device_name(0)
        torch.cuda.reset_peak_memory_stats()
    session = Session(DistContext(0, 1, 0), None)

    def call(method, params):
        started = time.perf_counter()
        reply = session.handle(Request(1, method, params))
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']['message']}")
        return reply["result"], (time.perf_counter() - started) * 1000

    corpus = ['{"criteria": [{"text": "Includes a summary table", "weight": 3}]}', "Task: Draft a quarterly budget memo.", "Q1: Which sections matter?\nA1: The budget table."] * 8
    model = {"d_model": 64, "layers": 2, "heads": 4, "max_positions": 256}
    result["model"] = {"kind": "transformers (random Llama, tests/hf_model.py)", **model}
    model_dir = write_model(Path(tempfile.mkdtemp()) / "mu-bench", corpus, vocab_size=400, d_model=model["d_model"], layers=model["layers"], heads=model["heads"], max_positions=model["max_positions"])
    # μ where ARCO runs it: on the GPU, the backbone in bfloat16 (the score head stays float32).
    placement = {"device": "cuda", "dtype": "bfloat16"} if torch.cuda.is_available() else {"device": "cpu", "dtype": "float32"}
    summary, init_ms = call("mu.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "k": 3, "seed": 1, "lora": {}, **placement})
    result.update(status="initialised", init_ms=init_ms, mu=summary, mu_device=str(next(session.mu.network.parameters()).device), mu_dtype=summary["dtype"])
    save()

    generator = torch.Generator().manual_seed(0)

    def ids(n):
        return torch.randint(3, 256, (n,), generator=generator).tolist()

    trajectories = [{"steps": [{"prompt": ids(48), "criteria": ids(16)} for _ in range(4)], "reward": float(i % 2)} for i in range(16)]
    params = {"trajectories": trajectories, "learning_rate": 1e-4, "head_learning_rate": 1e-3, "beta": 0.05}
    result["batch"] = {"trajectories": 16, "steps": 64, "prompt_tokens": 48, "criteria_tokens": 16}
    for _ in range(2):  # warm-up, then μ_ref: the timed steps carry the KL term
        call("mu.step", params)
    call("mu.set_reference", {})
    calls, computes, losses, kls = [], [], [], []
    for _ in range(20):
        metrics, ms = call("mu.step", params)
        calls.append(ms)
        computes.append(metrics["compute_ms"])
        losses.append(metrics["loss"])
        kls.append(metrics["kl"])
        result.update(status=f"{len(calls)} of 20 steps", step_call_ms=calls, step_compute_ms=computes, loss=losses, kl=kls)
        save()
    result["step_call_ms_median"] = statistics.median(calls)
    result["step_compute_ms_median"] = statistics.median(computes)
    steps = [s for t in trajectories for s in t["steps"]]
    scores_ms = [call("mu.scores", {"steps": steps})[1] for _ in range(5)]
    result.update(scores_call_ms=scores_ms, scores_call_ms_median=statistics.median(scores_ms))
    save()
    # Greedy criteria for the 64 step prompts at once (left-padded, through the model's cache):
    # 32 new tokens at most, an EOS id the random model rarely writes, so rows run to the limit.
    prompts = [s["prompt"] for s in steps]
    generated = []
    for _ in range(3):
        reply, ms = call("mu.generate", {"prompts": prompts, "max_new_tokens": 32, "eos_id": 1})
        generated.append({"call_ms": ms, "tokens": sum(len(row) for row in reply["ids"])})
    result.update(generate=generated, generate_call_ms_median=statistics.median(g["call_ms"] for g in generated), generate_batch={"prompts": 64, "prompt_tokens": 48, "max_new_tokens": 32})
    if torch.cuda.is_available():
        result["cuda_max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()
        result["cuda_max_memory_reserved_bytes"] = torch.cuda.max_memory_reserved()
    if result["mu_device"] == "cpu":
        result["note"] = "torch sees no CUDA: μ ran on the CPU in float32"
    result["status"] = "ok"
    save()
    print(json.dumps({k: result[k] for k in ("mu_device", "mu_dtype", "init_ms", "step_call_ms_median", "step_compute_ms_median", "scores_call_ms_median", "generate_call_ms_median")}))
except BaseException as error:
    result.update(status="failed", error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc(limit=12))
    save()
    raise
EOF
[ "$rc" = 0 ] || fail "mu bench (exit $rc; 124 is the 120 s limit)"

note "took $(($(date +%s) - started)) s"
if [ -n "$failures" ]; then
  note "summary: failed:$failures"
  exit 1
fi
note "all passed"
