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

# What the fifth edition changed from the fourth, fixed and committed before its runs (rendered on the page).
CHANGES = (
    "Step caps raised where the fourth edition's models were still fitting their train part at the cap: the lengths and "
    "generalize axes 8,000 steps (was 4,000), interpolation on reverse_string 8,000 (was 4,000), rules 6,000 (was 3,000).",
    "Rules in context: 8,000 train-side records for every N (was 2,000, which the N = 78 arm memorized at ~26 per system), "
    "from a pool of 200,000 (was 60,000).",
    "Abacus embeddings are set against addition with every number written least significant digit first (McLeish et al.'s "
    "format; `format: little_endian`, new), with a RoPE arm on the same split; the fourth edition reversed only the sum.",
    "A third seed where a claim's runs take under a minute: the LSTM on parity_check and even_pairs, the stack RNN on "
    "reverse_string and stack_manipulation, every shortcut run.",
    "Moved to the GPU protocol, with the command for each under \"Deferred to a GPU\": duplicate_string (the tape RNN; the "
    "paper trains 1,000,000 steps) and the two looped-model claims (a step is 8-24 layer passes); on the CPU none of their "
    "models learned in the fourth edition.",
    "New axis, authors: a fresh test part (`gengap fresh`) scores like the cited one, and exposes a model that saw the cited "
    "test part in training; test records with an unseen local structure (Bogin et al.) are solved less often; a structurally "
    "diverse train set does at least as well as a random one. The last two were added after the others had started, and moved "
    "from cfq_like to SCAN before any run of theirs (the cfq axis's first runs had not learned cfq_like at 6,000 steps).",
    "New axis, cfq: a random split vs MCD1-3-like splits and graded compound divergence on cfq_like (Keysers et al. 2020).",
    "Verdict rules, learned rules and split seeds are unchanged for every claim the fourth edition had.",
)
