"""The axes of the validity protocol, in report order: one module each, holding claim specs only
(``claims(smoke) -> list[Claim]``, optionally ``plots(document, runs_dir, out)``)."""

AXES = ("compositional", "lengths", "generalize", "chomsky", "facts", "shortcuts", "interpolation", "grokking", "authors")
# validity_axes.looped, .rules and .cfq are spec modules too: their claims only a GPU budget decides, so they run in the GPU
# protocol (validity_axes.gpu; looped since the fifth edition, rules and cfq since the tenth) and are not in the CPU headline
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

# What the tenth edition changed from the ninth, fixed and committed before its runs (rendered on the page). Earlier
# editions' changes are in the axis modules' docstrings and in git history (docs/validity.md at af76754, 9a1d975, 8050598,
# 095c0ab and a7774e0).
CHANGES = (
    "Every run is retrained: the ninth edition's runs were not shipped, and every set-up changes. Every arm a claim compares "
    "has seeds 0, 1 and 2 (0-4 where every run costs under 2 CPU min: facts, shortcuts), losing arms included; in the ninth "
    "edition losing arms had one seed.",
    "Equal budgets: every arm of a claim trains the same number of steps, all of them (no early stop; budgets per task in "
    "the axis modules, set from the ninth edition's learned steps). Selection by validation: every evaluation reads the "
    "whole validation part and the checkpoint scored is the first with the highest ID; a seed learned when that "
    "checkpoint's ID reaches the threshold (ninth edition: a 256-record subset gated the stop, the last checkpoint was "
    "scored, and five seeds counted as learned ended below the threshold).",
    "ID is exact match per input length weighted by the train part's length shares (was: each length once, so a length "
    "with 2 validation records weighed as much as one with 40).",
    "Rules read means over the learned seeds with a 95 % percentile-bootstrap interval over seeds and are met only when the "
    "whole interval clears the margin (was: means or best seeds, no interval). Every verdict is recomputed with each one "
    "seed left out; a holds that changes is *unstable*, not a holds.",
    "Premises the splits decide are checked before training: novelty (at least 3 MCD splits with 30 test records in both "
    "groups) and local:unseen (30 in both groups); a claim that fails its premise is *not testable* (ninth edition: "
    "novelty's unmet premise read as does not hold). Controls: a negative control on every axis (an effect that must be "
    "absent) and a positive control for the reversal curse (facts seen both ways are answered reversed).",
    "rules (N=78 never learned) and the two cfq claims leave the CPU headline: only a GPU budget decides them (Deferred to "
    "a GPU). Two tiers: quick (a re-check of decided claims, one per axis, at most 90 CPU min: docs/validity-quick.md) and "
    "full (this page). Every judged run's metric history, per-record test results and figures are shipped in "
    "docs/validity-evidence/ with their sha256, and `--recompute` re-derives this page from them.",
)
