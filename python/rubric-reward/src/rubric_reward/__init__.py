"""rubric-reward: rewards from TypeScript rubrics for Python trainers.

``RewardClient`` talks to a reward server (``rubric serve --rubric r.json``); ``make_trl_reward``
and ``trl_reward`` are TRL reward functions on top of it. Standard library only.
"""

from .client import (
    RewardClient,
    RewardServerError,
    RewardUnavailableError,
    ScoreReply,
    make_trl_reward,
    trl_reward,
)

__version__ = "0.1.0"
__all__ = [
    "RewardClient",
    "RewardServerError",
    "RewardUnavailableError",
    "ScoreReply",
    "make_trl_reward",
    "trl_reward",
    "__version__",
]
