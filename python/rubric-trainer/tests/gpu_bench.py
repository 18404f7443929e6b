"""The benches scripts/gpu-check.sh runs on a lent GPU (and anywhere else, on the CPU in float32 when
torch sees no CUDA), each on a small random Llama that tests/hf_model.py writes (nothing is
downloaded), through the sidecar's own request handling:

    python3 tests/gpu_bench.py mu --out mu-lora-bench.json   # μ on transformers + LoRA: mu.step, mu.scores, mu.generate
    python3 tests/gpu_bench.py pi --out pi-lora-bench.json   # ARCO's π on transformers + LoRA: sampling, the update, a checkpoint

Each rewrites its JSON after every phase, so a failure or a time limit leaves what was measured so
far, with ``status`` saying where.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import torch  # noqa: E402

MODEL = {"d_model": 64, "layers": 2, "heads": 4, "max_positions": 256}
CORPUS = [
    '{"criteria": [{"text": "Includes a summary table", "weight": 3}]}',
    "Task: Draft a quarterly budget memo.",
    "Q1: Which sections matter?\nA1: The budget table.",
    "Question: Which city is the capital of Norland?\nSearch[capital of Norland]\nFinish[Aln]",
] * 8


class Bench:
    """One bench's result file and its sidecar session."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.result: dict[str, Any] = {"status": "started", "torch": torch.__version__, "cuda_available": torch.cuda.is_available()}
        self.save()

    def start(self) -> None:
        """The libraries' versions, the GPU, and a sidecar session (a missing package fails here, recorded)."""
        import peft
        import transformers

        from rubric_trainer.distributed import DistContext
        from rubric_trainer.server import Session

        self.result.update(transformers=transformers.__version__, peft=peft.__version__, torch_threads=torch.get_num_threads())
        if torch.cuda.is_available():
            self.result["gpu"] = torch.cuda.get_device_name(0)
            torch.cuda.reset_peak_memory_stats()
        self.session = Session(DistContext(0, 1, 0), None)
        # Where ARCO runs them: on the GPU, the backbone in bfloat16.
        self.placement = {"device": "cuda", "dtype": "bfloat16"} if torch.cuda.is_available() else {"device": "cpu", "dtype": "float32"}
        self.generator = torch.Generator().manual_seed(0)
        self.save()

    def save(self) -> None:
        self.out.write_text(json.dumps(self.result, indent=2) + "\n")

    def update(self, **fields: Any) -> None:
        self.result.update(fields)
        self.save()

    def call(self, method: str, params: dict) -> tuple[dict, float]:
        from rubric_trainer.protocol import Request

        started = time.perf_counter()
        reply = self.session.handle(Request(1, method, params))
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']['message']}")
        return reply["result"], (time.perf_counter() - started) * 1000

    def model_dir(self, name: str, chat_template: str | None = None) -> Path:
        from hf_model import write_model

        self.result["model"] = {"kind": "transformers (random Llama, tests/hf_model.py)", **MODEL}
        return write_model(Path(tempfile.mkdtemp()) / name, CORPUS, vocab_size=400, d_model=MODEL["d_model"], layers=MODEL["layers"], heads=MODEL["heads"], max_positions=MODEL["max_positions"], chat_template=chat_template)

    def ids(self, n: int) -> list[int]:
        return torch.randint(3, 256, (n,), generator=self.generator).tolist()

    def finish(self, device: str, keys: tuple[str, ...]) -> None:
        if torch.cuda.is_available():
            self.result["cuda_max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()
            self.result["cuda_max_memory_reserved_bytes"] = torch.cuda.max_memory_reserved()
        if device == "cpu":
            self.result["note"] = "torch sees no CUDA: the model ran on the CPU in float32"
        self.update(status="ok")
        print(json.dumps({k: self.result[k] for k in keys}))


def timed(repeats: int, run: Callable[[], float]) -> list[float]:
    return [run() for _ in range(repeats)]


def mu_bench(bench: Bench) -> None:
    """μ with ARCO's LoRA: 20 timed ``mu.step`` calls of 64 steps (16 trajectories of 4, 48 + 16
    tokens, μ_ref set so the KL counts), five ``mu.scores`` calls on the 64 steps, three greedy
    ``mu.generate`` calls on the 64 prompts (32 new tokens at most)."""
    model_dir = bench.model_dir("mu-bench")
    summary, init_ms = bench.call("mu.init", {"model": {"kind": "transformers", "name": str(model_dir)}, "k": 3, "seed": 1, "lora": {}, **bench.placement})
    session = bench.session
    bench.update(status="initialised", init_ms=init_ms, mu=summary, mu_device=str(next(session.mu.network.parameters()).device), mu_dtype=summary["dtype"])
    trajectories = [{"steps": [{"prompt": bench.ids(48), "criteria": bench.ids(16)} for _ in range(4)], "reward": float(i % 2)} for i in range(16)]
    params = {"trajectories": trajectories, "learning_rate": 1e-4, "head_learning_rate": 1e-3, "beta": 0.05}
    bench.result["batch"] = {"trajectories": 16, "steps": 64, "prompt_tokens": 48, "criteria_tokens": 16}
    for _ in range(2):  # warm-up, then μ_ref: the timed steps carry the KL term
        bench.call("mu.step", params)
    bench.call("mu.set_reference", {})
    calls, computes, losses, kls = [], [], [], []
    for _ in range(20):
        metrics, ms = bench.call("mu.step", params)
        calls.append(ms)
        computes.append(metrics["compute_ms"])
        losses.append(metrics["loss"])
        kls.append(metrics["kl"])
        bench.update(status=f"{len(calls)} of 20 steps", step_call_ms=calls, step_compute_ms=computes, loss=losses, kl=kls)
    bench.result["step_call_ms_median"] = statistics.median(calls)
    bench.result["step_compute_ms_median"] = statistics.median(computes)
    steps = [s for t in trajectories for s in t["steps"]]
    scores_ms = timed(5, lambda: bench.call("mu.scores", {"steps": steps})[1])
    bench.update(scores_call_ms=scores_ms, scores_call_ms_median=statistics.median(scores_ms))
    # Greedy criteria for the 64 step prompts at once (left-padded, through the model's cache):
    # an EOS id the random model rarely writes, so rows run to the limit.
    prompts = [s["prompt"] for s in steps]
    generated = []
    for _ in range(3):
        reply, ms = bench.call("mu.generate", {"prompts": prompts, "max_new_tokens": 32, "eos_id": 1})
        generated.append({"call_ms": ms, "tokens": sum(len(row) for row in reply["ids"])})
    bench.update(generate=generated, generate_call_ms_median=statistics.median(g["call_ms"] for g in generated), generate_batch={"prompts": 64, "prompt_tokens": 48, "max_new_tokens": 32})
    bench.finish(bench.result["mu_device"], ("mu_device", "mu_dtype", "init_ms", "step_call_ms_median", "step_compute_ms_median", "scores_call_ms_median", "generate_call_ms_median"))


def pi_bench(bench: Bench) -> None:
    """ARCO's π as `repro arco --policy sidecar:<model>` trains it: LoRA r 8 / α 32 on a chat model
    (ChatML template). A batch of 64 rollouts' actions as the sidecar policy samples them (one
    ``policy.sample`` per prompt, temperature 0.7, 64 new tokens at most, 96-token prompts through
    ``policy.chat``), π_old's log-probs, five timed ``policy.step`` updates on the 64 samples with
    the KL to π_ref (Dr.GRPO at max_tokens 1, as rlxar's REINFORCE), and the checkpoint (the peft
    adapter directory a vLLM server loads)."""
    from hf_model import CHATML

    model_dir = bench.model_dir("pi-bench", chat_template=CHATML)
    summary, init_ms = bench.call("policy.init", {"model": {"kind": "transformers", "name": str(model_dir), "lora": {"r": 8, "lora_alpha": 32}}, "seed": 1, **bench.placement})
    bench.update(status="initialised", init_ms=init_ms, policy=summary, pi_device=summary["device"], pi_dtype=summary["dtype"])
    texts = [" ".join(CORPUS[(i + j) % len(CORPUS)] for j in range(3)) for i in range(64)]
    prompts, chat_ms = bench.call("policy.chat", {"conversations": [[{"role": "system", "content": "Answer with Search[...] or Finish[...]."}, {"role": "user", "content": text[:300]}] for text in texts]})
    prompts = [row[:96] for row in prompts["ids"]]
    eos = summary["tokenizer"]["eos_token_id"]
    sampled, sample_ms = [], []
    for i, prompt in enumerate(prompts):
        reply, ms = bench.call("policy.sample", {"prompt": prompt, "n": 1, "seed": i, "temperature": 0.7, "max_new_tokens": 64, "eos_token_id": eos})
        sampled.append(reply["sequences"][0]["tokens"])
        sample_ms.append(ms)
    bench.update(status="sampled", chat_call_ms=chat_ms, sample_call_ms=sample_ms, sample_call_ms_median=statistics.median(sample_ms), rollout_actions_per_s=1000 * len(sample_ms) / sum(sample_ms), sampled_tokens=sum(len(t) for t in sampled), batch={"actions": 64, "prompt_tokens": 96, "max_new_tokens": 64})
    logprob_ms = []
    groups = []
    for i, (prompt, tokens) in enumerate(zip(prompts, sampled)):
        reply, ms = bench.call("policy.logprobs", {"prompt": prompt, "sequences": [tokens]})
        logprob_ms.append(ms)
        groups.append({"prompt": prompt, "sequences": [{"tokens": tokens, "logp_old": reply["logprobs"][0], "advantage": 1.0 if i % 2 else -1.0}]})
    bench.call("policy.set_reference", {})
    steps, kls = [], []
    for _ in range(5):
        metrics, ms = bench.call("policy.step", {"groups": groups, "objective": "dr-grpo", "max_tokens": 1, "learning_rate": 1e-5, "kl_coef": 0.05, "max_grad_norm": 1.0})
        steps.append(ms)
        kls.append(metrics["kl"])
        bench.update(status=f"{len(steps)} of 5 updates", step_call_ms=steps, kl=kls)
    checkpoint = Path(tempfile.mkdtemp()) / "pi"
    _, save_ms = bench.call("checkpoint.save", {"dir": str(checkpoint)})
    bench.result.update(logprobs_call_ms_median=statistics.median(logprob_ms), logprobs_batch_ms=sum(logprob_ms), step_call_ms_median=statistics.median(steps), checkpoint_ms=save_ms, checkpoint_files=sorted(p.name for p in checkpoint.iterdir()), checkpoint_bytes=sum(p.stat().st_size for p in checkpoint.rglob("*") if p.is_file()))
    bench.finish(summary["device"], ("pi_device", "pi_dtype", "init_ms", "sample_call_ms_median", "rollout_actions_per_s", "logprobs_batch_ms", "step_call_ms_median", "checkpoint_ms"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", choices=["mu", "pi"])
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    bench = Bench(args.out)
    try:
        bench.start()
        (mu_bench if args.bench == "mu" else pi_bench)(bench)
    except BaseException as error:
        bench.update(status="failed", error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc(limit=12))
        raise


if __name__ == "__main__":
    main()
