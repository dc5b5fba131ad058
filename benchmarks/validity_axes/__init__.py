"""The axes of the validity protocol, in report order: one module each, holding claim specs only
(``claims(smoke) -> list[Claim]``, optionally ``plots(document, runs_dir, out)``)."""

AXES = ("compositional", "lengths", "generalize", "chomsky", "facts", "rules", "shortcuts", "interpolation", "grokking", "authors", "cfq")
# validity_axes.looped (its claims run in the GPU protocol since the fifth edition: validity_axes.gpu) is a spec module too
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
    "authors": "Tools for benchmark authors: fresh test parts, local structures, diverse train sets",
    "cfq": "CFQ-style questions to queries: MCD at the dataset it was made for (Keysers et al. 2020)",
}

# What the ninth edition changed from the eighth, fixed and committed before its runs (rendered on the page). Earlier
# editions' changes are in the axis modules' docstrings and in git history (docs/validity.md at af76754, 9a1d975, 8050598
# and 095c0ab).
CHANGES = (
    "One rule, applied to every arm of the CPU protocol that the eighth edition judged *not learned*: an arm whose "
    "not-learned seed was still learning at its cap (ID, the periodic evaluation averaged over input lengths, up 0.1 or "
    "more over its last 1,000 steps) gets twice its cap, for all its seeds. Two arms meet it; every other arm keeps its "
    "eighth-edition runs, which the engine reuses. Every split, seed, verdict rule and learned rule is unchanged.",
    "Interpolation, parity_check: cap 16,000 steps (was 8,000). Seed 2 rose from ID 0.567 to 0.859 over its last 1,000 "
    "steps. The cosine learning-rate schedule stretches with the cap, so seeds 0, 1 and 2 all run again.",
    "Chomsky hierarchy, stack_manipulation: the transformer (a losing arm) gets 8,000 steps (was 4,000). It rose from ID "
    "0.819 to 0.971 over its last 1,000 steps; the learned rule needs 0.99 at two evaluations. If it learns, the claim "
    "is no longer vacuous for it.",
    "Arms not learned that the rule leaves alone (ID change over the last 1,000 steps): lengths alibi +0.019 and NoPE "
    "+0.044; randomized reverse_string NoPE -0.010 and +0.002; the chomsky transformer on parity_check +0.003, the lstm "
    "on reverse_string +0.023 and on stack_manipulation +0.005; rules N=78 -0.101 and +0.033; cfq -0.043 to +0.027.",
)
