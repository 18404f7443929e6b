"""The policy in this process: log-probs, seeded sampling, GSPO / GRPO / Dr.GRPO and SFT steps,
the KL reference, checkpoints and ONNX export."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
import torch

from conftest import TINY_MODEL
from rubric_trainer.distributed import DistContext
from rubric_trainer.faults import CheckpointFault, NonFinite
from rubric_trainer.objectives import clipped_objective, pad_rows
from rubric_trainer.policy import Group, Policy, Rollout
from rubric_trainer.protocol import PARAMS

SINGLE = DistContext(0, 1, 0)
EOS = 1


def make_policy(seed: int = 7, **overrides) -> Policy:
    init = PARAMS["policy.init"].parse({"model": TINY_MODEL, "seed": seed, "eos_token_id": EOS, **overrides}, "params")
    return Policy(init, SINGLE)


def never_cancelled() -> None:
    return None


def test_logprobs_are_the_log_softmax_of_the_next_token_logits() -> None:
    policy = make_policy()
    prompt, tokens = [0, 4], [5, 6, 7]
    with torch.no_grad():
        logits = policy.model(torch.tensor([prompt + tokens[:-1]]))[0].double()
    expected = [torch.log_softmax(logits[len(prompt) - 1 + t], dim=0)[token].item() for t, token in enumerate(tokens)]
    assert policy.logprobs(prompt, [tokens])[0] == pytest.approx(expected, abs=1e-6)


def test_padding_in_a_batch_does_not_change_a_sequences_logprobs() -> None:
    policy = make_policy()
    short, long = [3], [3, 8, 9, 10, 2]
    together = policy.logprobs([0], [short, long])
    assert together[0] == pytest.approx(policy.logprobs([0], [short])[0], abs=1e-6)
    assert together[1] == pytest.approx(policy.logprobs([0], [long])[0], abs=1e-6)


def test_sampling_is_seeded_stops_at_eos_and_reports_the_policys_logprobs() -> None:
    policy = make_policy()
    draw = lambda seed: policy.sample([0], 16, seed=seed, temperature=1.0, max_new_tokens=10, eos_token_id=EOS, check_cancelled=never_cancelled)  # noqa: E731
    first, again, other = draw(11), draw(11), draw(12)
    assert first == again
    assert [s["tokens"] for s in first] != [s["tokens"] for s in other]
    for sequence in first:
        tokens = sequence["tokens"]
        assert 1 <= len(tokens) <= 10
        assert EOS not in tokens[:-1]  # nothing after the end token
        assert len(tokens) == 10 or tokens[-1] == EOS
        assert sequence["logprobs"] == pytest.approx(policy.logprobs([0], [tokens])[0], abs=1e-5)
    assert any(s["tokens"][-1] == EOS for s in first)


def test_the_key_value_cache_samples_what_a_full_forward_scores() -> None:
    """The small transformer samples through its cache (prefill, then one token at a time); each
    sampled token's log-prob must be the full forward's over prompt + the tokens before it."""
    policy = make_policy()
    prompt = [0, 5, 7, 9, 4, 6]
    sampled = policy.sample(prompt, 8, seed=5, temperature=1.0, max_new_tokens=12, eos_token_id=None, check_cancelled=never_cancelled)
    assert all(len(s["tokens"]) == 12 for s in sampled)
    for sequence in sampled:
        assert sequence["logprobs"] == pytest.approx(policy.logprobs(prompt, [sequence["tokens"]])[0], abs=1e-5)
    with torch.no_grad():
        ids = torch.tensor([prompt + sampled[0]["tokens"]])
        last, past = policy.model.decode(ids[:, :7], None)
        step, _ = policy.model.decode(ids[:, 7:9], past)
        assert torch.allclose(last, policy.model(ids[:, :7])[:, -1], atol=1e-5)
        assert torch.allclose(step, policy.model(ids[:, :9])[:, -1], atol=1e-5)


def test_a_low_temperature_picks_the_greedy_token_but_reports_temperature_one_logprobs() -> None:
    policy = make_policy()
    with torch.no_grad():
        top2 = policy.model(torch.tensor([[0]]))[0, -1].double().topk(2)
    greedy, gap = int(top2.indices[0]), float(top2.values[0] - top2.values[1])
    # At T = gap/40 the runner-up is e^-40 times less likely than the greedy token.
    cold = policy.sample([0], 32, seed=3, temperature=gap / 40, max_new_tokens=1, eos_token_id=None, check_cancelled=never_cancelled)
    assert {s["tokens"][0] for s in cold} == {greedy}
    assert cold[0]["logprobs"] == pytest.approx(policy.logprobs([0], [[greedy]])[0], abs=1e-6)
    assert cold[0]["logprobs"][0] < -0.1  # the policy's own probability, not the tempered one (≈ 1)


def rollouts(policy: Policy, seed: int) -> tuple[list[Group], list[list[int]]]:
    """One group of 4 sampled sequences with alternating advantages ±1."""
    sampled = policy.sample([0], 4, seed=seed, temperature=1.0, max_new_tokens=6, eos_token_id=EOS, check_cancelled=never_cancelled)
    group = Group([0], [Rollout(s["tokens"], s["logprobs"], 1.0 if k % 2 == 0 else -1.0) for k, s in enumerate(sampled)])
    return [group], [s["tokens"] for s in sampled]


def objective_of(objective: str, logp_new: list[list[float]], group: Group, **extra):
    """The objective of @rubric/core's definition on one group's current log-probs (clip 0.2)."""
    return clipped_objective(
        objective,
        pad_rows(logp_new),
        pad_rows([s.logp_old for s in group.sequences]),
        pad_rows([[1.0] * len(s.tokens) for s in group.sequences]).bool(),
        torch.tensor([s.advantage for s in group.sequences], dtype=torch.float64),
        eps_low=0.2,
        eps_high=0.2,
        **extra,
    )


@pytest.mark.parametrize("objective", ["gspo", "grpo", "dr-grpo"])
def test_a_step_reports_the_objective_and_moves_probability_toward_positive_advantages(objective: str) -> None:
    policy = make_policy()
    groups, sequences = rollouts(policy, seed=5)
    before = policy.logprobs([0], sequences)
    expected = objective_of(objective, before, groups[0])
    metrics = policy.step(groups, objective=objective, eps_low=0.2, eps_high=0.2, learning_rate=0.01, kl_coef=0.0, max_tokens=None, max_grad_norm=None)
    assert metrics["loss"] == pytest.approx(expected.loss.item(), abs=1e-6)
    assert metrics["clipped_fraction"] == expected.clipped_fraction
    assert metrics["tokens"] == sum(len(s) for s in sequences) and metrics["step"] == 1 and metrics["grad_norm"] > 0
    after = policy.logprobs([0], sequences)
    change = [sum(a) - sum(b) for a, b in zip(after, before)]
    assert change[0] > 0 and change[2] > 0 and change[1] < 0 and change[3] < 0


def test_the_kl_penalty_measures_the_distance_to_the_frozen_reference() -> None:
    policy = make_policy()
    reference = make_policy()  # the same seed: the parameters set_reference freezes
    policy.set_reference()
    groups, sequences = rollouts(policy, seed=5)
    options = dict(objective="gspo", eps_low=0.2, eps_high=0.2, learning_rate=0.02, kl_coef=0.5, max_tokens=None, max_grad_norm=None)
    first = policy.step(groups, **options)
    assert first["kl"] == pytest.approx(0.0, abs=1e-12)  # π = π_ref before the first update
    current = policy.logprobs([0], sequences)
    second = policy.step(groups, **options)
    expected = objective_of("gspo", current, groups[0], beta=0.5, logp_ref=pad_rows(reference.logprobs([0], sequences)))
    assert second["kl"] > 1e-6
    assert second["kl"] == pytest.approx(expected.kl.item(), abs=1e-6)
    assert second["loss"] == pytest.approx(expected.loss.item(), abs=1e-6)


def test_a_non_finite_loss_or_gradient_leaves_the_parameters_alone() -> None:
    policy = make_policy()
    before = policy.fingerprint()
    overflow = [Group([0], [Rollout([3], [-1000.0], -1.0), Rollout([4], [-1.0], 1.0)])]
    with pytest.raises(NonFinite, match="the loss is inf"):
        policy.step(overflow, objective="gspo", eps_low=None, eps_high=None, learning_rate=0.1, kl_coef=0.0, max_tokens=None, max_grad_norm=None)
    assert policy.fingerprint() == before and policy.steps == 0


def test_sft_steps_lower_the_nll_of_the_reference_completion() -> None:
    policy = make_policy()
    examples = [([0], [5, 6, 7, EOS]), ([0, 2], [8, 9, EOS])]
    nlls = [policy.sft_step(examples, learning_rate=0.01, max_grad_norm=1.0)["nll"] for _ in range(30)]
    assert nlls[-1] < nlls[0] * 0.5
    # The reported NLL is the mean −log p per token before the step.
    fresh = make_policy()
    logprobs = fresh.logprobs([0], [[5, 6, 7, EOS]])[0] + fresh.logprobs([0, 2], [[8, 9, EOS]])[0]
    assert nlls[0] == pytest.approx(-sum(logprobs) / 7, abs=1e-6)


def test_a_checkpoint_restores_parameters_optimiser_reference_and_step_count(tmp_path: Path) -> None:
    policy = make_policy()
    groups, sequences = rollouts(policy, seed=9)
    options = dict(objective="gspo", eps_low=0.2, eps_high=0.2, learning_rate=0.01, kl_coef=0.1, max_tokens=None, max_grad_norm=None)
    policy.set_reference()
    policy.step(groups, **options)
    policy.save(str(tmp_path / "ckpt"))

    restored = Policy.load(str(tmp_path / "ckpt"), SINGLE, None)
    assert restored.fingerprint() == policy.fingerprint() and restored.steps == 1
    assert restored.reference is not None
    # Adam's moments came back too: the next step is the same step.
    without_timing = lambda metrics: {k: v for k, v in metrics.items() if k != "compute_ms"}  # noqa: E731
    assert without_timing(restored.step(groups, **options)) == without_timing(policy.step(groups, **options))
    assert restored.fingerprint() == policy.fingerprint()
    assert restored.logprobs([0], sequences) == policy.logprobs([0], sequences)


def test_resetting_the_optimiser_forgets_adams_moments() -> None:
    policy = make_policy()
    groups, _ = rollouts(policy, seed=9)
    options = dict(objective="gspo", eps_low=0.2, eps_high=0.2, learning_rate=0.01, kl_coef=0.0, max_tokens=None, max_grad_norm=None)
    policy.step(groups, **options)
    policy.step(groups, **options)
    policy.reset_optimizer()
    assert not policy.optimizer.state
    # The next step is the first step of a fresh Adam from the same parameters.
    fresh = make_policy()
    fresh.model.load_state_dict(policy.model.state_dict())
    policy.step(groups, **options)
    fresh.step(groups, **options)
    assert policy.fingerprint() == fresh.fingerprint()


def test_loading_a_missing_or_corrupt_checkpoint_is_a_checkpoint_fault(tmp_path: Path) -> None:
    with pytest.raises(CheckpointFault, match="no checkpoint there"):
        Policy.load(str(tmp_path / "nowhere"), SINGLE, None)
    (tmp_path / "policy.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointFault, match="cannot read it"):
        Policy.load(str(tmp_path), SINGLE, None)


def test_onnx_export_at_opset_17_is_a_valid_model_with_dynamic_axes(tmp_path: Path) -> None:
    policy = make_policy()
    exported = policy.export_onnx(str(tmp_path / "policy.onnx"), 17)
    model = onnx.load(exported["path"])
    onnx.checker.check_model(model)
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [17]
    (input_ids,) = model.graph.input
    (logits,) = model.graph.output
    assert input_ids.name == "input_ids" and logits.name == "logits"
    assert [d.dim_param for d in input_ids.type.tensor_type.shape.dim] == ["batch", "sequence"]
    assert [d.dim_param or d.dim_value for d in logits.type.tensor_type.shape.dim] == ["batch", "sequence", TINY_MODEL["vocab_size"]]
    assert not (tmp_path / "policy.onnx.tmp").exists()
