"""The axes of the validity protocol, in report order: one module each, holding claim specs only
(``claims(smoke) -> list[Claim]``, optionally ``plots(document, runs_dir, out)``)."""

AXES = ("compositional", "lengths", "generalize", "chomsky", "looped", "facts", "rules", "shortcuts", "interpolation", "grokking")
TITLES = {
    "compositional": "Compositional splits: compound divergence and unseen compounds (SCAN)",
    "lengths": "Length generalization of transformers: gaps, positional encodings, traces",
    "generalize": "What lets models generalize further: trace formats and positional encodings",
    "chomsky": "Architectures on the Chomsky hierarchy (Deletang et al. 2023, empty output tape)",
    "looped": "Easy-to-hard with more iterations (looped models, recall and progressive loss)",
    "facts": "Facts: the reversal curse",
    "rules": "Rules in context: instruction diversity",
    "shortcuts": "Shortcut cues",
    "interpolation": "Interpolation vs extrapolation",
    "grokking": "Grokking: delayed generalization and the training fraction",
}
