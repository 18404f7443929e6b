"""xoshiro128** exactly as @rubric/core's ``Xoshiro128StarStar`` (packages/core/src/random/rng.ts),
so that a random stream handed over the wire as an ``RngState`` draws the same numbers here as in
TypeScript: ``mu.generate`` samples with it, and the TypeScript generator must pick the same tokens.

Only the continuation of a given state is implemented (``uint32``, ``next``), not seeding or forks:
the client owns the streams and sends their states; the sidecar never creates one.
"""

from __future__ import annotations

from typing import Sequence

ALGORITHM = "xoshiro128**"
MASK_32 = 0xFFFFFFFF
TWO_POW_53 = 9007199254740992
TWO_POW_26 = 67108864


def rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & MASK_32


class Xoshiro128StarStar:
    """A stream continuing from four unsigned 32-bit state words (``RngState.words``)."""

    def __init__(self, words: Sequence[int]) -> None:
        if len(words) != 4 or any(not 0 <= w <= MASK_32 for w in words):
            raise ValueError(f"expected 4 unsigned 32-bit words, got {list(words)}")
        if not any(words):
            raise ValueError("the all-zero state is xoshiro's fixed point: it would draw zeros forever")
        self.s0, self.s1, self.s2, self.s3 = (int(w) for w in words)

    @property
    def words(self) -> list[int]:
        return [self.s0, self.s1, self.s2, self.s3]

    def uint32(self) -> int:
        """The next raw 32-bit output, unsigned (core's ``rng.uint32()``)."""
        result = (rotl((self.s1 * 5) & MASK_32, 7) * 9) & MASK_32
        t = (self.s1 << 9) & MASK_32
        self.s2 ^= self.s0
        self.s3 ^= self.s1
        self.s1 ^= self.s2
        self.s0 ^= self.s3
        self.s2 ^= t
        self.s3 = rotl(self.s3, 11)
        return result

    def next(self) -> float:
        """Uniform in [0, 1) from 53 bits of two outputs, 27 high then 26 low (core's ``rng.next()``).

        Both factors are exact in a double, so the value is bit-for-bit what JavaScript computes."""
        high = self.uint32() >> 5
        low = self.uint32() >> 6
        return (high * TWO_POW_26 + low) / TWO_POW_53
