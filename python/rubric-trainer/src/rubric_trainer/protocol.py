"""The wire: newline-delimited JSON over stdio, and the schema of every method's params.

Client → sidecar: a request ``{"id", "method", "params"}`` (id a number or string), or the
notification ``{"method": "$/cancel", "params": {"id"}}``. Sidecar → client: a reply
``{"id", "result"}`` or ``{"id", "error": {"code", "message", "data"}}`` for every request, and
notifications without an id: ``ready`` once at start, ``metrics`` after each training step.
The TypeScript client (packages/gspo/src/sidecar/protocol.ts) holds the same schemas in zod.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Optional, Union

import torch

from .faults import InvalidRequest, NonFinite, ParseError
from .mu_lora import DEFAULT_TARGETS, MAX_DROPOUT, TINY_TARGETS
from .mu_steps import POOLINGS
from .objectives import OBJECTIVES
from .policy import DTYPES
from .schema import Boolean, Field, Integer, ListOf, MapOf, MaskRow, Number, Numbers, ParamError, Record, Tagged, Text, describe
from .xoshiro import ALGORITHM

RequestId = Union[int, str]


@dataclass
class Request:
    id: Optional[RequestId]
    """None for a notification."""
    method: str
    params: dict = field(default_factory=dict)


def parse_message(line: bytes) -> Request:
    """One line from the client as a request or notification; ParseError / InvalidRequest otherwise."""
    try:
        message = json.loads(line)
    except ValueError as error:
        raise ParseError(f"not JSON: {error}") from error
    except RecursionError as error:
        # json's decoder recurses per nesting level; 5,000 `[` once killed the reader thread here.
        raise ParseError("not a request: JSON nested too deeply") from error
    if not isinstance(message, dict):
        raise ParseError(f"expected a JSON object, got {type(message).__name__}")
    unknown = set(message) - {"id", "method", "params"}
    if unknown:
        raise InvalidRequest(f"unknown field {sorted(unknown)[0]!r} (a request has id, method, params)", {"id": message.get("id")})
    request_id = message.get("id")
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, (int, str))):
        raise InvalidRequest(f"id: expected a number or a string, got {json.dumps(request_id)}")
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequest(f"method: expected a non-empty string, got {json.dumps(method)}", {"id": request_id})
    params = message.get("params", {})
    if not isinstance(params, dict):
        raise InvalidRequest(f"params: expected an object, got {json.dumps(params)[:40]}", {"id": request_id})
    return Request(request_id, method, params)


class Channel:
    """The protocol's output stream; one writer at a time, one JSON document per line."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def send(self, message: dict) -> None:
        # allow_nan=False: NaN and Infinity are not JSON, and the client's JSON.parse would choke on them.
        try:
            text = json.dumps(message, allow_nan=False, separators=(",", ":"))
        except ValueError as error:
            raise NonFinite(f"the result holds a NaN or infinite number: {error}") from error
        with self.lock:
            self.stream.write(text.encode("utf-8") + b"\n")
            self.stream.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})


# --- params of each method ------------------------------------------------------------------

TOKENS = ListOf(Integer(0), min_length=1)
ROW = Numbers(min_length=1)
MATRIX = ListOf(ROW, min_length=1)
POSITIVE = Number(exclusive_minimum=0)


def same_shape(rows: list, reference: list, path: str, reference_path: str) -> None:
    if len(rows) != len(reference):
        raise ParamError(path, f"expected {len(reference)} sequences (as {reference_path}), got {len(rows)}")
    for k, (row, ref) in enumerate(zip(rows, reference)):
        if len(row) != len(ref):
            raise ParamError(f"{path}[{k}]", f"expected {len(ref)} tokens (as {reference_path}[{k}]), got {len(row)}")


def check_loss_params(p: dict, path: str) -> None:
    same_shape(p["logp_old"], p["logp_new"], f"{path}.logp_old", "logp_new")
    if p["mask"] is not None:
        same_shape(p["mask"], p["logp_new"], f"{path}.mask", "logp_new")
        for k, row in enumerate(p["mask"]):
            if not any(row):
                raise ParamError(f"{path}.mask[{k}]", "every token is masked out; a sequence needs at least one unmasked token")
    if p["logp_ref"] is not None:
        same_shape(p["logp_ref"], p["logp_new"], f"{path}.logp_ref", "logp_new")
    elif p["beta"] > 0:
        raise ParamError(f"{path}.logp_ref", f"required when beta > 0 (beta is {p['beta']}), got nothing")
    if len(p["advantages"]) != len(p["logp_new"]):
        raise ParamError(f"{path}.advantages", f"expected {len(p['logp_new'])} values (one per sequence of logp_new), got {len(p['advantages'])}")


def check_rollout(p: dict, path: str) -> None:
    if len(p["logp_old"]) != len(p["tokens"]):
        raise ParamError(f"{path}.logp_old", f"expected {len(p['tokens'])} log-probs (one per token), got {len(p['logp_old'])}")


def max_onnx_opset() -> int:
    # torch 1.13 exports opsets up to 17; newer torch more. Older torch has no such constant.
    constants = getattr(torch.onnx, "_constants", None)
    return int(getattr(constants, "ONNX_MAX_OPSET", 17))


def check_heads(p: dict, path: str) -> None:
    if p["d_model"] % p["n_heads"] != 0:
        raise ParamError(f"{path}.n_heads", f"must divide d_model ({p['d_model']}), got {p['n_heads']}")


def tiny_model(min_layers: int, max_seq_len: int) -> Record:
    """The sidecar's small transformer: the policy's may have no block at all, μ's needs one (its cache)."""
    return Record(
        {
            "kind": Text(["tiny"]),
            "vocab_size": Integer(2),
            "d_model": Field(Integer(1), 64),
            "n_heads": Field(Integer(1), 4),
            "n_layers": Field(Integer(min_layers), 2),
            "d_ff": Field(Integer(1), None),
            "max_seq_len": Field(Integer(2), max_seq_len),
        },
        check=check_heads,
    )


def lora_settings(r: Optional[int], lora_alpha: float, lora_dropout: float, check: Optional[Callable[[dict, str], None]] = None) -> Record:
    """peft's LoRA settings as a record, with the defaults of whoever takes them (``r`` None: required)."""
    return Record(
        {
            "r": Integer(1) if r is None else Field(Integer(1), r),
            "lora_alpha": Field(POSITIVE, lora_alpha),
            "lora_dropout": Field(Number(minimum=0), lora_dropout),
            "target_modules": Field(ListOf(Text(min_length=1), min_length=1), None),
        },
        check=check,
    )


MODEL = Tagged(
    "kind",
    {
        "tiny": tiny_model(0, 128),
        "transformers": Record(
            {
                "kind": Text(["transformers"]),
                "name": Text(min_length=1),
                "lora": Field(lora_settings(None, 16.0, 0.0), None),
            }
        ),
    },
)


def check_teacher_scores(p: dict, path: str) -> None:
    for k, score in enumerate(p["scores"]):
        if not -1.0 <= score <= 1.0:
            raise ParamError(f"{path}.scores[{k}]", f"expected a score in [-1, 1], got {score}")


MU_MODEL = Tagged(
    "kind",
    {
        "tiny": tiny_model(1, 256),
        "transformers": Record({"kind": Text(["transformers"]), "name": Text(min_length=1)}),
        # A small pretrained llama read from its GGUF file (``mu_llama``); its shape comes from the file.
        "llama": Record({"kind": Text(["llama"]), "gguf": Text(min_length=1), "max_seq_len": Field(Integer(2), None)}),
    },
)


def check_mu_lora(p: dict, path: str) -> None:
    if p["lora_dropout"] >= MAX_DROPOUT:
        raise ParamError(f"{path}.lora_dropout", f"expected a rate below {MAX_DROPOUT:g}, got {p['lora_dropout']}")
    if p["target_modules"] is None:
        p["target_modules"] = list(DEFAULT_TARGETS)


MU_LORA = lora_settings(8, 32.0, 0.05, check=check_mu_lora)
"""μ's LoRA adapter, ARCO's settings by default: r 8, α 32, dropout 0.05 on q_proj and v_proj."""


MU_DTYPES = ("float32", "bfloat16", "float16")
"""What a transformers μ's backbone may be loaded in; its score head and a tiny μ are always float32."""


def check_mu_init(p: dict, path: str) -> None:
    kind = p["model"]["kind"]
    if p["dtype"] != "float32" and kind != "transformers":
        raise ParamError(f"{path}.dtype", f"a {kind} μ is float32 only (dtype is for a transformers backbone's weights), got {describe(p['dtype'])}")
    if p["lora"] is not None and kind == "llama":
        raise ParamError(f"{path}.lora", "a llama μ trains whole (its attention has no LoRA targets yet); leave lora out")
    # A tiny μ's attention has one fused qkv: only the q and v slices have a name to target.
    lora = p["lora"]
    if lora is not None and p["model"]["kind"] == "tiny":
        for i, name in enumerate(lora["target_modules"]):
            if name not in TINY_TARGETS:
                raise ParamError(f"{path}.lora.target_modules[{i}]", f"a tiny μ's LoRA targets {' or '.join(repr(t) for t in TINY_TARGETS)} (the q and v slices of its fused qkv), got {describe(name)}")
        if len(set(lora["target_modules"])) != len(lora["target_modules"]):
            raise ParamError(f"{path}.lora.target_modules", "names a module twice")


MU_PROMPT = Record(
    {
        "style": Field(Text(choices=("qa", "generic")), None),
        "environment": Field(Text(), None),
        "budgetLabel": Field(Text(min_length=1), None),
        "maxObservationChars": Field(Integer(1), None),
        "layout": Field(Text(choices=("arco", "action-last")), None),
    }
)
# Text through a transformers model's own tokenizer: policy.* and mu.* take the same params.
TEXTS = Record({"texts": ListOf(Text(), min_length=1)})
IDS = Record({"ids": ListOf(ListOf(Integer(0)), min_length=1)})
CONVERSATIONS = Record({"conversations": ListOf(ListOf(Record({"role": Text(("system", "user", "assistant")), "content": Text()}), min_length=1), min_length=1)})

MU_STEP = Record({"prompt": TOKENS, "criteria": ListOf(Integer(0))})
"""A step as μ reads it: the step prompt's ids and the criteria's ids (empty in the "no rubric" ablation)."""



def check_rng_state(p: dict, path: str) -> None:
    if not any(p["words"]):
        raise ParamError(f"{path}.words", "must not be all zero (xoshiro's one fixed point)")


RNG_STATE = Record(
    {"algorithm": Text([ALGORITHM]), "words": ListOf(Integer(0, 2**32 - 1), min_length=4, max_length=4), "key": Text(pattern="[0-9a-f]{16}")},
    check=check_rng_state,
)
"""@rubric/core's ``RngState``, as its ``restoreRng`` accepts it."""


def check_generate(p: dict, path: str) -> None:
    if p["temperature"] > 0:
        if p["rng"] is None:
            raise ParamError(f"{path}.rng", f"required when temperature > 0 (temperature is {p['temperature']}): one stream state per prompt")
        if len(p["rng"]) != len(p["prompts"]):
            raise ParamError(f"{path}.rng", f"expected {len(p['prompts'])} stream states (one per prompt), got {len(p['rng'])}")
    elif p["rng"] is not None:
        # A greedy run draws nothing; states sent anyway would suggest they were advanced.
        raise ParamError(f"{path}.rng", "only with temperature > 0; greedy decoding (temperature absent or 0) draws no random numbers")


MU_PARAMS: dict[str, Record] = {
    "mu.init": Record(
        {
            "model": MU_MODEL,
            "k": Field(Integer(1, 64), 3),
            "seed": Field(Integer(0), 0),
            "pooling": Field(Text(list(POOLINGS)), "prompt+criteria"),
            "lora": Field(MU_LORA, None),
            # Checked, as the policy's, by policy.resolve_device when μ is built. The CPU by default
            # (not the policy's "auto"): μ beside a policy on the one GPU must be asked for.
            "device": Field(Text(min_length=1), "cpu"),
            "dtype": Field(Text(list(MU_DTYPES)), "float32"),
        },
        check=check_mu_init,
    ),
    "mu.sft": Record(
        {
            "examples": ListOf(Record({"prompt": TOKENS, "criteria": ListOf(Integer(0)), "scores": Numbers(min_length=1)}, check=check_teacher_scores), min_length=1),
            "learning_rate": POSITIVE,
            "head_learning_rate": Field(POSITIVE, None),
        }
    ),
    # Language-model pretraining of μ's backbone on whole texts (ours): token ids, ≥ 2 each.
    "mu.pretrain": Record({"texts": ListOf(TOKENS, min_length=1), "learning_rate": POSITIVE}),
    "mu.step": Record(
        {
            "trajectories": ListOf(Record({"steps": ListOf(MU_STEP, min_length=1), "reward": Number()}), min_length=1),
            "learning_rate": POSITIVE,
            "head_learning_rate": Field(POSITIVE, None),
            "beta": Field(Number(minimum=0), 0.05),
            # ARCO's decomposition loss, or ours: every step's score regressed on its trajectory's R.
            "objective": Field(Text(("decomposition", "value")), "decomposition"),
        }
    ),
    "mu.scores": Record({"steps": ListOf(MU_STEP, min_length=1)}),
    "mu.logits": Record({"ids": ListOf(TOKENS, min_length=1)}),
    "mu.tokenize": TEXTS,
    "mu.detokenize": IDS,
    "mu.chat": CONVERSATIONS,
    "mu.embed": Record({"ids": TOKENS, "rows": MATRIX}),
    "mu.set_reference": Record({}),
    "mu.fingerprint": Record({}),
    "mu.save": Record({"dir": Text(min_length=1)}),
    # device: where to put it instead of the checkpoint's own (e.g. "cpu" for a μ trained on a GPU).
    "mu.load": Record({"dir": Text(min_length=1), "device": Field(Text(min_length=1), None)}),
    "mu.export": Record(
        {
            "dir": Text(min_length=1),
            "opset": Field(Integer(7, max_onnx_opset()), 17),
            # The tokenizer's files travel with the model; their names are checked by mu.check_tokenizer.
            "tokenizer": Record({"kind": Text(min_length=1), "files": MapOf(Text(), min_length=1)}),
            "max_criteria_tokens": Field(Integer(1), 128),
            # The step prompt μ reads (@rubric/arco-heads' StepPromptSettingsSchema), kept in the
            # manifest as given so every backend writes steps as μ was trained to read them.
            "prompt": Field(MU_PROMPT, None),
        }
    ),
    "mu.generate": Record(
        {
            "prompts": ListOf(TOKENS, min_length=1),
            "max_new_tokens": Field(Integer(1), 128),  # ARCO's mu_max_new_tokens
            "eos_id": Integer(0),
            "temperature": Field(Number(minimum=0), 0.0),
            "rng": Field(ListOf(RNG_STATE), None),
        },
        check=check_generate,
    ),
}


PARAMS: dict[str, Record] = {
    "health": Record({}),
    "shutdown": Record({}),
    "gspo.loss": Record(
        {
            "objective": Field(Text(OBJECTIVES), "gspo"),
            "logp_new": MATRIX,
            "logp_old": MATRIX,
            "mask": Field(ListOf(MaskRow(min_length=1), min_length=1), None),
            "advantages": Numbers(min_length=1),
            "eps_low": Field(Number(minimum=0), None),
            "eps_high": Field(Number(minimum=0), None),
            "beta": Field(Number(minimum=0), 0.0),
            "logp_ref": Field(MATRIX, None),
            "max_tokens": Field(POSITIVE, None),
            "gradient": Field(Boolean(), True),
        },
        check=check_loss_params,
    ),
    "policy.init": Record(
        {
            "model": MODEL,
            "seed": Field(Integer(0), 0),
            "dtype": Field(Text(list(DTYPES)), "float32"),
            "device": Field(Text(min_length=1), "auto"),
            "learning_rate": Field(POSITIVE, 1e-3),
            "max_new_tokens": Field(Integer(1), 32),
            "eos_token_id": Field(Integer(0), None),
        }
    ),
    "policy.sample": Record(
        {
            "prompt": TOKENS,
            "n": Integer(1, 4096),
            "seed": Integer(0),
            "temperature": Field(POSITIVE, 1.0),
            "max_new_tokens": Field(Integer(1), None),
            "eos_token_id": Field(Integer(0), None),
        }
    ),
    "policy.logprobs": Record({"prompt": TOKENS, "sequences": ListOf(TOKENS, min_length=1)}),
    "policy.tokenize": TEXTS,
    "policy.detokenize": IDS,
    "policy.chat": CONVERSATIONS,
    "policy.step": Record(
        {
            "objective": Field(Text(OBJECTIVES), "gspo"),
            "eps_low": Field(Number(minimum=0), None),
            "eps_high": Field(Number(minimum=0), None),
            "learning_rate": POSITIVE,
            "kl_coef": Field(Number(minimum=0), 0.0),
            "max_tokens": Field(POSITIVE, None),
            "max_grad_norm": Field(POSITIVE, None),
            "groups": ListOf(
                Record(
                    {
                        "prompt": TOKENS,
                        "sequences": ListOf(Record({"tokens": TOKENS, "logp_old": ROW, "advantage": Number()}, check=check_rollout), min_length=1),
                    }
                ),
                min_length=1,
            ),
        }
    ),
    "policy.sft_step": Record(
        {
            "examples": ListOf(Record({"prompt": TOKENS, "tokens": TOKENS}), min_length=1),
            "learning_rate": POSITIVE,
            "max_grad_norm": Field(POSITIVE, None),
        }
    ),
    "policy.set_reference": Record({}),
    "policy.reset_optimizer": Record({}),
    "policy.fingerprint": Record({}),
    "checkpoint.save": Record({"dir": Text(min_length=1)}),
    "checkpoint.load": Record({"dir": Text(min_length=1)}),
    "export.onnx": Record({"path": Text(min_length=1), "opset": Field(Integer(7, max_onnx_opset()), 17), "probe": Field(ListOf(TOKENS, min_length=1), None)}),
    **MU_PARAMS,
}
