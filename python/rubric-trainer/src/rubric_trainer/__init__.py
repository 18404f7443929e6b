"""rubric-trainer: the torch side of the rubric toolkit, served as JSON lines over stdio.

Start it with ``python3 -m rubric_trainer serve``. The TRL reward function that asks the
TypeScript reward server lives in its own package, ``rubric-reward`` (python/rubric-reward), which
needs no torch.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
