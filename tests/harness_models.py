"""Tiny Hugging Face causal LMs built from a config and saved locally (no model hub), for the harness tests.

``tiny_model(folder, texts)`` trains a small byte-level BPE tokenizer on texts (so any output
decodes), gives it a chat template, builds a 2-layer Llama with random weights under a fixed
seed and saves both with ``save_pretrained``: the directory loads with
``AutoModelForCausalLM.from_pretrained`` / ``AutoTokenizer.from_pretrained`` offline, as
``gengap eval``, ``lm_eval --model hf`` and TRL do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL = ["<|pad|>", "<|endoftext|>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]


def tiny_model(folder: str | Path, texts: Iterable[str], seed: int = 0, vocab_size: int = 300) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(list(texts), trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<|pad|>", eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id, tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def answering_model(folder: str | Path, texts: Iterable[str], answer: str = " 1", cues: tuple[str, ...] = ("Answer:", "\n")) -> Path:
    """A tiny model that says ``answer`` after any cue's last token (``:`` of "Answer:", a newline) and a newline after it.

    Its blocks add nothing (attention and MLP output projections are zero), so the logits depend
    on the last token only: a cue points to the answer token, the answer token to a newline. A
    text prompt ending in "Answer:" gets `` 1`` and stops at the newline; a chat reply (after the
    template's newline) is `` 1`` repeated on lines. A deterministic stand-in for a pretrained
    model with a known exact match: the share of targets equal to the answer.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_model(folder, texts)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, tie_word_embeddings=False)
    (answer_id,) = tokenizer(answer, add_special_tokens=False)["input_ids"]
    (newline_id,) = tokenizer("\n", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embed = model.model.embed_tokens.weight
        head = torch.zeros_like(embed)
        for cue in cues:
            cue_id = tokenizer(cue, add_special_tokens=False)["input_ids"][-1]
            embed[cue_id] = 0.0
            embed[cue_id, 0] = 10.0
        embed[answer_id] = 0.0
        embed[answer_id, 1] = 10.0
        head[answer_id, 0] = 10.0
        head[newline_id, 1] = 10.0
        model.lm_head.weight = torch.nn.Parameter(head)
    model.config.tie_word_embeddings = False
    model.save_pretrained(folder)
    return folder
