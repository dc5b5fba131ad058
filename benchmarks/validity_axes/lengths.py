"""Length generalization of tiny transformers: do they fail beyond their train lengths once they
learned them (Deletang et al. 2023; Zhou et al. 2024 for addition), does a positional encoding
change that, and do fine traces help (Anil et al. 2022)?

Set-up (fixed before any run): sampled length splits (5,000 train, 500 validation, 500 test),
train input lengths 1..20 and test 21..40 (addition: operands of 1..5 digits, test 6..10,
the sum's digits reversed as Lee et al. 2023 write them); a tiny transformer (2 layers,
d 64, RoPE unless stated), autoregressive, seeds 0 and 1, trained until learned (ID >= 0.95
at two evaluations, then 25 % more steps; cap 8,000 steps); the losing arms of the positions
claim (ALiBi, NoPE) one seed each.

Fifth edition (fixed before its runs): the cap is 8,000 steps, was 4,000 (the RoPE reverse_string
runs met the learned rule at 3,500-3,750 and were cut at 4,000 before their 25 % more steps; the
randomized-position arm of the generalize axis was still learning at 4,000). Rules unchanged.
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import PREVIOUS, LEARNED, arm, build, f3
from validity_engine import Claim, Decision, Figures

GAP_MIN = 0.2  # ID - OOD of a learned model
POSITIONS_OOD_MAX = 0.5  # every learned encoding stays below this OOD exact match on reverse_string
TRACE_MARGIN = 0.1  # fine traces: OOD answer exact match above the answer-only model's by at least this
TASKS = {  # task: (train range, test range, parameters)
    "reverse_string": ((1, 20), (21, 40), {}),
    "parity_check": ((1, 20), (21, 40), {}),
    "bucket_sort": ((1, 20), (21, 40), {}),
    "addition": ((1, 5), (6, 10), {"format": "reversed"}),
}
PUBLISHED = {
    "reverse_string": "Deletang et al.: 62.3 % per-token (best transformer, lengths 41-500)",
    "parity_check": "Deletang et al.: ~52 % (chance)",
    "bucket_sort": "Deletang et al.: 91.9 % per-token",
    "addition": "Lee et al. 2023: reversed digits make addition learnable; Zhou et al. 2024: extrapolation needs index hints + FIRE",
}


def scale(smoke: bool) -> tuple[dict[str, int], dict[str, Any], tuple[int, ...]]:
    if smoke:
        return {"train": 200, "validation": 40, "test": 40}, {"steps": 10, "eval_every": 5, "eval_examples": 16}, (0,)
    return {"train": 5000, "validation": 500, "test": 500}, {"steps": 8000, "eval_every": 250, "eval_examples": 256}, (0, 1)


def length_split(task: str, smoke: bool, **params: Any) -> Any:
    train, test, base = TASKS[task]
    if smoke:
        train, test = (1, 8), (9, 10)
    sizes, _, _ = scale(smoke)
    return build("length", task=task, train=list(train), test=list(test), sizes=sizes, label=f"{task}-length", params={**base, **params})


def claims(smoke: bool) -> list[Claim]:
    sizes, train, seeds = scale(smoke)
    out = []
    for task, (lengths, tests, _) in TASKS.items():
        model = arm("transformer", f"{task}-length", length_split(task, smoke), seeds, cost=4, **train)
        out.append(Claim(
            "lengths", f"gap:{task}", f"A transformer that learned {task} fails beyond its train lengths", (model,),
            f"ID - OOD exact match ≥ {GAP_MIN}", PUBLISHED[task], gap, learned=LEARNED, previous=PREVIOUS[f"gap:{task}"],
            setup=f"Train lengths {lengths[0]}..{lengths[1]}, test {tests[0]}..{tests[1]}" + (" (operand digits; the sum written reversed)" if task == "addition" else "") + "."))
    rope = arm("rope", "reverse_string-length", length_split("reverse_string", smoke), seeds, cost=4, **train)
    others = tuple(arm(pos, "reverse_string-length", length_split("reverse_string", smoke), seeds[:1], cost=4, pos=pos, **train) for pos in ("alibi", "nope"))
    out.append(Claim(
        "lengths", "positions", "No positional encoding (RoPE, ALiBi, NoPE) lifts reverse_string beyond its train lengths", (rope, *others),
        f"every encoding that learned stays below OOD exact match {POSITIONS_OOD_MAX}",
        "Deletang et al.: no encoding solves reverse_string beyond the train lengths (Ruoss et al. 2023: randomized positions help)",
        positions, learned=LEARNED, losing=("alibi", "nope"), previous=PREVIOUS["positions"],
        setup="reverse_string, train 1..20, test 21..40; RoPE must learn; ALiBi and NoPE are losing arms (vacuous if they do not learn)."))
    answer = arm("answer only", "parity_check-length", length_split("parity_check", smoke), seeds, cost=4, **train)
    fine = arm("fine trace", "parity_check-length-fine", length_split("parity_check", smoke, trace="fine"), seeds, cost=5, **train)
    out.append(Claim(
        "lengths", "traces", "Fine traces (the running parity after every bit) lift parity beyond its train lengths", (answer, fine),
        f"OOD answer exact match of the fine-trace model ≥ the answer-only model's + {TRACE_MARGIN}",
        "Anil et al. 2022: scratchpads turn failed length generalization into success (pretrained LLMs, in context)",
        traces, learned=LEARNED, previous=PREVIOUS["traces"],
        setup="parity_check, train 1..20, test 21..40; the same inputs for both (a trace does not change the seed); the fine target "
              "is the running parity after every bit, `=>`, then the answer; the learned rule reads the whole target."))
    return out


def gap(figures: Figures) -> Decision:
    (model,) = figures.values()
    difference = None if model.id is None or model.ood is None else model.id - model.ood
    return Decision(difference is not None and difference >= GAP_MIN, f"ID {f3(model.id)}, OOD {f3(model.ood)}, gap {f3(difference)}")


def positions(figures: Figures) -> Decision:
    learned = {label: f.ood for label, f in figures.items() if f.learned}
    holds = bool(learned) and all(v < POSITIONS_OOD_MAX for v in learned.values())
    text = ", ".join(f"{label} {f3(f.ood)}" + ("" if f.learned else " (not learned)") for label, f in figures.items())
    return Decision(holds, f"OOD exact match: {text}")


def answer_match(result: Any, side: str) -> float | None:
    return result.mean(f"{side}_answer_exact_match") if result.mean(f"{side}_answer_exact_match") is not None else result.mean(f"{side}_exact_match")


def traces(figures: Figures) -> Decision:
    plain, fine = figures["answer only"], figures["fine trace"]
    a, f = plain.mean("ood_exact_match"), answer_match(fine, "ood")
    difference = None if a is None or f is None else f - a
    details = {"answer only: ID / OOD exact match": f"{f3(plain.id)} / {f3(a)}",
               "fine trace: ID answer / OOD answer / ID trace / OOD trace exact match":
                   f"{f3(answer_match(fine, 'id'))} / {f3(f)} / {f3(fine.mean('id_trace_exact_match'))} / {f3(fine.mean('ood_trace_exact_match'))}"}
    return Decision(difference is not None and difference >= TRACE_MARGIN, f"OOD answer EM: answer-only {f3(a)}, fine {f3(f)}, difference {f3(difference)}", details)
