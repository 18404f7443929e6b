"""μ: the decomposition loss and its class balance by hand, the KL direction, SFT, the two learning
rates, the clip, the key/value cache, checkpoints and the protocol (the export and generation have
files of their own)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from rubric_trainer.mu import Mu
from rubric_trainer.mu_losses import class_weights, criteria_kl, decomposition_loss, value_loss
from rubric_trainer.mu_steps import Step, batch, micro_batches
from rubric_trainer.protocol import PARAMS

MODEL = {"kind": "tiny", "vocab_size": 12, "d_model": 16, "n_heads": 2, "n_layers": 2, "max_seq_len": 24}


def make_mu(**overrides) -> Mu:
    return Mu(PARAMS["mu.init"].parse({"model": MODEL, "seed": 1, **overrides}, "params"))


STEPS = [Step([1, 2, 3], [4, 5]), Step([1, 2], [6, 7, 8]), Step([3, 3, 9, 10], [11])]
TEACHER = [[0.5, -0.5, 0.1], [0.0, 0.2, 0.9], [-0.8, -0.6, -0.7]]


def test_class_weights_by_hand() -> None:
    # N = 4, one positive: 4/(2·1) = 2 and 4/(2·3) = 2/3.
    assert class_weights([1.0, 0.0, 0.0, 0.0]) == pytest.approx([2.0, 2 / 3, 2 / 3, 2 / 3])
    # N = 3, two positives: 3/4 each, the negative 3/2; R = 0.5 is not above 0.5, so negative.
    assert class_weights([1.0, 0.9, 0.5]) == pytest.approx([0.75, 0.75, 1.5])
    # One class only: N/(2·N) = ½ for every trajectory.
    assert class_weights([0.0, 0.0]) == pytest.approx([0.5, 0.5])
    # With both classes present the weights sum to N.
    assert sum(class_weights([1, 0, 0, 1, 0])) == pytest.approx(5.0)


def test_decomposition_loss_by_hand() -> None:
    d = [
        torch.tensor([[0.5, 0.5, 0.5], [0.1, 0.2, 0.3]], dtype=torch.float64),  # Σ_t mean_k = 0.7, R = 1
        torch.tensor([[-0.3, 0.0, 0.3]], dtype=torch.float64),  # 0, R = 0
        torch.tensor([[0.4, 0.4, 0.4]], dtype=torch.float64),  # 0.4, R = 0
    ]
    # w = 3/2 for the positive, 3/4 for the negatives: (1.5·0.09 + 0.75·0 + 0.75·0.16) / 3 = 0.085.
    assert float(decomposition_loss(d, [1.0, 0.0, 0.0])) == pytest.approx(0.085, abs=1e-12)


VECTORS = Path(__file__).resolve().parents[3] / "packages" / "core" / "fixtures" / "policy-gradient-vectors.json"


def test_decomposition_loss_matches_core_vectors() -> None:
    """The sidecar's μ loss and @rubric/core's `decompositionLoss` (the feature critic's) agree on
    the shared vectors: one score per step is K = 1."""
    cases = [case for case in json.loads(VECTORS.read_text())["cases"] if case["fn"] == "decompositionLoss"]
    assert len(cases) >= 5
    for case in cases:
        scores = [torch.tensor([[s] for s in row], dtype=torch.float64, requires_grad=True) for row in case["input"]["stepScores"]]
        outcomes = case["input"]["outcomes"]
        expected = case["expected"]
        assert class_weights(outcomes) == pytest.approx(expected["weights"], abs=1e-12), case["name"]
        loss = decomposition_loss(scores, outcomes)
        assert float(loss) == pytest.approx(expected["loss"], abs=1e-12), case["name"]
        loss.backward()
        for x, gradient in zip(scores, expected["gradients"]):
            assert x.grad.flatten().tolist() == pytest.approx([gradient] * x.shape[0], abs=1e-12), case["name"]


def test_value_loss_matches_core_vectors() -> None:
    """The sidecar's value loss (ours) and @rubric/core's `valueLoss` agree on the shared vectors (K = 1)."""
    cases = [case for case in json.loads(VECTORS.read_text())["cases"] if case["fn"] == "valueLoss"]
    assert len(cases) >= 5
    for case in cases:
        values = [torch.tensor([[v] for v in row], dtype=torch.float64, requires_grad=True) for row in case["input"]["values"]]
        expected = case["expected"]
        loss = value_loss(values, case["input"]["outcomes"])
        assert float(loss) == pytest.approx(expected["loss"], abs=1e-12), case["name"]
        loss.backward()
        for x, gradients in zip(values, expected["gradients"]):
            assert x.grad.flatten().tolist() == pytest.approx(gradients, abs=1e-12), case["name"]


def test_decomposition_loss_gradient_matches_finite_differences() -> None:
    generator = torch.Generator().manual_seed(3)
    d = [torch.rand(n, 3, generator=generator, dtype=torch.float64).mul(2).sub(1).requires_grad_() for n in (2, 1, 4)]
    rewards = [1.0, 0.0, 0.0]
    assert torch.autograd.gradcheck(lambda *xs: decomposition_loss(list(xs), rewards), tuple(d), eps=1e-6, atol=1e-8)
    # And the closed form: ∂L/∂d_{t,k} = (2/N) · w_τ · (Σ_t s_t − R_τ) / K.
    decomposition_loss(d, rewards).backward()
    weights = class_weights(rewards)
    for x, reward, weight in zip(d, rewards, weights):
        residual = float(x.detach().mean(dim=1).sum()) - reward
        assert torch.allclose(x.grad, torch.full_like(x, 2 / 3 * weight * residual / 3), atol=1e-12)


def test_micro_batches_sort_by_length_and_bound_the_padded_size() -> None:
    assert micro_batches([5, 1, 3, 2], budget=6) == [[1, 3], [2], [0]]
    # Every row is in exactly one group; a group's rows × longest stays within the budget unless alone.
    lengths = [7, 3, 12, 3, 5, 9, 1, 4]
    groups = micro_batches(lengths, budget=12)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert all(len(g) * max(lengths[i] for i in g) <= 12 or len(g) == 1 for g in groups)
    assert [lengths[i] for g in groups for i in g] == sorted(lengths)


def grads(mu: Mu) -> list[torch.Tensor]:
    return [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in mu.network.parameters()]


@pytest.mark.parametrize("objective", ["decomposition", "value"])
@pytest.mark.parametrize("budget", [1, 9, 10_000])
def test_step_in_micro_batches_has_the_whole_batch_gradient(budget: int, objective: str) -> None:
    # step_gradients (two passes, length-sorted micro-batches) against backward() of step_loss
    # (one forward over the whole batch), in float64, with a KL term: the same loss parts, sums
    # and gradient, whether every step is its own micro-batch (budget 1) or all share one.
    mu = make_mu()
    mu.network.double()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    mu.set_reference()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    trajectories, rewards = [[STEPS[0], STEPS[1]], [STEPS[2]], [STEPS[1], STEPS[2], STEPS[0]]], [1.0, 0.0, 0.0]
    mu.network.zero_grad()
    loss, score_loss, kl, d = mu.step_loss(trajectories, rewards, beta=0.05, objective=objective)
    loss.backward()
    whole = grads(mu)
    mu.network.zero_grad()
    parts = mu.step_gradients(trajectories, rewards, beta=0.05, budget=budget, objective=objective)
    assert parts[0] == pytest.approx(float(loss), rel=1e-12) and parts[1] == pytest.approx(float(score_loss), rel=1e-12)
    assert parts[2] == pytest.approx(float(kl), rel=1e-12) and float(kl) > 0
    assert parts[3] == pytest.approx([float(x.mean(dim=1).sum()) for x in d], rel=1e-12)
    for a, b in zip(whole, grads(mu)):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-14)


def test_sft_in_micro_batches_has_the_whole_batch_gradient() -> None:
    # The same SFT step twice from one state: micro-batches of one step each against one batch.
    results = []
    for budget in (1, 10_000):
        mu = make_mu()
        mu.network.double()
        metrics = mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2, budget=budget)
        results.append((metrics, [p.detach().clone() for p in mu.network.parameters()]))
    (small, after_small), (large, after_large) = results
    assert small["loss"] == pytest.approx(large["loss"], rel=1e-12) and small["tokens"] == large["tokens"] == 6
    for a, b in zip(after_small, after_large):
        assert torch.allclose(a, b, rtol=1e-9, atol=1e-12)


def test_kl_is_reference_to_current_as_arco_code_computes() -> None:
    # p_ref = (0.9, 0.1), p = (0.5, 0.5): KL(p_ref ‖ p) = 0.9 ln 1.8 + 0.1 ln 0.2 = 0.368064,
    # KL(p ‖ p_ref) = 0.5 ln(5/9) + 0.5 ln 5 = 0.510826: the directions differ.
    logp_ref = torch.log(torch.tensor([[[0.9, 0.1], [0.2, 0.8]]], dtype=torch.float64))
    logp = torch.log(torch.tensor([[[0.5, 0.5], [0.99, 0.01]]], dtype=torch.float64))
    mask = torch.tensor([[1, 0]])  # the second position is not a criteria token and must not count
    kl = criteria_kl(logp, logp_ref, mask)
    assert float(kl[0]) == pytest.approx(0.9 * math.log(1.8) + 0.1 * math.log(0.2), abs=1e-12)
    assert float(kl[0]) == pytest.approx(0.368064, abs=1e-6)
    assert float(kl[0]) != pytest.approx(0.510826, abs=1e-3)
    # ARCO's call, F.kl_div(logp_current, logp_ref, log_target=True), on the same position.
    assert float(kl[0]) == pytest.approx(float(F.kl_div(logp[0, 0], logp_ref[0, 0], log_target=True, reduction="sum")), abs=1e-12)


def test_sft_lowers_its_loss_and_fits_the_teacher_scores() -> None:
    mu = make_mu()
    first = mu.sft(STEPS, TEACHER, learning_rate=3e-3, head_learning_rate=3e-3)
    assert first["tokens"] == 6
    for _ in range(60):
        last = mu.sft(STEPS, TEACHER, learning_rate=3e-3, head_learning_rate=3e-3)
    assert last["loss"] < 0.5 * first["loss"]
    assert last["ce"] < first["ce"] and last["mse"] < 0.1 * first["mse"]
    d = torch.tensor(mu.scores(STEPS)["d"])
    assert torch.allclose(d, torch.tensor(TEACHER), atol=0.15)


def test_pretrain_learns_the_texts_next_tokens_and_leaves_the_score_head_alone() -> None:
    # A text whose every token follows from the one before: pretraining must learn it, its CE
    # counting every position but the first, while the score head stays exactly as drawn.
    mu = make_mu()
    head = [p.detach().clone() for p in mu.network.score_head.parameters()]
    texts = [[1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7]]
    first = mu.pretrain(texts, learning_rate=1e-2)
    assert first["tokens"] == 5 + 4 and set(first) == {"ce", "tokens", "grad_norm", "step", "compute_ms"}
    for _ in range(80):
        last = mu.pretrain(texts, learning_rate=1e-2)
    assert last["ce"] < 0.2 * first["ce"] and last["step"] == 81
    logits = torch.tensor(mu.logits([[1, 2, 3, 4, 5]]))
    assert logits[0].argmax(dim=-1).tolist() == [2, 3, 4, 5, 6]
    for before, after in zip(head, mu.network.score_head.parameters()):
        assert torch.equal(before, after)


def test_pretrain_protocol_names_a_bad_text(sidecar) -> None:
    sidecar.call("mu.init", {"model": MODEL, "seed": 2})
    metrics = sidecar.call("mu.pretrain", {"texts": [[1, 2, 3], [4, 5]], "learning_rate": 1e-3})
    assert metrics["tokens"] == 3 and metrics["step"] == 1
    assert any(n["method"] == "metrics" and n["params"]["method"] == "mu.pretrain" for n in sidecar.notifications)
    assert sidecar.error("mu.pretrain", {"texts": [[1, 2], [3]], "learning_rate": 1e-3})["data"]["path"] == "params.texts[1]"
    assert sidecar.error("mu.pretrain", {"texts": [[1, 12]], "learning_rate": 1e-3})["data"]["path"] == "params.texts[0][1]"
    assert sidecar.error("mu.pretrain", {"texts": [[1] * 25], "learning_rate": 1e-3})["data"]["path"] == "params.texts[0]"


def test_no_rubric_ablation_k1_with_empty_criteria() -> None:
    mu = make_mu(k=1)
    steps = [Step([1, 2, 3], []), Step([4, 5], [])]
    first = mu.sft(steps, [[0.6], [-0.4]], learning_rate=3e-3, head_learning_rate=3e-3)
    assert first["tokens"] == 0 and first["ce"] == 0.0
    for _ in range(40):
        last = mu.sft(steps, [[0.6], [-0.4]], learning_rate=3e-3, head_learning_rate=3e-3)
    assert last["mse"] < 0.1 * first["mse"]
    scores = mu.scores(steps)
    assert len(scores["d"][0]) == 1 and scores["s"] == pytest.approx([row[0] for row in scores["d"]])


def test_criteria_pooling_reads_only_the_criteria() -> None:
    mu = make_mu(pooling="criteria")
    inputs = batch([Step([1, 2, 3], [4, 5])], mu.pooling)
    assert inputs["pool_mask"].tolist() == [[0, 0, 0, 1, 1]]
    assert batch([Step([1, 2, 3], [4, 5])], make_mu().pooling)["pool_mask"].tolist() == [[1, 1, 1, 1, 1]]
    # The criteria positions are those that predict a criteria token.
    assert inputs["criteria_mask"].tolist() == [[0, 0, 1, 1, 0]]


def test_last_pooling_reads_each_rows_last_position_only() -> None:
    mu = make_mu(pooling="last")
    # Rows of different lengths: each pools its own last real position, never the padding.
    inputs = batch([Step([1, 2, 3], [4, 5]), Step([1, 2], [])], mu.pooling)
    assert inputs["pool_mask"].tolist() == [[0, 0, 0, 0, 1], [0, 1, 0, 0, 0]]
    # Its scores are the score head over that position's hidden state, as scored alone.
    with torch.no_grad():
        hidden, _ = mu.network.hidden(torch.tensor([[1, 2, 3, 4, 5]]), torch.ones(1, 5, dtype=torch.long))
        alone = mu.network.score_head(hidden[:, -1])
    assert mu.scores([Step([1, 2, 3], [4, 5])])["d"][0] == pytest.approx(alone[0].tolist(), abs=1e-6)
    # A causal backbone: the last position reads the whole step, so an earlier token still counts.
    assert mu.scores([Step([1, 7, 3], [4, 5])])["d"][0] != pytest.approx(alone[0].tolist(), abs=1e-6)


def test_step_uses_two_learning_rates_and_clips_at_one() -> None:
    mu = make_mu()
    backbone = [p.detach().clone() for p in mu.network.backbone_parameters()]
    head = [p.detach().clone() for p in mu.network.score_head.parameters()]
    # Rewards far from any reachable sum make a large gradient, so the clip must act.
    metrics = mu.step([[STEPS[0], STEPS[1]], [STEPS[2]]], [20.0, -20.0], learning_rate=1e-30, head_learning_rate=1e-2, beta=0.05)
    assert metrics["grad_norm"] > 1.0
    clipped = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in mu.network.parameters() if p.grad is not None))
    assert clipped == pytest.approx(1.0, rel=1e-4)
    assert all(torch.allclose(a, b, atol=1e-20, rtol=0) for a, b in zip(backbone, mu.network.backbone_parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(head, mu.network.score_head.parameters()))
    assert metrics["weights"] == pytest.approx([1.0, 1.0]) and metrics["kl"] == 0.0


def test_step_adds_kl_to_the_reference_once_set() -> None:
    mu = make_mu()
    mu.set_reference()
    trajectories = [[STEPS[0], STEPS[1]], [STEPS[2]], [STEPS[1]]]
    first = mu.step(trajectories, [1.0, 0.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert first["kl"] == pytest.approx(0.0, abs=1e-12)  # μ = μ_ref before the first step
    assert first["weights"] == pytest.approx([1.5, 0.75, 0.75])
    second = mu.step(trajectories, [1.0, 0.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert second["kl"] > 0
    assert second["loss"] == pytest.approx(second["score_loss"] + 0.05 * second["kl"], rel=1e-9)


def test_the_key_value_cache_gives_the_full_forward_logits_under_left_padding() -> None:
    network = make_mu().network
    with torch.no_grad():
        full, _ = network.hidden(torch.tensor([[1, 2, 3, 4, 5]]), torch.ones(1, 5, dtype=torch.long))
        expected = network.lm_head(full)[0]
        # Row 0 is the same sequence left-padded by two; row 1 another sequence.
        ids = torch.tensor([[0, 0, 1, 2, 3], [7, 8, 9, 10, 11]])
        mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
        hidden, cache = network.hidden(ids, mask)
        logits = [network.lm_head(hidden)[0, 2:]]
        for token in (4, 5):
            mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], dim=1)
            hidden, cache = network.hidden(torch.tensor([[token], [1]]), mask, cache)
            logits.append(network.lm_head(hidden)[0])
    assert torch.allclose(torch.cat(logits), expected, atol=1e-5)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    mu = make_mu()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    mu.set_reference()
    mu.save(str(tmp_path))
    loaded = Mu.load(str(tmp_path))
    assert loaded.fingerprint() == mu.fingerprint() and loaded.steps == 1 and loaded.reference is not None
    assert loaded.scores(STEPS) == mu.scores(STEPS)
    # The optimiser's moments came back too: the next step is the same step.
    a = mu.step([[STEPS[0]], [STEPS[1]]], [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    b = loaded.step([[STEPS[0]], [STEPS[1]]], [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert a["loss"] == b["loss"] and loaded.fingerprint() == mu.fingerprint()


def test_protocol_methods(sidecar) -> None:
    assert sidecar.error("mu.scores", {"steps": [{"prompt": [1], "criteria": []}]})["code"] == "no_policy"
    assert sidecar.call("health")["mu"] is None
    summary = sidecar.call("mu.init", {"model": MODEL, "seed": 2})
    assert summary["k"] == 3 and summary["pooling"] == "prompt+criteria"
    assert sidecar.call("health")["mu"] == summary
    scores = sidecar.call("mu.scores", {"steps": [{"prompt": [1, 2], "criteria": [3]}, {"prompt": [4], "criteria": [5, 6]}]})
    assert len(scores["d"]) == 2 and all(len(row) == 3 and all(-1 <= x <= 1 for x in row) for row in scores["d"])
    wrong_k = sidecar.error("mu.sft", {"examples": [{"prompt": [1], "criteria": [2], "scores": [0.1]}], "learning_rate": 1e-3})
    assert wrong_k["code"] == "invalid_params" and wrong_k["data"]["path"] == "params.examples[0].scores"
    out_of_range = sidecar.error("mu.sft", {"examples": [{"prompt": [1], "criteria": [2], "scores": [0.1, 2, 0]}], "learning_rate": 1e-3})
    assert out_of_range["data"]["path"] == "params.examples[0].scores[1]"
    too_long = sidecar.error("mu.scores", {"steps": [{"prompt": [1] * 20, "criteria": [2] * 5}]})
    assert too_long["data"]["path"] == "params.steps[0]"
    metrics = sidecar.call("mu.step", {"trajectories": [{"steps": [{"prompt": [1], "criteria": [2]}], "reward": 1}, {"steps": [{"prompt": [3], "criteria": [4]}], "reward": 0}], "learning_rate": 1e-3})
    assert metrics["weights"] == [1.0, 1.0] and metrics["step"] == 1
    assert any(n["method"] == "metrics" and n["params"]["method"] == "mu.step" for n in sidecar.notifications)
    assert sidecar.call("mu.fingerprint")["steps"] == 1
    logits = sidecar.call("mu.logits", {"ids": [[1, 2, 3]]})["logits"]
    assert len(logits[0]) == 3 and len(logits[0][0]) == MODEL["vocab_size"]
    sidecar.call("mu.init", {"model": MODEL, "pooling": "criteria"})
    empty = sidecar.error("mu.scores", {"steps": [{"prompt": [1], "criteria": []}]})
    assert empty["data"]["path"] == "params.steps[0].criteria"


def test_embed_sets_the_rows_it_names_and_nothing_else(sidecar) -> None:
    # Pretrained vectors for tokens 3 and 7: those rows become the vectors (what μ then reads),
    # every other parameter keeps what the seed drew, and bad requests name their field.
    sidecar.call("mu.init", {"model": MODEL, "seed": 2})
    before = sidecar.call("mu.logits", {"ids": [[3, 5], [7, 5]]})["logits"]
    rows = [[0.5 * (i + 1)] * MODEL["d_model"] for i in range(2)]
    assert sidecar.call("mu.embed", {"ids": [3, 7], "rows": rows}) == {"rows": 2}
    after = sidecar.call("mu.logits", {"ids": [[3, 5], [7, 5]]})["logits"]
    assert after != before
    mu = make_mu(seed=2)
    reference = [p.detach().clone() for p in mu.network.parameters()]
    mu.embed([3, 7], rows)
    for (name, parameter), old in zip(mu.network.named_parameters(), reference):
        if name == "tokens.weight":
            assert torch.equal(parameter[3], torch.full((16,), 0.5)) and torch.equal(parameter[7], torch.full((16,), 1.0))
            untouched = [i for i in range(MODEL["vocab_size"]) if i not in (3, 7)]
            assert torch.equal(parameter[untouched], old[untouched])
        else:
            assert torch.equal(parameter, old), name
    assert sidecar.error("mu.embed", {"ids": [3, 12], "rows": rows})["data"]["path"] == "params.ids[1]"
    assert sidecar.error("mu.embed", {"ids": [3], "rows": rows})["data"]["path"] == "params.rows"
    assert sidecar.error("mu.embed", {"ids": [3, 3], "rows": rows})["data"]["path"] == "params.ids"
    assert sidecar.error("mu.embed", {"ids": [3, 4], "rows": [[0.1] * 16, [0.1] * 15]})["data"]["path"] == "params.rows[1]"
    assert sidecar.error("mu.embed", {"ids": [3], "rows": [[0.1] * 8]})["data"]["path"] == "params.rows"


def test_step_loss_gradient_matches_finite_differences_in_the_network() -> None:
    # The whole μ loss (decomposition + β·KL, through backbone and heads) in float64, against
    # central differences on a few parameters: the score head's last bias, a token embedding, a
    # query/key/value weight of the first block.
    mu = make_mu()
    mu.network.double()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    mu.set_reference()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)  # μ ≠ μ_ref, so the KL has a gradient
    trajectories, rewards = [[STEPS[0], STEPS[1]], [STEPS[2]]], [1.0, 0.0]
    probes = [(mu.network.score_head.layers[4].bias, (1,)), (mu.network.tokens.weight, (4, 3)), (mu.network.blocks[0].attention.qkv.weight, (5, 7))]
    mu.network.zero_grad()
    loss, _, kl, _ = mu.step_loss(trajectories, rewards, beta=0.05)
    assert float(kl) > 0
    loss.backward()
    h = 1e-6
    for parameter, index in probes:
        analytic = float(parameter.grad[index])
        with torch.no_grad():
            original = float(parameter[index])
            parameter[index] = original + h
            up = float(mu.step_loss(trajectories, rewards, beta=0.05)[0])
            parameter[index] = original - h
            down = float(mu.step_loss(trajectories, rewards, beta=0.05)[0])
            parameter[index] = original
        assert analytic == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-9)


def test_mu_init_takes_a_device_and_refuses_one_torch_lacks_by_name(sidecar) -> None:
    """``device`` is the policy's (``policy.resolve_device``): the CPU by default, a CUDA device
    refused by name where torch sees none, a name torch cannot read refused as a bad param."""
    summary = sidecar.call("mu.init", {"model": MODEL, "seed": 1})
    assert summary["device"] == "cpu" and summary["dtype"] == "float32"
    assert sidecar.call("mu.init", {"model": MODEL, "device": "cpu"})["device"] == "cpu"
    missing = ["cuda:99"] if torch.cuda.is_available() else ["cuda", "cuda:1", "cuda:99"]
    for device in missing:
        refused = sidecar.error("mu.init", {"model": MODEL, "device": device})
        assert refused["code"] == "unavailable" and refused["data"]["path"] == "params.device", refused
        assert refused["message"].startswith("params.device: ") and repr(device) in refused["message"]
    unreadable = sidecar.error("mu.init", {"model": MODEL, "device": "gpu0"})
    assert unreadable["code"] == "invalid_params" and unreadable["data"]["path"] == "params.device" and "'gpu0'" in unreadable["message"]
    # A refused init leaves the μ the sidecar held.
    assert sidecar.call("mu.fingerprint")["steps"] == 0


def test_mu_load_puts_a_checkpoint_on_the_device_asked_for(sidecar, tmp_path: Path) -> None:
    """``mu.load``'s ``device`` overrides the checkpoint's (a μ trained on a GPU, read on a CPU):
    the same weights there, its init recording the new device; one torch lacks is refused by name."""
    sidecar.call("mu.init", {"model": MODEL, "seed": 4, "device": "cpu"})
    sidecar.call("mu.save", {"dir": str(tmp_path)})
    fingerprint = sidecar.call("mu.fingerprint")["fingerprint"]
    assert sidecar.call("mu.load", {"dir": str(tmp_path), "device": "cpu"})["device"] == "cpu"
    assert sidecar.call("mu.fingerprint")["fingerprint"] == fingerprint
    refused = sidecar.error("mu.load", {"dir": str(tmp_path), "device": "cuda:99"})
    assert refused["code"] == "unavailable" and refused["data"]["path"] == "params.device", refused


def test_a_tiny_mu_is_float32_only() -> None:
    from rubric_trainer.schema import ParamError

    for dtype in ("bfloat16", "float16"):
        with pytest.raises(ParamError) as raised:
            PARAMS["mu.init"].parse({"model": MODEL, "dtype": dtype}, "params")
        assert raised.value.path == "params.dtype" and "float32 only" in str(raised.value)
    with pytest.raises(ParamError) as raised:
        PARAMS["mu.init"].parse({"model": MODEL, "dtype": "float64"}, "params")
    assert raised.value.path == "params.dtype"


def test_a_checkpoint_from_before_device_and_dtype_loads_on_the_cpu(tmp_path: Path) -> None:
    mu = make_mu()
    mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
    for key in ("device", "dtype"):
        del mu.init[key]
    mu.save(str(tmp_path))
    loaded = Mu.load(str(tmp_path))
    assert loaded.device == torch.device("cpu") and loaded.describe()["dtype"] == "float32"
    assert torch.equal(loaded.step_scores(STEPS), mu.step_scores(STEPS))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_a_tiny_mu_on_cuda_computes_what_it_computes_on_the_cpu(tmp_path: Path) -> None:
    from rubric_trainer.mu_generate import generate

    cpu, cuda = make_mu(lora={}), make_mu(lora={}, device="cuda")
    assert cuda.describe()["device"] == "cuda" and all(p.is_cuda for p in cuda.network.parameters())
    for mu in (cpu, cuda):
        mu.sft(STEPS, TEACHER, learning_rate=1e-2, head_learning_rate=1e-2)
        mu.set_reference()
        mu.step([[STEPS[0], STEPS[1]], [STEPS[2]]], [1.0, 0.0], learning_rate=1e-2, head_learning_rate=1e-2, beta=0.05)
    assert torch.allclose(cuda.step_scores(STEPS), cpu.step_scores(STEPS), atol=1e-4)
    prompts = [[1, 2, 3], [4], [5, 6, 7, 8, 9]]
    assert generate(cuda, prompts, max_new_tokens=6, eos_id=0) == generate(cpu, prompts, max_new_tokens=6, eos_id=0)
    cuda.save(str(tmp_path))
    loaded = Mu.load(str(tmp_path))
    assert all(p.is_cuda for p in loaded.network.parameters()) and loaded.reference is not None
    assert torch.equal(loaded.step_scores(STEPS), cuda.step_scores(STEPS))
    assert loaded.export_network().tokens.weight.device.type == "cpu"  # the ONNX graphs trace on the CPU


def test_the_value_objective_learns_each_steps_expected_outcome() -> None:
    """``mu.step`` with ``objective: "value"`` (ours): a step shared by a success and a failure is
    pulled to their mean, the steps that only the success (failure) took towards 1 (0). The
    decomposition loss would accept any split of R over the steps instead."""
    from rubric_trainer.distributed import DistContext
    from rubric_trainer.server import Session
    from conftest import session_call
    from rubric_trainer.protocol import Request

    session = Session(DistContext(0, 1, 0), None)
    session_call(session, "mu.init", {"model": MODEL, "seed": 1})
    shared, good, bad = {"prompt": [1, 2, 3], "criteria": [4, 5]}, {"prompt": [1, 2, 6], "criteria": [7]}, {"prompt": [1, 2, 9], "criteria": [10]}
    trajectories = [{"steps": [shared, good], "reward": 1}, {"steps": [shared, bad], "reward": 0}]
    for _ in range(150):
        metrics = session_call(session, "mu.step", {"trajectories": trajectories, "learning_rate": 3e-3, "beta": 0, "objective": "value"})
    s = session_call(session, "mu.scores", {"steps": [shared, good, bad]})["s"]
    # The floor: the shared step cannot be both 1 and 0; at 0.5 each trajectory keeps (0.5²)/2.
    assert metrics["score_loss"] == pytest.approx(0.125, abs=0.005)
    assert s[0] == pytest.approx(0.5, abs=0.1) and s[1] > 0.85 and s[2] < 0.15
    reply = session.handle(Request(2, "mu.step", {"trajectories": trajectories, "learning_rate": 1e-3, "objective": "values"}))
    assert reply["error"]["code"] == "invalid_params" and "params.objective" in reply["error"]["message"]


def test_a_tiny_mu_has_no_tokenizer_and_its_text_methods_say_so() -> None:
    from conftest import session_call
    from rubric_trainer.distributed import DistContext
    from rubric_trainer.protocol import Request
    from rubric_trainer.server import Session

    session = Session(DistContext(0, 1, 0), None)
    assert session_call(session, "mu.init", {"model": MODEL, "seed": 1})["tokenizer"] is None
    for i, (method, params) in enumerate(
        [("mu.tokenize", {"texts": ["a"]}), ("mu.detokenize", {"ids": [[1]]}), ("mu.chat", {"conversations": [[{"role": "user", "content": "a"}]]})]
    ):
        reply = session.handle(Request(i, method, params))
        assert reply["error"]["code"] == "unavailable", reply
        assert f"{method} needs a model with a tokenizer" in reply["error"]["message"]
    # The wire refuses an empty list before μ is asked.
    reply = session.handle(Request(9, "mu.tokenize", {"texts": []}))
    assert reply["error"]["code"] == "invalid_params" and "params.texts" in reply["error"]["message"]
