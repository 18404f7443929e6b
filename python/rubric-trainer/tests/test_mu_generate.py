"""mu.generate: the cached, batched loop against an uncached loop over the full forward written
out here independently (pure Python for the choice of token, as the TypeScript twin will be), the
stopping rules, the sampling rule by hand, reproducible streams, and the refusals over the wire."""

from __future__ import annotations

import math
from typing import Optional

import pytest
import torch

from rubric_trainer.faults import InvalidParams
from rubric_trainer.mu import Mu
from rubric_trainer.mu_generate import generate, next_tokens
from rubric_trainer.mu_steps import Step
from rubric_trainer.protocol import PARAMS
from rubric_trainer.xoshiro import Xoshiro128StarStar

MODEL = {"kind": "tiny", "vocab_size": 16, "d_model": 32, "n_heads": 4, "n_layers": 2, "max_seq_len": 24}
PROMPTS = [[1, 2, 3, 4, 5, 6, 7], [8, 9], [10, 11, 12, 13], [14]]
NEVER = -1  # an eos_id no token equals: the uncached loop then runs to its length limits
STATES = [
    {"algorithm": "xoshiro128**", "words": [2065550767, 3793791033, 2713282036, 1853398634], "key": "0000000000000000"},
    {"algorithm": "xoshiro128**", "words": [2298633409, 2433363436, 1703865447, 3203108257], "key": "0000000000000001"},
    {"algorithm": "xoshiro128**", "words": [803958421, 3184996902, 2993090819, 686809907], "key": "000000000000002a"},
    {"algorithm": "xoshiro128**", "words": [1609796109, 794642874, 3287151613, 827980415], "key": "84ae98494abd9531"},
]


@pytest.fixture(scope="module")
def mu() -> Mu:
    mu = Mu(PARAMS["mu.init"].parse({"model": MODEL, "seed": 3}, "params"))
    # A few SFT steps, so the logits are those of a trained model rather than of the seed alone.
    for _ in range(3):
        mu.sft([Step([1, 2, 3], [4, 5, 6]), Step([8, 9], [10, 11])], [[0.5, 0.1, -0.2], [0.0, 0.3, 0.9]], learning_rate=1e-2, head_learning_rate=1e-2)
    return mu


def uncached(mu: Mu, prompt: list[int], max_new_tokens: int, eos_id: int, temperature: float = 0.0, state: Optional[dict] = None) -> tuple[list[int], bool]:
    """The rule as written in generate's docstring, one row, a full forward per token, no cache."""
    stream = Xoshiro128StarStar(state["words"]) if state is not None else None
    written: list[int] = []
    while True:
        row = prompt + written
        with torch.no_grad():
            hidden, _ = mu.network.hidden(torch.tensor([row]), torch.ones(1, len(row), dtype=torch.long))
            logits = [float(x) for x in mu.network.lm_head(hidden)[0, -1]]
        if stream is None:
            token = logits.index(max(logits))  # the first maximum: the lowest id on ties
        else:
            z = [x / temperature for x in logits]
            top = max(z)
            e = [math.exp(x - top) for x in z]
            total = sum(e)
            p = [x / total for x in e]
            running, cumulative = 0.0, []
            for x in p:
                running += x
                cumulative.append(running)
            threshold = stream.next() * cumulative[-1]
            token = next((i for i, c in enumerate(cumulative) if c > threshold), max(i for i, x in enumerate(p) if x > 0))
        if token == eos_id:
            return written, True
        written.append(token)
        if len(written) >= max_new_tokens or len(prompt) + len(written) >= mu.max_seq_len:
            return written, False


def test_greedy_is_the_uncached_argmax_loop(mu: Mu) -> None:
    got = generate(mu, PROMPTS, max_new_tokens=9, eos_id=NEVER)
    expected = [uncached(mu, p, 9, NEVER) for p in PROMPTS]
    assert got == {"ids": [ids for ids, _ in expected], "finished": [False] * len(PROMPTS)}
    assert all(len(ids) == 9 for ids in got["ids"])  # max_new_tokens stops every row
    assert len({tuple(ids) for ids in got["ids"]}) > 1  # the rows did not all write one sequence


def test_batched_rows_are_the_rows_alone(mu: Mu) -> None:
    batched = generate(mu, PROMPTS, max_new_tokens=8, eos_id=NEVER)
    alone = [generate(mu, [p], max_new_tokens=8, eos_id=NEVER) for p in PROMPTS]
    assert batched["ids"] == [a["ids"][0] for a in alone]
    sampled = generate(mu, PROMPTS, max_new_tokens=8, eos_id=NEVER, temperature=1.0, rngs=STATES)
    alone = [generate(mu, [p], max_new_tokens=8, eos_id=NEVER, temperature=1.0, rngs=[s]) for p, s in zip(PROMPTS, STATES)]
    assert sampled["ids"] == [a["ids"][0] for a in alone]


def test_a_row_stops_at_eos_which_it_does_not_return(mu: Mu) -> None:
    free, _ = uncached(mu, PROMPTS[1], 9, NEVER)
    # The EOS is a token the row writes at some point: its ids end just before its first occurrence.
    eos = free[3]
    expected = free[: free.index(eos)]
    got = generate(mu, PROMPTS, max_new_tokens=9, eos_id=eos)
    assert got["ids"][1] == expected and got["finished"][1] is True
    for b, prompt in enumerate(PROMPTS):  # every row obeys the same rule, the others unaffected
        assert (got["ids"][b], got["finished"][b]) == uncached(mu, prompt, 9, eos)


def test_a_row_stops_when_it_fills_max_seq_len(mu: Mu) -> None:
    long = list(range(1, 16)) + [1, 2, 3, 4, 5, 6, 7]  # 22 of 24 positions: room for 2 tokens
    free = generate(mu, [long, [3]], max_new_tokens=10, eos_id=NEVER)
    assert len(free["ids"][0]) == 2 and len(free["ids"][1]) == 10 and free["finished"] == [False, False]
    assert (free["ids"][0], False) == uncached(mu, long, 10, NEVER)
    longest = list(range(1, 16)) + [1, 2, 3, 4, 5, 6, 7, 8]  # max_seq_len − 1 tokens: exactly one more
    assert len(generate(mu, [longest], max_new_tokens=10, eos_id=NEVER)["ids"][0]) == 1


def test_sampling_is_the_uncached_inverse_cdf_loop(mu: Mu) -> None:
    got = generate(mu, PROMPTS, max_new_tokens=9, eos_id=NEVER, temperature=0.8, rngs=STATES)
    assert got["ids"] == [uncached(mu, p, 9, NEVER, 0.8, s)[0] for p, s in zip(PROMPTS, STATES)]


def test_sampling_is_reproducible_from_the_same_states_and_differs_for_others(mu: Mu) -> None:
    prompts = [PROMPTS[0]] * 4
    first = generate(mu, prompts, max_new_tokens=12, eos_id=NEVER, temperature=1.5, rngs=STATES)
    again = generate(mu, prompts, max_new_tokens=12, eos_id=NEVER, temperature=1.5, rngs=STATES)
    assert first == again
    # One prompt, four streams: four different samples.
    assert len({tuple(ids) for ids in first["ids"]}) == 4
    greedy = generate(mu, [PROMPTS[0]], max_new_tokens=12, eos_id=NEVER)["ids"][0]
    assert any(ids != greedy for ids in first["ids"])


def test_sampling_without_a_stream_per_prompt_is_refused_not_greedy(mu: Mu) -> None:
    with pytest.raises(InvalidParams, match="one stream state per prompt"):
        generate(mu, PROMPTS, max_new_tokens=2, eos_id=NEVER, temperature=1.0)
    with pytest.raises(InvalidParams, match="got 1"):
        generate(mu, PROMPTS, max_new_tokens=2, eos_id=NEVER, temperature=1.0, rngs=STATES[:1])


def test_the_token_rule_by_hand() -> None:
    # Ties go to the lowest id.
    assert next_tokens(torch.tensor([[1.0, 3.0, 3.0, 0.0], [5.0, 5.0, 5.0, 5.0]]), 0.0, None) == [1, 0]

    class Fixed:
        def __init__(self, u: float) -> None:
            self.u = u

        def next(self) -> float:
            return self.u

    # Equal logits: p = ¼ each and the running sums (¼, ½, ¾, 1) are exact, so the boundaries can be
    # probed: the smallest id whose running sum is strictly above u · 1.
    uniform = torch.zeros(1, 4)
    picks = {u: next_tokens(uniform, 1.0, [Fixed(u)])[0] for u in (0.0, 0.2499, 0.25, 0.5, 0.75, 0.9999)}
    assert picks == {0.0: 0, 0.2499: 0, 0.25: 1, 0.5: 2, 0.75: 3, 0.9999: 3}
    # p = (¼, ½, ¼), cumulative (¼, ¾, 1), probed away from the boundaries (log 2 is rounded).
    logits = torch.log(torch.tensor([[1.0, 2.0, 1.0]]))
    assert [next_tokens(logits, 1.0, [Fixed(u)])[0] for u in (0.24, 0.26, 0.74, 0.76)] == [0, 1, 1, 2]
    # Temperature divides the logits before the softmax: at ½, p ∝ (1, 4, 1), cumulative (⅙, ⅚, 1).
    assert [next_tokens(logits, 0.5, [Fixed(u)])[0] for u in (0.16, 0.17, 0.83, 0.84)] == [0, 1, 1, 2]
    # An id without probability mass (exp underflows to 0) is never drawn, even at the largest u.
    largest_u = 1 - 2**-53
    assert next_tokens(torch.tensor([[0.0, 0.0, -1e4]]), 1.0, [Fixed(largest_u)]) == [1]


def test_each_written_token_draws_once_from_its_rows_stream(mu: Mu) -> None:
    got = generate(mu, [PROMPTS[2]], max_new_tokens=5, eos_id=NEVER, temperature=1.0, rngs=[STATES[0]])
    # Re-deriving each token from u = the i-th next() of the stream reproduces the row.
    stream = Xoshiro128StarStar(STATES[0]["words"])
    row = list(PROMPTS[2])
    for token in got["ids"][0]:
        u = stream.next()
        with torch.no_grad():
            hidden, _ = mu.network.hidden(torch.tensor([row]), torch.ones(1, len(row), dtype=torch.long))
            p = torch.softmax(mu.network.lm_head(hidden)[0, -1].double(), dim=0)
        cumulative = torch.cumsum(p, dim=0)
        assert token == int((cumulative > u * cumulative[-1]).nonzero()[0])
        row.append(token)


def test_mu_generate_over_the_wire(sidecar) -> None:
    sidecar.call("mu.init", {"model": MODEL, "seed": 3})
    result = sidecar.call("mu.generate", {"prompts": [[1, 2, 3], [4]], "max_new_tokens": 4, "eos_id": 0})
    assert set(result) == {"ids", "finished"} and len(result["ids"]) == 2 and len(result["finished"]) == 2
    sampled = sidecar.call("mu.generate", {"prompts": [[1, 2, 3]], "max_new_tokens": 4, "eos_id": 0, "temperature": 1.0, "rng": [STATES[0]]})
    assert sampled == sidecar.call("mu.generate", {"prompts": [[1, 2, 3]], "max_new_tokens": 4, "eos_id": 0, "temperature": 1.0, "rng": [STATES[0]]})

    def refused(params: dict) -> str:
        error = sidecar.error("mu.generate", {"prompts": [[1, 2, 3]], "max_new_tokens": 4, "eos_id": 0, **params})
        assert error["code"] == "invalid_params", error
        return error["data"]["path"]

    assert refused({"prompts": [[1], list(range(1, 16)) + list(range(1, 10))]}) == "params.prompts[1]"  # 24 of 24: no room
    assert refused({"prompts": []}) == "params.prompts"
    assert refused({"prompts": [[1], []]}) == "params.prompts[1]"
    assert refused({"prompts": [[1, 16]]}) == "params.prompts[0][1]"
    assert refused({"max_new_tokens": 0}) == "params.max_new_tokens"
    assert refused({"eos_id": 16}) == "params.eos_id"
    assert refused({"temperature": -0.5}) == "params.temperature"
    assert refused({"temperature": 1.0}) == "params.rng"
    assert refused({"temperature": 1.0, "rng": [STATES[0], STATES[1]]}) == "params.rng"
    assert refused({"rng": [STATES[0]]}) == "params.rng"  # greedy draws nothing
    assert refused({"temperature": 1.0, "rng": [{**STATES[0], "words": [0, 0, 0, 0]}]}) == "params.rng[0].words"
    assert refused({"temperature": 1.0, "rng": [{**STATES[0], "words": [1, 2, 3]}]}) == "params.rng[0].words"
    assert refused({"temperature": 1.0, "rng": [{**STATES[0], "words": [1, 2, 3, 2**32]}]}) == "params.rng[0].words[3]"
    assert refused({"temperature": 1.0, "rng": [{**STATES[0], "key": "ABCDEF0123456789"}]}) == "params.rng[0].key"
    assert refused({"temperature": 1.0, "rng": [{**STATES[0], "algorithm": "mt19937"}]}) == "params.rng[0].algorithm"
