"""A transformers model's own tokenizer as the wire uses it: ``policy.tokenize``/``detokenize``/
``chat`` and ``mu.tokenize``/``detokenize``/``chat`` are one code path, so π and μ read text alike
(a chat model's prompt through its template, the assistant's turn opened). The small transformer
has no tokenizer: its client makes its ids, and these methods name that.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .faults import Unavailable


def require_tokenizer(tokenizer: Any, method: str) -> Any:
    if tokenizer is None:
        raise Unavailable(f"{method} needs a model with a tokenizer (model.kind 'transformers'); the small transformer reads ids that its client's tokenizer made")
    return tokenizer


def tokenize(tokenizer: Any, texts: Sequence[str], method: str) -> list[list[int]]:
    """Each text's ids as the model reads them, with no special token added (the client frames its
    prompts: the start token, if any, and the end token are its to place)."""
    tokenizer = require_tokenizer(tokenizer, method)
    return [list(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]


def detokenize(tokenizer: Any, ids: Sequence[Sequence[int]], method: str, check_tokens: Callable[[Sequence[int], str], None]) -> list[str]:
    """Each row's text, special tokens left out; each row checked against the model's vocabulary
    first (``check_tokens(row, path)``), so an id past it is ``invalid_params`` naming the row."""
    tokenizer = require_tokenizer(tokenizer, method)
    for k, row in enumerate(ids):
        check_tokens(row, f"params.ids[{k}]")
    return [tokenizer.decode(list(row), skip_special_tokens=True) for row in ids]


def chat(tokenizer: Any, conversations: Sequence[Sequence[dict]], method: str, plain_method: str) -> list[list[int]]:
    """Each conversation's ids as the model's chat template renders it, with the assistant's turn
    opened (``add_generation_prompt``): what the model reads before it writes a reply. The template
    places its own special tokens, so nothing else is added. Rendered to text first and then
    tokenised, which reads the same in transformers 4 and 5 (whose ``tokenize=True`` returns
    different types)."""
    tokenizer = require_tokenizer(tokenizer, method)
    if not getattr(tokenizer, "chat_template", None):
        raise Unavailable(f"{method} needs a tokenizer with a chat template; this model's has none (render the prompt as text and use {plain_method})")
    texts = [tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False, add_generation_prompt=True) for messages in conversations]
    return [list(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]


def describe_tokenizer(tokenizer: Any, eos_token_id: Optional[int]) -> Optional[dict]:
    """The summary's ``tokenizer``: null for the small transformer."""
    if tokenizer is None:
        return None
    bos = getattr(tokenizer, "bos_token_id", None)
    return {
        "size": len(tokenizer),
        "bos_token_id": None if bos is None else int(bos),
        "eos_token_id": eos_token_id,
        "chat_template": bool(getattr(tokenizer, "chat_template", None)),
    }
