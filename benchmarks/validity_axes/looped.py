"""Easy-to-hard with more iterations (Schwarzschild et al. 2021; Bansal et al. 2022): a looped
model (one weight-tied block, input recall at every iteration) trained with k iterations and
the progressive loss on small instances solves larger ones when run for more iterations.

Set-up (fixed before any run): sampled length splits, train lengths 1..20, test 21..80 (5,000
/ 500 / 500 records); the looped model (preset tiny: one layer, d 64, RoPE), trained with the
progressive loss (alpha 0.5: half the loss after a random number of extra iterations from a
detached intermediate state) and evaluated with k, 2k and 4k iterations; a tiny transformer
beside it; seed 0 (a looped step costs 8-24 layers: 0.2-0.4 s here); trained until learned (ID
>= 0.95 at two evaluations, then 25 % more steps; cap 2,000 steps). prefix_sums with full causal attention, k = 8; parity_check
with attention window 2 (information moves one position per iteration), k = 24.
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import LEARNED, arm, build, f3
from validity_engine import Claim, Decision, Figures

SCORE_MIN = 0.9
PROGRESSIVE = 0.5
TASKS = {"prefix_sums": (0, 8), "parity_check": (2, 24)}  # task: (attention window, training iterations)
EDITION4_LOOPED = {  # the fourth edition ran these on the CPU
    "prefix_sums": "not learned on the CPU (looped ID 0.003 at the 2,000-step cap, 14 CPU min)",
    "parity_check": "not learned on the CPU (looped ID 0.51 at the 2,000-step cap, 26 CPU min)",
}


def claims(smoke: bool, steps: int = 2000, seeds: tuple[int, ...] = (0,)) -> list[Claim]:
    """The claims at the fourth edition's CPU scale, or with ``steps`` and ``seeds`` of the GPU
    protocol (validity_axes.gpu: since the fifth edition they run there only)."""
    sizes = {"train": 5000, "validation": 500, "test": 500} if not smoke else {"train": 200, "validation": 40, "test": 40}
    seeds = seeds if not smoke else (0,)
    train, test = ((1, 20), (21, 80)) if not smoke else ((1, 8), (9, 10))
    common = {"steps": steps, "eval_every": 250, "eval_examples": 256} if not smoke else {"steps": 10, "eval_every": 5, "eval_examples": 16}
    out = []
    for task, (window, k) in TASKS.items():
        k = k if not smoke else 2
        split = build("length", task=task, train=list(train), test=list(test), sizes=sizes, label=f"{task}-looped")
        config = f"{task}-lengths-{train[0]}-{train[1]}"
        looped = arm("looped", config, split, seeds, cost=8, arch="looped", iterations=k, test_iterations=[k, 2 * k, 4 * k],
                     window=window, progressive_loss=PROGRESSIVE, **common)
        transformer = arm("transformer", config, split, seeds, cost=3, **common)
        out.append(Claim(
            "looped", f"looped:{task}", f"{task}: more test iterations let the looped model solve longer inputs", (looped, transformer),
            f"the looped model's length score (best learned seed) ≥ {SCORE_MIN} with 2k or 4k iterations and < {SCORE_MIN} with its training k; "
            f"the transformer's < {SCORE_MIN}",
            "Schwarzschild et al. 2021: trained on 32-bit prefix sums, solves 512-bit with more iterations; Bansal et al. 2022: recall "
            "and the progressive loss keep it stable",
            more_iterations, learned=LEARNED, losing=("transformer",), previous=EDITION4_LOOPED[task],
            setup=f"Train lengths {train[0]}..{train[1]}, test {test[0]}..{test[1]}; attention window {window or 'none (full causal)'}; "
                  f"k = {k} training iterations, evaluated with {k}, {2 * k} and {4 * k}; progressive loss alpha {PROGRESSIVE}."))
    return out


def _scores(result: Any) -> dict[int, float]:
    """The looped model's length score by test iteration count, best learned seed."""
    seeds = result.learned_seeds or result.seeds
    counts = sorted({int(c) for s in seeds for c in s.get("by_iterations", {})})
    return {c: max(s["by_iterations"][str(c)]["ood_length_score"] for s in seeds) for c in counts}


def more_iterations(figures: Figures) -> Decision:
    looped, transformer = figures["looped"], figures["transformer"]
    scores = _scores(looped)
    k = min(scores) if scores else None
    more = [v for c, v in scores.items() if k is not None and c > k]
    holds = (bool(more) and max(more) >= SCORE_MIN and scores[k] < SCORE_MIN
             and transformer.score is not None and transformer.score < SCORE_MIN)
    text = ", ".join(f"{c} it. {f3(v)}" for c, v in scores.items())
    return Decision(holds, f"looped length score {text}; transformer {f3(transformer.score)}",
                    {"length score by iterations": [{"iterations": c, "length score": v} for c, v in scores.items()]})
