"""The sidecar process over its stdio: replies, error replies that leave it serving, cancellation, exit."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import TINY_MODEL, SidecarProcess, sidecar_environment
from rubric_trainer import server
from rubric_trainer.__main__ import main
from rubric_trainer.distributed import DistContext
from rubric_trainer.protocol import Request
from rubric_trainer.server import Session
from test_objectives import FIXTURE, OBJECTIVE_OF, assert_close


def test_announces_itself_and_reports_health(sidecar: SidecarProcess) -> None:
    assert sidecar.ready["params"]["world_size"] == 1
    assert sidecar.ready["params"]["pid"] == sidecar.process.pid
    health = sidecar.call("health")
    assert health["ok"] is True and health["policy"] is None and health["world_size"] == 1
    # serve --threads 1: torch's sums, and so trained weights, depend on the thread count.
    assert health["threads"] == 1


def test_gspo_loss_over_the_wire_matches_every_shared_vector(sidecar: SidecarProcess) -> None:
    for case in FIXTURE["cases"]:
        if case["fn"] not in OBJECTIVE_OF:
            continue
        given = case["input"]
        params = {"objective": OBJECTIVE_OF[case["fn"]]}
        for camel, snake in [("logpNew", "logp_new"), ("logpOld", "logp_old"), ("mask", "mask"), ("advantages", "advantages"), ("epsLow", "eps_low"), ("epsHigh", "eps_high"), ("beta", "beta"), ("logpRef", "logp_ref"), ("maxTokens", "max_tokens")]:
            if camel in given:
                params[snake] = given[camel]
        result = sidecar.call("gspo.loss", params)
        expected = case["expected"]
        assert_close(result["loss"], expected["loss"], f"{case['name']}: loss")
        assert_close(result["ratios"], expected["ratios"], f"{case['name']}: ratios")
        assert_close(result["clipped_fraction"], expected["clippedFraction"], f"{case['name']}: clippedFraction")
        assert_close(result["grad_logp_new"], expected["gradLogpNew"], f"{case['name']}: gradLogpNew")
        assert ("kl" in result) == ("kl" in expected), case["name"]


def test_every_failure_is_an_error_reply_and_the_sidecar_keeps_serving(sidecar: SidecarProcess) -> None:
    assert sidecar.error("policy.sample", {"prompt": [0], "n": 1, "seed": 0})["code"] == "no_policy"
    initialised = sidecar.call("policy.init", {"model": TINY_MODEL, "seed": 3})

    unknown = sidecar.error("policy.fly")
    assert unknown["code"] == "unknown_method" and "policy.step" in unknown["message"]

    sidecar.send("this is not json")
    assert sidecar.reply(None)["error"]["code"] == "parse_error"
    sidecar.send(json.dumps({"id": 41, "method": "health", "params": [1, 2]}))
    assert sidecar.reply(41)["error"] == {"code": "invalid_request", "message": "params: expected an object, got [1, 2]", "data": {"id": 41}}

    bad_model = sidecar.error("policy.init", {"model": {**TINY_MODEL, "vocab_size": "twelve"}})
    assert bad_model == {"code": "invalid_params", "message": "params.model.vocab_size: expected an integer, got 'twelve'", "data": {"path": "params.model.vocab_size"}}
    typo = sidecar.error("policy.sample", {"prompt": [0], "n": 1, "seed": 0, "temprature": 0.5})
    assert typo["message"].startswith("params.temprature: unknown field")
    ragged = sidecar.error(
        "policy.step",
        {"learning_rate": 0.1, "groups": [{"prompt": [0], "sequences": [{"tokens": [1, 2], "logp_old": [-1.0, -1.0], "advantage": 1}, {"tokens": [3, 4, 5], "logp_old": [-1.0, -1.0], "advantage": -1}]}]},
    )
    assert ragged["message"] == "params.groups[0].sequences[1].logp_old: expected 3 log-probs (one per token), got 2"
    not_a_number = sidecar.error("gspo.loss", {"logp_new": [[0.1, "x"]], "logp_old": [[0.1, 0.2]], "advantages": [1]})
    assert not_a_number["message"] == "params.logp_new[0][1]: expected a finite number, got 'x'"
    # Python's json module reads the NaN literal (JSON has none); the schema refuses it.
    sidecar.send('{"id": 42, "method": "gspo.loss", "params": {"logp_new": [[NaN]], "logp_old": [[0.0]], "advantages": [1]}}')
    assert sidecar.reply(42)["error"]["message"] == "params.logp_new[0][0]: expected a finite number, got NaN"
    bad_mask = sidecar.error("gspo.loss", {"logp_new": [[0.1]], "logp_old": [[0.1]], "mask": [[2]], "advantages": [1]})
    assert bad_mask["message"] == "params.mask[0][0]: expected 0, 1, true or false, got 2"
    out_of_vocabulary = sidecar.error("policy.logprobs", {"prompt": [0], "sequences": [[1, 12]]})
    assert out_of_vocabulary["message"] == "params.sequences[0][1]: expected a token id in [0, 11], got 12"

    # exp(800) overflows: 0·inf is NaN. Real NaN, not a flag.
    nan = sidecar.error("gspo.loss", {"logp_new": [[800.0]], "logp_old": [[0.0]], "advantages": [0.0]})
    assert nan["code"] == "non_finite" and "nan" in nan["message"]

    # 10^7 × 10^6 float32 embeddings (40 TB) cannot be allocated: a real allocation failure.
    oom = sidecar.error("policy.init", {"model": {"kind": "tiny", "vocab_size": 10_000_000, "d_model": 1_000_000, "n_heads": 1, "n_layers": 0}})
    assert oom["code"] == "out_of_memory" and "allocate" in oom["message"]

    health = sidecar.call("health")
    assert health["policy"] == initialised  # the failed init left the policy as it was
    assert sidecar.call("policy.sample", {"prompt": [0], "n": 2, "seed": 1, "max_new_tokens": 3})["sequences"][0]["tokens"]


def test_a_step_whose_loss_is_not_finite_changes_nothing(sidecar: SidecarProcess) -> None:
    sidecar.call("policy.init", {"model": TINY_MODEL, "seed": 3})
    before = sidecar.call("policy.fingerprint")
    # logp_old = −1000 makes the sequence ratio e^(~1000) = inf; with A < 0 the loss is +inf.
    failed = sidecar.error(
        "policy.step",
        {"objective": "gspo", "learning_rate": 0.1, "groups": [{"prompt": [0], "sequences": [{"tokens": [3], "logp_old": [-1000.0], "advantage": -1.0}, {"tokens": [4], "logp_old": [-1.0], "advantage": 1.0}]}]},
    )
    assert failed["code"] == "non_finite"
    assert sidecar.call("policy.fingerprint") == before


def test_cancelled_requests_get_a_cancelled_reply_and_the_sidecar_goes_on(sidecar: SidecarProcess) -> None:
    # A sample long enough (seconds) that the cancels arrive while it is queued or running.
    sidecar.call("policy.init", {"model": {"kind": "tiny", "vocab_size": 64, "d_model": 128, "n_heads": 4, "n_layers": 4, "max_seq_len": 1024}, "seed": 0})
    running = sidecar.submit("policy.sample", {"prompt": [0], "n": 32, "seed": 0, "max_new_tokens": 1000})
    queued = sidecar.submit("health")
    sidecar.send({"method": "$/cancel", "params": {"id": queued}})
    sidecar.send({"method": "$/cancel", "params": {"id": running}})
    # Whether the sample had started when its cancel arrived is up to the scheduler; either way it is cancelled.
    assert sidecar.reply(running)["error"]["code"] == "cancelled"
    assert sidecar.reply(queued)["error"] == {"code": "cancelled", "message": f"request {queued} was cancelled before it started", "data": {}}
    assert sidecar.call("health")["ok"] is True


def test_a_running_sample_stops_at_the_next_token_once_cancelled() -> None:
    session = Session(DistContext(0, 1, 0), None)
    session.handle(Request(1, "policy.init", {"model": TINY_MODEL}))
    session.cancelled.add(2)  # as the reader thread does when $/cancel arrives mid-request
    reply = session.handle(Request(2, "policy.sample", {"prompt": [0], "n": 1, "seed": 0, "max_new_tokens": 5}))
    assert reply == {"id": 2, "error": {"code": "cancelled", "message": "request 2 was cancelled while it ran", "data": {}}}


def test_training_steps_stream_metrics_notifications(sidecar: SidecarProcess) -> None:
    sidecar.call("policy.init", {"model": TINY_MODEL, "seed": 3})
    result = sidecar.call("policy.sft_step", {"examples": [{"prompt": [0], "tokens": [5, 6, 1]}], "learning_rate": 0.01})
    assert sidecar.notifications == [{"method": "metrics", "params": {"method": "policy.sft_step", **result}}]
    assert result["tokens"] == 3 and result["step"] == 1


def test_numbers_out_of_range_are_param_errors_at_their_path(sidecar: SidecarProcess) -> None:
    huge_seed = sidecar.error("policy.init", {"model": TINY_MODEL, "seed": 2**70})
    assert huge_seed == {"code": "invalid_params", "message": f"params.seed: expected an integer ≤ {2**63 - 1}, got {2**70}", "data": {"path": "params.seed"}}
    sidecar.send('{"id": 77, "method": "policy.init", "params": {"model": {"kind": "tiny", "vocab_size": 1e30}}}')
    assert sidecar.reply(77)["error"]["data"] == {"path": "params.model.vocab_size"}
    sidecar.send('{"id": 78, "method": "policy.init", "params": {"model": {"kind": "tiny", "vocab_size": 1' + "0" * 400 + '}}}')
    assert sidecar.reply(78)["error"]["code"] == "invalid_params"
    assert sidecar.call("health")["ok"] is True


def test_a_deeply_nested_line_is_a_parse_error_and_the_reader_reads_on(sidecar: SidecarProcess) -> None:
    sidecar.send("[" * 5000 + "]" * 5000)
    reply = sidecar.reply(None)["error"]
    assert reply["code"] == "parse_error" and "nested too deeply" in reply["message"]
    sidecar.send("{" * 100_000)
    assert sidecar.reply(None)["error"]["code"] == "parse_error"
    assert sidecar.call("health")["ok"] is True


def test_a_line_over_the_cap_is_skipped_whole_and_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRIC_SIDECAR_MAX_LINE_BYTES", "4096")
    process = SidecarProcess()
    try:
        process.send(json.dumps({"id": 7, "method": "health", "params": {"pad": "x" * 20_000}}))
        reply = process.reply(None)["error"]
        assert reply["code"] == "parse_error" and "over 4096 bytes" in reply["message"]
        # None of the long line's tail was read as a request of its own.
        assert process.call("health")["ok"] is True
        process.process.stdin.close()  # type: ignore[union-attr]
        assert process.process.wait(timeout=120) == 0
    finally:
        if process.process.poll() is None:
            process.process.kill()


def test_it_exits_when_its_input_closes() -> None:
    process = SidecarProcess()
    assert process.process.stdin is not None
    process.process.stdin.close()
    assert process.process.wait(timeout=120) == 0


def test_shutdown_answers_then_exits(sidecar: SidecarProcess) -> None:
    assert sidecar.call("shutdown") == {"ok": True}
    assert sidecar.process.wait(timeout=120) == 0


def test_the_cli_explains_itself_without_loading_torch() -> None:
    done = subprocess.run([sys.executable, "-m", "rubric_trainer", "--help"], capture_output=True, text=True, env=sidecar_environment(), check=True)
    assert "serve" in done.stdout


def test_serve_has_openmp_wait_passively_unless_the_user_said_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    # Spinning OpenMP threads made `rubric mu train` 4× slower beside one busy core (see __main__).
    seen: list[str | None] = []
    monkeypatch.setattr(server, "serve", lambda threads=None, log_level="INFO": seen.append(os.environ.get("OMP_WAIT_POLICY")))
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    main(["serve"])
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    main(["serve"])
    assert seen == ["PASSIVE", "ACTIVE"]


@pytest.mark.skipif(importlib.util.find_spec("transformers") is not None, reason="transformers is installed here: the model would be downloaded")
def test_a_transformers_model_without_transformers_is_unavailable() -> None:
    session = Session(DistContext(0, 1, 0), None)
    reply = session.handle(Request(1, "policy.init", {"model": {"kind": "transformers", "name": "gpt2"}}))
    assert reply["error"]["code"] == "unavailable"
    assert reply["error"]["message"].startswith("transformers is not installed in this interpreter")
