"""Transformer baselines trained from scratch: tokenizer, models, training, evaluation."""
