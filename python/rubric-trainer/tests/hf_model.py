"""A small, randomly initialised transformers causal LM with a byte-level BPE tokenizer learnt from a
corpus, written with ``save_pretrained``: what the sidecar's transformers path is tested with where
no model can be downloaded (the GPU machine reaches no network). A pretrained model is used the same
way, by its hub name or directory.

    python3 tests/hf_model.py --corpus corpus.txt --out /tmp/manager-model [--vocab 2048 --d-model 64 --layers 2 --max-positions 1024]

``corpus.txt`` holds one text per line (JSON-escaped newlines are fine: the BPE only learns merges).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Iterable

SPECIAL = {"bos": "<s>", "eos": "</s>", "pad": "<pad>"}

# A ChatML template (the form Qwen's chat models use), ending each turn with the end token so that a
# reply ends where the model writes it.
CHATML = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def write_model(
    out: Path,
    corpus: Iterable[str],
    *,
    vocab_size: int = 2048,
    d_model: int = 64,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 1024,
    seed: int = 0,
    chat_template: str | None = None,
) -> Path:
    """Writes the tokenizer and a Llama-architecture model to ``out`` and returns it. ``chat_template``
    (a Jinja template, as a chat model's tokenizer carries) is saved with the tokenizer when given."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    # No split at word boundaries (use_regex=False): merges may span spaces, as the small
    # transformer's BPE does, so the fixed instructions and JSON frames become a few tokens each. With
    # GPT-2's split, a quick run's longest teacher turn took 601 tokens (on the H200, 2026-12-04).
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIAL["bos"], SPECIAL["eos"], SPECIAL["pad"]],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(list(corpus), trainer)
    # transformers 5 renamed the fast tokenizer class; both wrap a tokenizers.Tokenizer.
    fast_class = getattr(transformers, "PreTrainedTokenizerFast", None) or getattr(transformers, "TokenizersBackend")
    fast = fast_class(tokenizer_object=tokenizer, bos_token=SPECIAL["bos"], eos_token=SPECIAL["eos"], pad_token=SPECIAL["pad"], model_max_length=max_positions)
    if chat_template is not None:
        fast.chat_template = chat_template
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out))
    ids = {name: tokenizer.token_to_id(token) for name, token in SPECIAL.items()}
    config = transformers.LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=d_model,
        intermediate_size=4 * d_model,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    transformers.LlamaForCausalLM(config).save_pretrained(str(out))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--vocab", type=int, default=2048)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-positions", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chat-template", default=None, help="a Jinja chat template to save with the tokenizer (CHATML: a ChatML one)")
    args = parser.parse_args()
    lines = [line for line in args.corpus.read_text().splitlines() if line.strip()]
    texts = [json.loads(line) if line.startswith('"') else line for line in lines]
    out = write_model(args.out, texts, vocab_size=args.vocab, d_model=args.d_model, layers=args.layers, heads=args.heads, max_positions=args.max_positions, seed=args.seed, chat_template=CHATML if args.chat_template == "CHATML" else args.chat_template)
    print(json.dumps({"out": str(out), "texts": len(texts)}))


if __name__ == "__main__":
    main()
