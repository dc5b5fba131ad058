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

# What the sixth edition changed from the fifth, fixed and committed before its runs (rendered on the page). The fifth
# edition's changes from the fourth are in the axis modules' docstrings and in git history (docs/validity.md at 9a1d975).
CHANGES = (
    "Only claims whose fifth-edition verdict was *not learned*, or whose premise was not met, changed; every other claim "
    "is judged again on its fifth-edition runs, which the engine reuses (the same split, settings and seed give the same run).",
    "Interpolation on parity_check: a cap of 8,000 steps (was 4,000), as for every other parity_check length run; its two "
    "runs had ID 0.976 and 0.931 at 4,000, still rising.",
    "Randomized positions: the reverse_string arms that had not learned at 8,000 steps (randomized, ID 0.759; NoPE, 0.271) "
    "get a cap of 16,000; the learned RoPE arms keep their runs.",
    "Rules in context: 32,000 train-side records for every N (was 8,000) from a pool of 1,000,000 (was 200,000), cap 10,000 "
    "steps (was 6,000): the N = 36 and 78 arms fit their train part (train exact match ≥ 0.97) but stayed at ID 0.60-0.81 "
    "on unseen strings of their seen systems, at ~100-220 records per system.",
    "fresh:memorized: the cited test part is added to train 4 times (was once), and the claim states its premise: the "
    "contaminated model fits the cited part it trained on (exact match ≥ 0.95), else *not learned*. The fifth edition's "
    "model scored 0.718 on the cited part and 0.702 on a fresh one: it had not memorized what it saw, and \"does not hold\" "
    "tested nothing.",
    "The cfq axis is unchanged on the CPU (not learned at 6,000 steps, ~16 CPU min a run; Keysers et al. train at "
    "accelerator scale) and stays listed under \"Deferred to a GPU\" with its command.",
    "Verdict rules, learned rules and split seeds are unchanged for every claim.",
)
