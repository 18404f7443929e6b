"""μ's model directory: ``mu.export`` writes the next version ``vNNNN`` of the format
@rubric/arco-heads owns (its ``ModelManifestSchema``), the three ONNX graphs onnxruntime-node
serves, μ's torch checkpoint, the tokenizer's files and ``manifest.json``, published whole by one
rename. The network the graphs trace is ``mu_model``'s; the weights are a trained ``Mu``'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import torch

from .faults import CheckpointFault, Fault, InvalidParams
from .model import onnx_export_arguments, optional_import
from .mu import MU_CHECKPOINT_FILE, MU_HEAD_FILE, Mu
from .mu_lora import ADAPTER_FILE
from .mu_model import DecodeGraph, PrefillGraph, ScoreGraph, cache_names

MANIFEST_FORMAT = "rubric-mu"
MANIFEST_FORMAT_VERSION = 1
"""The model contract of @rubric/arco-heads (``ModelManifestSchema`` in its src/model/manifest.ts)."""
MANIFEST_FILE = "manifest.json"
GRAPH_FILES = {"score": "score.onnx", "prefill": "prefill.onnx", "decode": "decode.onnx"}
TOKENIZER_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_FILE_NAME = 255
"""The longest file name the common file systems hold (ext4, APFS, NTFS)."""
DEFAULT_MAX_CRITERIA_TOKENS = 128
"""ARCO generates at most 128 criteria tokens."""


def check_tokenizer(tokenizer: dict, path: str) -> None:
    """The tokenizer files ``mu.export`` writes beside the graphs: simple names only, so that none
    leaves the version directory or replaces a file the export writes itself (the check ignores
    case, since on a case-insensitive file system ``Score.onnx`` is ``score.onnx``), and UTF-8 text."""
    reserved = {name.casefold(): name for name in (MANIFEST_FILE, MU_CHECKPOINT_FILE, MU_HEAD_FILE, ADAPTER_FILE, *GRAPH_FILES.values())}
    seen: dict[str, str] = {}
    for name, text in tokenizer["files"].items():
        at = f"{path}.files.{name}"
        if TOKENIZER_FILE_NAME.fullmatch(name) is None or len(name) > MAX_FILE_NAME:
            raise InvalidParams(f"{at}: a tokenizer file needs a simple name (^[A-Za-z0-9][A-Za-z0-9._-]*$, at most {MAX_FILE_NAME} characters, no directory), got {name!r}", {"path": at})
        folded = name.casefold()
        if folded in reserved:
            raise InvalidParams(f"{at}: {name!r} is the export's own {reserved[folded]}; name the tokenizer file otherwise", {"path": at})
        if folded in seen:
            raise InvalidParams(f"{at}: {name!r} and {seen[folded]!r} differ only in case; on a case-insensitive file system one would overwrite the other", {"path": at})
        seen[folded] = name
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InvalidParams(f"{at}: not UTF-8 text ({error.reason} at character {error.start})", {"path": at}) from error


def check_max_criteria_tokens(mu: Mu, max_criteria_tokens: int, path: str) -> None:
    if max_criteria_tokens >= mu.max_seq_len:
        raise InvalidParams(f"{path}: must be below the model's max_seq_len ({mu.max_seq_len}), leaving room for the prompt; got {max_criteria_tokens}", {"path": path})


EXPORTABLE = ("tiny", "llama")
"""The model kinds whose network ``mu_model``'s graph wrappers trace (a transformers μ is served by the sidecar)."""


def check_exportable(mu: Mu) -> None:
    if mu.init["model"]["kind"] not in EXPORTABLE:
        raise InvalidParams(f"mu.export writes the ONNX graphs of a μ with model.kind 'tiny' or 'llama' only, not {mu.init['model']['kind']!r}", {"path": "model.kind"})


def export_version(mu: Mu, directory: str, opset: int, tokenizer: dict, max_criteria_tokens: int = DEFAULT_MAX_CRITERIA_TOKENS, prompt: dict | None = None) -> dict:
    """A new version directory ``directory/vNNNN`` (one past the highest there) holding
    ``score.onnx``, ``prefill.onnx``, ``decode.onnx``, the torch checkpoint ``mu.pt``, the tokenizer's files (``tokenizer`` is
    ``{kind, files: {name: text}}``) and ``manifest.json``, @rubric/arco-heads' model contract.
    Everything is written into a hidden temporary directory beside it and renamed into place,
    so a reader watching ``directory`` sees a complete version, tokenizer included, or none.
    ``prompt`` (the step prompt's settings μ reads, fields left None omitted) goes into the
    manifest as ``prompt``. Under torchrun rank 0 writes it and chooses the version; every rank returns its result."""
    check_tokenizer(tokenizer, "tokenizer")
    check_max_criteria_tokens(mu, max_criteria_tokens, "max_criteria_tokens")
    check_exportable(mu)
    return mu.dist.on_main(lambda: write_version(mu, directory, opset, tokenizer, max_criteria_tokens, prompt))


def write_version(mu: Mu, directory: str, opset: int, tokenizer: dict, max_criteria_tokens: int, prompt: dict | None = None) -> dict:
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    version = 1 + max((int(p.name[1:]) for p in root.iterdir() if p.is_dir() and p.name[0] == "v" and p.name[1:].isdigit()), default=0)
    target = root / f"v{version:04d}"
    staging = root / f".v{version:04d}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        for name, text in sorted(tokenizer["files"].items()):
            (staging / name).write_bytes(text.encode("utf-8"))  # bytes: no newline translation
        graphs = write_graphs(mu, staging, opset)
        # The same weights for torch: the model directory is then whole for both backends
        # (`mu.load` on it serves what onnxruntime-node serves), and the manifest hashes it too.
        mu.write_checkpoint(str(staging))  # not mu.save: this runs on rank 0 alone
        files = {}
        for path in sorted(staging.iterdir()):
            data = path.read_bytes()
            files[path.name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        manifest = build_manifest(mu, version, opset, graphs, files, tokenizer["kind"], sorted(tokenizer["files"]), max_criteria_tokens, prompt)
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        # rename, not replace: a version directory that appeared meanwhile is never overwritten.
        try:
            os.rename(staging, target)
        except OSError as error:
            raise CheckpointFault(f"{target}: another export wrote this version meanwhile ({error.strerror}); nothing was replaced, export again", {"path": str(target)}) from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"dir": str(target), "version": version, "manifest": manifest}


def write_graphs(mu: Mu, directory: Path, opset: int) -> dict:
    """The three graphs of μ's plain network: with LoRA, of the base with the adapter merged in, so
    the graphs (and @rubric/arco-heads, which runs them) are the same with an adapter or without."""
    network = mu.export_network()
    layers = network.n_layers
    spec = mu.init["model"]
    head_width = spec["d_model"] // spec["n_heads"]
    length = min(4, mu.max_seq_len)
    ids = torch.zeros(1, length, dtype=torch.long)
    mask = torch.ones(1, length, dtype=torch.long)
    batch_seq = {0: "batch", 1: "sequence"}
    past_axes = {0: "batch", 2: "past_sequence"}
    present_axes = {0: "batch", 2: "total_sequence"}
    graphs = {
        "score": {"file": GRAPH_FILES["score"], "inputs": ["input_ids", "attention_mask", "pool_mask"], "outputs": ["scores"]},
        "prefill": {"file": GRAPH_FILES["prefill"], "inputs": ["input_ids", "attention_mask"], "outputs": ["logits", *cache_names("present", layers)]},
        "decode": {"file": GRAPH_FILES["decode"], "inputs": ["input_ids", "attention_mask", *cache_names("past", layers)], "outputs": ["logits", *cache_names("present", layers)]},
    }
    past = tuple(torch.zeros(1, spec["n_heads"], length, head_width) for _ in range(2 * layers))
    exports = [
        (ScoreGraph(network), (ids, mask, mask), {"input_ids": batch_seq, "attention_mask": batch_seq, "pool_mask": batch_seq, "scores": {0: "batch"}}),
        (PrefillGraph(network), (ids, mask), {"input_ids": batch_seq, "attention_mask": batch_seq, "logits": {0: "batch"}, **{n: present_axes for n in cache_names("present", layers)}}),
        (
            DecodeGraph(network),
            (ids[:, :1], torch.ones(1, length + 1, dtype=torch.long), *past),
            {"input_ids": batch_seq, "attention_mask": {0: "batch", 1: "total_sequence"}, "logits": {0: "batch"}, **{n: past_axes for n in cache_names("past", layers)}, **{n: present_axes for n in cache_names("present", layers)}},
        ),
    ]
    try:
        onnx = optional_import("onnx", "checking the exported graphs")
    except Fault:
        onnx = None
    for (module, example, axes), graph in zip(exports, graphs.values()):
        path = directory / graph["file"]
        with torch.no_grad():
            torch.onnx.export(module, example, str(path), opset_version=opset, input_names=graph["inputs"], output_names=graph["outputs"], dynamic_axes=axes, **onnx_export_arguments())
        if onnx is not None:
            onnx.checker.check_model(str(path))
    return graphs


def build_manifest(mu: Mu, version: int, opset: int, graphs: dict, files: dict, tokenizer_kind: str, tokenizer_files: list[str], max_criteria_tokens: int, prompt: dict | None = None) -> dict:
    """``manifest.json``, field for field @rubric/arco-heads' ``ModelManifestSchema`` (camelCase,
    strict: a key it does not know makes its ``readManifest`` refuse the directory)."""
    spec = mu.init["model"]
    settings = {key: value for key, value in (prompt or {}).items() if value is not None}
    return {
        "format": MANIFEST_FORMAT,
        "formatVersion": MANIFEST_FORMAT_VERSION,
        "exportVersion": version,
        "k": mu.k,
        "pooling": mu.pooling,
        "opset": opset,
        "tokenizer": {"kind": tokenizer_kind, "files": tokenizer_files},
        "maxLengths": {"sequence": mu.max_seq_len, "criteria": max_criteria_tokens},
        "model": {
            "kind": spec["kind"],
            "vocabularySize": mu.vocab_size,
            "layers": spec["n_layers"],
            "heads": spec["n_heads"],
            "headWidth": spec["d_model"] // spec["n_heads"],
            "parameters": sum(p.numel() for p in mu.export_network().parameters()),  # the graphs' (LoRA merged)
        },
        "graphs": graphs,
        "checkpoint": MU_CHECKPOINT_FILE,
        **({"prompt": settings} if settings else {}),
        "training": {"fingerprint": mu.fingerprint(), "steps": mu.steps},
        "files": files,
    }
