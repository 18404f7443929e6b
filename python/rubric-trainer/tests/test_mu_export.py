"""μ's export: the version directory @rubric/arco-heads reads (its ``ModelManifestSchema``), written
atomically with the tokenizer's files; the refusals of tokenizer file names that would leave the
directory or replace the export's own files; and prefill/decode graphs with last-position logits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from rubric_trainer import mu_export
from rubric_trainer.faults import CheckpointFault, InvalidParams
from rubric_trainer.mu import Mu
from rubric_trainer.mu_export import MANIFEST_FORMAT, export_version
from rubric_trainer.mu_model import DecodeGraph, PrefillGraph
from rubric_trainer.mu_steps import Step
from rubric_trainer.protocol import PARAMS

MODEL = {"kind": "tiny", "vocab_size": 12, "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 24}
# Non-ASCII on purpose: the file must hold these characters' UTF-8 bytes, hashed as written.
TOKENIZER = {"kind": "byte-bpe", "files": {"tokenizer.json": '{"kind": "byte-bpe", "note": "é → ∑"}\n', "merges.txt": "a b\r\nab c\n"}}
MANIFEST_KEYS = {"format", "formatVersion", "exportVersion", "k", "pooling", "opset", "tokenizer", "maxLengths", "model", "graphs", "checkpoint", "training", "files"}


def make_mu(**overrides) -> Mu:
    return Mu(PARAMS["mu.init"].parse({"model": MODEL, "seed": 1, **overrides}, "params"))


def test_the_manifest_is_the_arco_heads_contract(tmp_path: Path) -> None:
    mu = make_mu(pooling="criteria", k=2)
    mu.sft([Step([1, 2], [3, 4])], [[0.5, -0.5]], learning_rate=1e-2, head_learning_rate=1e-2)
    result = export_version(mu, str(tmp_path), 17, TOKENIZER, max_criteria_tokens=10)
    version = tmp_path / "v0001"
    manifest = json.loads((version / "manifest.json").read_text(encoding="utf-8"))
    assert result == {"dir": str(version), "version": 1, "manifest": manifest}
    assert set(manifest) == MANIFEST_KEYS  # arco-heads' schema is strict: no other key may appear
    assert manifest["format"] == MANIFEST_FORMAT == "rubric-mu" and manifest["formatVersion"] == 1 and manifest["exportVersion"] == 1
    assert (manifest["k"], manifest["pooling"], manifest["opset"]) == (2, "criteria", 17)
    assert manifest["tokenizer"] == {"kind": "byte-bpe", "files": ["merges.txt", "tokenizer.json"]}
    assert manifest["maxLengths"] == {"sequence": 24, "criteria": 10}
    parameters = sum(p.numel() for p in mu.network.parameters())
    assert manifest["model"] == {"kind": "tiny", "vocabularySize": 12, "layers": 2, "heads": 2, "headWidth": 8, "parameters": parameters}
    assert manifest["training"] == {"fingerprint": mu.fingerprint(), "steps": 1}
    # The torch checkpoint of the same weights: loading it gives the manifest's fingerprint.
    assert manifest["checkpoint"] == "mu.pt"
    assert Mu.load(str(version)).fingerprint() == manifest["training"]["fingerprint"]
    caches = ["present_key_0", "present_value_0", "present_key_1", "present_value_1"]
    assert manifest["graphs"] == {
        "score": {"file": "score.onnx", "inputs": ["input_ids", "attention_mask", "pool_mask"], "outputs": ["scores"]},
        "prefill": {"file": "prefill.onnx", "inputs": ["input_ids", "attention_mask"], "outputs": ["logits", *caches]},
        "decode": {"file": "decode.onnx", "inputs": ["input_ids", "attention_mask", *(c.replace("present", "past") for c in caches)], "outputs": ["logits", *caches]},
    }
    # Every file but the manifest, tokenizer files included, with its size and hash.
    on_disk = sorted(p.name for p in version.iterdir())
    assert on_disk == ["decode.onnx", "manifest.json", "merges.txt", "mu.pt", "prefill.onnx", "score.onnx", "tokenizer.json"]
    assert sorted(manifest["files"]) == [n for n in on_disk if n != "manifest.json"]
    for name, entry in manifest["files"].items():
        data = (version / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    for name, text in TOKENIZER["files"].items():
        assert (version / name).read_bytes() == text.encode("utf-8")  # byte for byte: no newline translation


def test_the_step_prompt_settings_travel_in_the_manifest(tmp_path: Path) -> None:
    """What μ was trained to read goes into the manifest as given, fields left out omitted; the
    wire refuses a style arco-heads does not know (its schema is strict, so would the reader)."""
    mu = make_mu()
    params = PARAMS["mu.export"].parse({"dir": str(tmp_path), "tokenizer": TOKENIZER, "max_criteria_tokens": 8, "prompt": {"style": "generic", "budgetLabel": "Tool calls left"}}, "params")
    result = export_version(mu, params["dir"], params["opset"], params["tokenizer"], params["max_criteria_tokens"], params["prompt"])
    assert result["manifest"]["prompt"] == {"style": "generic", "budgetLabel": "Tool calls left"}
    assert set(result["manifest"]) == MANIFEST_KEYS | {"prompt"}
    # No settings: no key (older readers see the manifest they know).
    assert "prompt" not in export_version(mu, str(tmp_path), 17, TOKENIZER, 8, None)["manifest"]
    with pytest.raises(ValueError, match=r"params.prompt.style: expected one of 'qa', 'generic'"):
        PARAMS["mu.export"].parse({"dir": "d", "tokenizer": TOKENIZER, "prompt": {"style": "chat"}}, "params")
    with pytest.raises(ValueError, match=r"params.prompt.budget_label: unknown field"):
        PARAMS["mu.export"].parse({"dir": "d", "tokenizer": TOKENIZER, "prompt": {"budget_label": "x"}}, "params")


def test_exports_are_new_complete_versions(tmp_path: Path) -> None:
    mu = make_mu()
    first = export_version(mu, str(tmp_path), 17, TOKENIZER, 8)
    second = export_version(mu, str(tmp_path), 17, TOKENIZER, 8)
    assert (first["version"], second["version"]) == (1, 2)
    assert (first["manifest"]["exportVersion"], second["manifest"]["exportVersion"]) == (1, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v0001", "v0002"]  # no staging directory left


def test_the_tokenizer_is_in_the_staging_directory_before_the_rename(tmp_path: Path, monkeypatch) -> None:
    mu = make_mu()
    write_graphs = mu_export.write_graphs
    seen: list[list[str]] = []

    def spy(mu: Mu, directory: Path, opset: int) -> dict:
        seen.append(sorted(p.name for p in directory.iterdir()))
        assert not (tmp_path / "v0001").exists()
        return write_graphs(mu, directory, opset)

    monkeypatch.setattr(mu_export, "write_graphs", spy)
    export_version(mu, str(tmp_path), 17, TOKENIZER, 8)
    assert seen == [["merges.txt", "tokenizer.json"]]


@pytest.mark.parametrize(
    "name",
    ["../escape.json", "sub/tokenizer.json", ".hidden", "-flag", "a b", "manifest.json", "score.onnx", "mu.pt", "Decode.ONNX", "MANIFEST.json", "x" * 256, ""],
)
def test_refuses_tokenizer_file_names_that_are_not_simple_or_are_taken(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        export_version(make_mu(), str(tmp_path / "models"), 17, {"kind": "byte-bpe", "files": {"ok.json": "{}", name: "{}"}}, 8)
    assert caught.value.data["path"] == f"tokenizer.files.{name}"
    assert not (tmp_path / "models").exists()  # refused before anything was written


def test_refuses_names_that_differ_only_in_case_and_text_that_is_not_utf8(tmp_path: Path) -> None:
    mu = make_mu()
    with pytest.raises(InvalidParams, match="differ only in case") as caught:
        export_version(mu, str(tmp_path), 17, {"kind": "k", "files": {"vocab.txt": "", "Vocab.txt": ""}}, 8)
    assert caught.value.data["path"] == "tokenizer.files.Vocab.txt"
    # JSON can carry a lone surrogate (\ud800), which UTF-8 cannot hold.
    with pytest.raises(InvalidParams, match="not UTF-8") as caught:
        export_version(mu, str(tmp_path), 17, {"kind": "k", "files": {"vocab.txt": "ab\ud800"}}, 8)
    assert caught.value.data["path"] == "tokenizer.files.vocab.txt"


@pytest.mark.parametrize("max_criteria_tokens", [24, 25])
def test_refuses_max_criteria_tokens_not_below_max_seq_len(tmp_path: Path, max_criteria_tokens: int) -> None:
    with pytest.raises(InvalidParams, match=r"below the model's max_seq_len \(24\)") as caught:
        export_version(make_mu(), str(tmp_path), 17, TOKENIZER, max_criteria_tokens)
    assert caught.value.data["path"] == "max_criteria_tokens"
    export_version(make_mu(), str(tmp_path), 17, TOKENIZER, 23)  # the largest that leaves a prompt one position


def test_prefill_and_decode_give_last_position_logits_only() -> None:
    network = make_mu().network
    ids = torch.tensor([[0, 0, 3, 4, 5], [1, 2, 3, 4, 5]])
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    with torch.no_grad():
        hidden, _ = network.hidden(ids, mask)
        full = network.lm_head(hidden)
        logits, *cache = PrefillGraph(network)(ids[:, :4], mask[:, :4])
        assert logits.shape == (2, 12)
        assert torch.allclose(logits, full[:, 3], atol=1e-6)
        logits, *grown = DecodeGraph(network)(ids[:, 4:], mask, *cache)
        assert logits.shape == (2, 12) and grown[0].shape[2] == 5
        assert torch.allclose(logits, full[:, 4], atol=1e-5)


def test_the_exported_graphs_declare_logits_batch_by_vocabulary(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    version = Path(export_version(make_mu(), str(tmp_path), 17, TOKENIZER, 8)["dir"])
    for name in ("prefill.onnx", "decode.onnx"):
        outputs = {o.name: o for o in onnx.load(str(version / name)).graph.output}
        dims = [d.dim_param or d.dim_value for d in outputs["logits"].type.tensor_type.shape.dim]
        assert dims == ["batch", 12], name


def test_a_failed_export_leaves_no_version_behind(tmp_path: Path, monkeypatch) -> None:
    mu = make_mu()
    export_version(mu, str(tmp_path), 17, TOKENIZER, 8)

    def fail(mu: Mu, directory: Path, opset: int) -> dict:
        (directory / "score.onnx").write_bytes(b"half a graph")
        raise OSError("disk full")

    monkeypatch.setattr(mu_export, "write_graphs", fail)
    with pytest.raises(OSError, match="disk full"):
        export_version(mu, str(tmp_path), 17, TOKENIZER, 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v0001"]


def test_an_export_racing_another_never_replaces_its_version(tmp_path: Path, monkeypatch) -> None:
    mu = make_mu()
    write_graphs = mu_export.write_graphs

    def race(mu: Mu, directory: Path, opset: int) -> dict:
        (tmp_path / "v0001").mkdir()  # another writer publishes v0001 while this one writes
        (tmp_path / "v0001" / "manifest.json").write_text("theirs")
        return write_graphs(mu, directory, opset)

    monkeypatch.setattr(mu_export, "write_graphs", race)
    with pytest.raises(CheckpointFault, match="another export wrote this version"):
        export_version(mu, str(tmp_path), 17, TOKENIZER, 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v0001"]
    assert (tmp_path / "v0001" / "manifest.json").read_text() == "theirs"


def test_mu_export_over_the_wire(sidecar, tmp_path: Path) -> None:
    sidecar.call("mu.init", {"model": MODEL})
    exported = sidecar.call("mu.export", {"dir": str(tmp_path), "tokenizer": TOKENIZER, "max_criteria_tokens": 16})
    assert exported["version"] == 1 and exported["manifest"]["maxLengths"] == {"sequence": 24, "criteria": 16}
    assert json.loads((tmp_path / "v0001" / "manifest.json").read_text(encoding="utf-8")) == exported["manifest"]
    missing = sidecar.error("mu.export", {"dir": str(tmp_path), "max_criteria_tokens": 16})
    assert missing["code"] == "invalid_params" and missing["data"]["path"] == "params.tokenizer"
    empty = sidecar.error("mu.export", {"dir": str(tmp_path), "tokenizer": {"kind": "byte-bpe", "files": {}}, "max_criteria_tokens": 16})
    assert empty["data"]["path"] == "params.tokenizer.files"
    no_kind = sidecar.error("mu.export", {"dir": str(tmp_path), "tokenizer": {"kind": "", "files": {"a": ""}}, "max_criteria_tokens": 16})
    assert no_kind["data"]["path"] == "params.tokenizer.kind"
    not_text = sidecar.error("mu.export", {"dir": str(tmp_path), "tokenizer": {"kind": "k", "files": {"a": 3}}, "max_criteria_tokens": 16})
    assert not_text["data"]["path"] == "params.tokenizer.files.a"
    escape = sidecar.error("mu.export", {"dir": str(tmp_path), "tokenizer": {"kind": "k", "files": {"../a": ""}}, "max_criteria_tokens": 16})
    assert escape["code"] == "invalid_params" and escape["data"]["path"] == "params.tokenizer.files.../a"
    # The default, 128 (ARCO's), does not fit this 24-position model.
    too_long = sidecar.error("mu.export", {"dir": str(tmp_path), "tokenizer": TOKENIZER})
    assert too_long["code"] == "invalid_params" and too_long["data"]["path"] == "params.max_criteria_tokens"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v0001"]
