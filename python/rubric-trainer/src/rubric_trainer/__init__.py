"""rubric-trainer: the torch side of the rubric toolkit, served as JSON lines over stdio.

Start it with ``python3 -m rubric_trainer serve``. ``trl_reward`` is a TRL reward function that
asks the TypeScript reward server of @rubric/verifiers; importing this package does not import torch.
"""

from .reward_client import RewardServerError, make_trl_reward, trl_reward

__version__ = "0.1.0"
__all__ = ["RewardServerError", "make_trl_reward", "trl_reward", "__version__"]
