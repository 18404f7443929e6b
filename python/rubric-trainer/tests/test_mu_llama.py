"""μ on a small pretrained llama read from GGUF (``model.kind 'llama'``): the reader, the network
against what the real stories260K learnt, and the μ methods over the wire. (That the network's
logits are llama.cpp's is checked from TypeScript, where node-llama-cpp runs the same file:
packages/rlxar's sidecar-mu llama test compares greedy generations through the ONNX graphs.)"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
import torch

from rubric_trainer.gguf import GgufFault, read_gguf
from rubric_trainer.mu import Mu
from rubric_trainer.mu_llama import LlamaMuNetwork, gguf_vocabulary, llama_architecture
from rubric_trainer.mu_steps import Step
from rubric_trainer.protocol import PARAMS
from rubric_trainer.schema import ParamError

SHARED = Path(os.environ.get("RUBRIC_SHARED_DIR") or Path(__file__).resolve().parents[4] / "shared")
STORIES = SHARED / "models" / "stories260K.gguf"


@pytest.fixture(scope="module")
def stories():
    if not STORIES.is_file():
        pytest.fail(f"{STORIES}: the shared stories260K model is missing (set RUBRIC_SHARED_DIR)")
    return read_gguf(str(STORIES))


def network_of(gguf, k: int = 3) -> LlamaMuNetwork:
    network = LlamaMuNetwork(llama_architecture(gguf, None), k)
    network.load_gguf(gguf)
    return network.eval()


def greedy(network: LlamaMuNetwork, ids: list[int], steps: int) -> list[int]:
    ids = list(ids)
    with torch.no_grad():
        for _ in range(steps):
            t = torch.tensor([ids])
            logits, _ = network.next_logits(t, torch.ones_like(t))
            ids.append(int(logits[0].argmax()))
    return ids


def test_reads_the_architecture_and_the_vocabulary_of_stories260k(stories) -> None:
    assert stories.version == 3
    assert llama_architecture(stories, None) == {
        "vocab_size": 512,
        "d_model": 64,
        "n_heads": 8,
        "n_kv_heads": 4,
        "n_layers": 5,
        "d_ff": 172,
        "max_seq_len": 2048,
        "rope_base": 10000.0,
        "norm_eps": pytest.approx(1e-5),
    }
    assert llama_architecture(stories, 300)["max_seq_len"] == 300
    vocabulary = gguf_vocabulary(stories)
    assert vocabulary["tokens"][:3] == ["<unk>", "<s>", "</s>"] and vocabulary["tokens"][3] == "<0x00>"
    assert (vocabulary["bos"], vocabulary["eos"], vocabulary["unknown"], vocabulary["add_space_prefix"]) == (1, 2, 0, True)
    assert len(vocabulary["scores"]) == len(vocabulary["types"]) == 512
    # The embedding matrix is [vocabulary, width] in torch's order (GGUF stores it width first).
    assert tuple(stories.tensor("token_embd.weight").shape) == (512, 64)
    assert tuple(stories.tensor("blk.0.attn_k.weight").shape) == (32, 64)  # 4 key/value heads of 8


def test_the_loaded_network_writes_what_stories260k_learnt(stories) -> None:
    """A wrong rotary layout, head grouping or norm turns the greedy story into noise; random
    weights write no words at all."""
    tokens = gguf_vocabulary(stories)["tokens"]
    text = "".join(tokens[i] for i in greedy(network_of(stories), [1], 24)[1:]).replace("▁", " ")
    assert text.startswith(" Once upon a time, there was a little")
    untrained = LlamaMuNetwork(llama_architecture(stories, None), 3).eval()
    noise = "".join(tokens[i] for i in greedy(untrained, [1], 24)[1:]).replace("▁", " ")
    assert "Once upon" not in noise


def test_the_cache_and_padding_give_the_full_forward(stories) -> None:
    network = network_of(stories)
    ids = greedy(network, [1], 12)
    with torch.no_grad():
        full, _ = network.next_logits(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long))
        prefix, cache = network.next_logits(torch.tensor([ids[:-1]]), torch.ones(1, len(ids) - 1, dtype=torch.long))
        step, _ = network.next_logits(torch.tensor([ids[-1:]]), torch.ones(1, len(ids), dtype=torch.long), cache)
        # Left padding (batched generation): the same row behind three pad tokens.
        padded = torch.tensor([[0, 0, 0, *ids]])
        left, _ = network.next_logits(padded, torch.tensor([[0, 0, 0, *[1] * len(ids)]]))
    assert torch.allclose(step, full, atol=1e-5)
    assert torch.allclose(left, full, atol=1e-5)
    assert not torch.allclose(prefix, full, atol=1e-3)  # the comparison can fail: another position differs


def write_gguf(path: Path, metadata: dict, tensors: dict[str, tuple[list[int], int, bytes]], version: int = 3) -> None:
    """A GGUF file of string/uint32/float32 metadata and raw tensors (dims fastest first, ggml type)."""

    def string(s: str) -> bytes:
        data = s.encode("utf-8")
        return struct.pack("<Q", len(data)) + data

    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, value in metadata.items():
        out += string(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + string(value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        elif isinstance(value, list):
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(string(v) for v in value)
        else:
            out += struct.pack("<If", 6, value)
    offset = 0
    blobs = []
    for name, (dims, kind, data) in tensors.items():
        out += string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", kind, offset)
        blobs.append(data + b"\0" * (-len(data) % 32))
        offset += len(blobs[-1])
    out += b"\0" * (-len(out) % 32)
    path.write_bytes(out + b"".join(blobs))


def test_faulty_files_are_named_with_what_is_wrong(tmp_path: Path, stories) -> None:
    missing = tmp_path / "absent.gguf"
    with pytest.raises(GgufFault, match="absent.gguf: no such file") as error:
        read_gguf(str(missing))
    assert error.value.data == {"path": "params.model.gguf", "file": str(missing)}
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(GgufFault, match="does not start with 'GGUF'"):
        read_gguf(str(tmp_path / "text.gguf"))
    whole = STORIES.read_bytes()
    (tmp_path / "cut.gguf").write_bytes(whole[:200])
    with pytest.raises(GgufFault, match="ends early"):
        read_gguf(str(tmp_path / "cut.gguf"))
    write_gguf(tmp_path / "v1.gguf", {}, {}, version=1)
    with pytest.raises(GgufFault, match="version 1"):
        read_gguf(str(tmp_path / "v1.gguf"))
    base = {"general.architecture": "llama", "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>"]}
    write_gguf(tmp_path / "gpt2.gguf", {**base, "general.architecture": "gpt2"}, {})
    with pytest.raises(GgufFault, match="a 'gpt2' model; μ reads llama"):
        llama_architecture(read_gguf(str(tmp_path / "gpt2.gguf")), None)
    write_gguf(tmp_path / "bpe.gguf", {**base, "tokenizer.ggml.model": "gpt2"}, {})
    with pytest.raises(GgufFault, match="'gpt2' tokenizer"):
        gguf_vocabulary(read_gguf(str(tmp_path / "bpe.gguf")))
    shape = {"llama.embedding_length": 8, "llama.attention.head_count": 2, "llama.block_count": 1, "llama.feed_forward_length": 4}
    write_gguf(tmp_path / "nocontext.gguf", {**base, **shape}, {})
    with pytest.raises(GgufFault, match="llama.context_length"):
        llama_architecture(read_gguf(str(tmp_path / "nocontext.gguf")), None)
    # A quantized tensor (ggml type 2, Q4_0) and a tensor of the wrong shape.
    write_gguf(tmp_path / "q4.gguf", {**base, **shape, "llama.context_length": 16}, {"token_embd.weight": ([8, 3], 2, b"\0" * 18)})
    quantized = read_gguf(str(tmp_path / "q4.gguf"))
    with pytest.raises(GgufFault, match="ggml type 2; μ reads F32 and F16"):
        quantized.tensor("token_embd.weight")
    write_gguf(tmp_path / "shape.gguf", {**base, **shape, "llama.context_length": 16}, {"token_embd.weight": ([8, 2], 0, b"\0" * 64)})
    wrong = read_gguf(str(tmp_path / "shape.gguf"))
    with pytest.raises(GgufFault, match=r"'token_embd.weight' is \[2, 8\], where the architecture its metadata states needs \[3, 8\]"):
        LlamaMuNetwork(llama_architecture(wrong, None), 1).load_gguf(wrong)
    # An F16 tensor reads as float32.
    halves = torch.tensor([[0.5, -2.0, 1.25]], dtype=torch.float16)
    write_gguf(tmp_path / "f16.gguf", base, {"h": ([3, 1], 1, halves.numpy().tobytes())})
    assert read_gguf(str(tmp_path / "f16.gguf")).tensor("h").tolist() == [[0.5, -2.0, 1.25]]


def llama_params(**overrides) -> dict:
    return PARAMS["mu.init"].parse({"model": {"kind": "llama", "gguf": str(STORIES), "max_seq_len": 256}, "seed": 3, "k": 2, **overrides}, "params")


def test_the_schema_refuses_lora_and_half_precision_for_a_llama_mu() -> None:
    with pytest.raises(ParamError, match="params.lora: a llama μ trains whole"):
        PARAMS["mu.init"].parse({"model": {"kind": "llama", "gguf": "x.gguf"}, "lora": {}}, "params")
    with pytest.raises(ParamError, match="params.dtype: a llama μ is float32 only"):
        PARAMS["mu.init"].parse({"model": {"kind": "llama", "gguf": "x.gguf"}, "dtype": "bfloat16"}, "params")


def test_a_llama_mu_trains_saves_loads_and_exports(tmp_path: Path, stories) -> None:
    params = llama_params()
    mu = Mu({**params, "model": {**params["model"], **llama_architecture(stories, 256)}}, None, stories)
    assert mu.max_seq_len == 256 and mu.vocab_size == 512
    before = mu.fingerprint()
    step = Step([1, 300, 301, 302], [303, 304, 2])
    first = mu.sft([step], [[0.5, -0.5]], learning_rate=1e-3, head_learning_rate=1e-3)
    second = mu.sft([step], [[0.5, -0.5]], learning_rate=1e-3, head_learning_rate=1e-3)
    assert second["loss"] < first["loss"] and mu.fingerprint() != before
    mu.save(str(tmp_path / "ckpt"))
    loaded = Mu.load(str(tmp_path / "ckpt"))  # the architecture from the checkpoint, not the file
    assert loaded.fingerprint() == mu.fingerprint()
    from rubric_trainer.mu_export import export_version

    tokenizer = {"kind": "sentencepiece", "files": {"tokenizer.json": json.dumps({"kind": "sentencepiece"})}}
    manifest = export_version(mu, str(tmp_path / "export"), 17, tokenizer, max_criteria_tokens=64)["manifest"]
    assert manifest["model"] == {"kind": "llama", "vocabularySize": 512, "layers": 5, "heads": 8, "headWidth": 8, "parameters": sum(p.numel() for p in mu.network.parameters())}
    assert manifest["maxLengths"] == {"sequence": 256, "criteria": 64}
    assert sorted(manifest["files"]) == ["decode.onnx", "mu.pt", "prefill.onnx", "score.onnx", "tokenizer.json"]


def test_mu_init_over_the_wire_returns_the_vocabulary(sidecar, tmp_path: Path) -> None:
    summary = sidecar.call("mu.init", {"model": {"kind": "llama", "gguf": str(STORIES)}, "k": 2})
    assert (summary["vocab_size"], summary["max_seq_len"], summary["k"]) == (512, 2048, 2)
    assert summary["vocabulary"]["tokens"][259] == "▁t" and len(summary["vocabulary"]["tokens"]) == 512
    # The backbone is stories260K's: after <s>, μ's LM head starts its story.
    (row,) = sidecar.call("mu.logits", {"ids": [[1]]})["logits"]
    first = max(range(512), key=lambda i: row[0][i])
    assert summary["vocabulary"]["tokens"][first] == "▁Once"
    absent = sidecar.error("mu.init", {"model": {"kind": "llama", "gguf": str(tmp_path / "none.gguf")}})
    assert absent["code"] == "invalid_params" and absent["data"]["path"] == "params.model.gguf"
    assert "none.gguf: no such file" in absent["message"]
