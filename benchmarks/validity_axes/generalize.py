"""What lets tiny transformers generalize further: an inductive trace format (Abbe et al. 2024),
randomized positions (Ruoss et al. 2023) and abacus embeddings (McLeish et al. 2024), each set
against the models of the lengths axis trained on the same splits the same way.

Set-up (fixed before any run): the lengths axis's sampled length splits, sizes, learned rule and
step cap (validity_axes.lengths: train 1..20, test 21..40; addition 1..5 digits, test 6..10;
a tiny transformer 2 x 64, autoregressive, learned at ID >= 0.95 at two evaluations then 25 %
more steps, cap 8,000 steps), so its runs (answer-only and fine-trace parity; RoPE and NoPE
reverse_string; RoPE parity) are reused as they are. New runs: the inductive-trace parity model
(seeds 0 and 1, as every arm since the eighth edition), randomized positions on parity and
reverse_string, NoPE on parity (a losing arm as in the lengths axis), and
abacus and RoPE addition with every number written least significant digit first (seeds 0 and 1).

Fifth edition (fixed before its runs): the cap is the lengths axis's 8,000 steps, was 4,000 (the
randomized reverse_string arm had ID 0.53 at 4,000); the abacus claim's addition writes operands
and sum least significant digit first (``format: little_endian``), as McLeish et al. do, and its
RoPE arm is trained on that split too: in the fourth edition only the sum was reversed, so the
abacus places of the operands counted from their most significant digit, and digits of equal
significance got different places (the abacus model reached ID 0.31). Rules unchanged.

Sixth edition (fixed before its runs): the reverse_string arms that had not learned at 8,000 steps,
randomized positions (ID 0.759, train exact match rising: 0.70 at 5,250, 0.86 at 7,250) and
NoPE (0.271), get a cap of 16,000 steps (their learning-rate schedule spans it); the RoPE arms,
learned at 5,500 and 6,250, keep their runs. Every arm still stops 25 % after it learned, so
the cap only bounds arms that have not. Ruoss et al. evaluate in Deletang et al.'s set-up (there
1,000,000 steps of batch 128); a randomized arm still not learned at 16,000 goes to the GPU protocol. Rules unchanged.

Eighth edition (fixed before its runs): every arm has seeds 0 and 1. The arms that had seed 0
only get seed 1: the inductive-trace parity model, reverse_string's randomized and NoPE models
and parity's NoPE model (the randomized claim's reverse_string half rested on one run). Seed 0
keeps its runs. Rules unchanged.
"""

from __future__ import annotations

from typing import Any

from validity_axes.common import PREVIOUS, LEARNED, arm, f3
from validity_axes.lengths import answer_match, length_split, scale
from validity_engine import Claim, Decision, Figures

INDUCTIVE_MARGIN = 0.1  # inductive OOD answer exact match above both other parity models' by at least this
LONG_CAP = 16000  # the reverse_string randomized and NoPE arms (sixth edition)
RANDOMIZED_MARGIN = 0.05  # randomized positions: length score above RoPE's and NoPE's by at least this, on each task
ABACUS_MARGIN = 0.2  # abacus addition: OOD exact match above RoPE's by at least this
POSITION_TASKS = ("reverse_string", "parity_check")
ENCODINGS = ("randomized", "rope", "nope")


def claims(smoke: bool) -> list[Claim]:
    _, train, seeds = scale(smoke)
    answer = arm("answer only", "parity_check-length", length_split("parity_check", smoke), seeds, cost=4, **train)
    fine = arm("fine trace", "parity_check-length-fine", length_split("parity_check", smoke, trace="fine"), seeds, cost=5, **train)
    inductive = arm("inductive trace", "parity_check-length-inductive", length_split("parity_check", smoke, trace="inductive"), seeds, cost=8, **train)
    out = [Claim(
        "generalize", "inductive", "An inductive trace lifts parity beyond its train lengths where the answer-only and fine-trace models do not",
        (answer, fine, inductive),
        f"OOD answer exact match of the inductive-trace model ≥ the larger of the answer-only and fine-trace models' + {INDUCTIVE_MARGIN}",
        "Abbe et al. 2024: the inductive scratchpad extrapolates where a plain scratchpad does not (their report: up to 6x the train lengths on parity and addition)",
        inductive_wins, learned=LEARNED, losing=("answer only", "fine trace"), previous=PREVIOUS["inductive"],
        setup="parity_check, train 1..20, test 21..40, the same inputs for the three; the inductive target is, per bit, `#`, the bit "
              "read and the parity after it, then `=>` and the answer; the fine target the running parities; the learned rule reads the "
              "whole target; the answer-only and fine-trace models are the lengths axis's runs (losing arms).")]
    position_arms = []
    for task in POSITION_TASKS:
        split = length_split(task, smoke)
        for pos in ENCODINGS:
            settings = train if pos == "rope" else {**train, "pos": pos}
            if task == "reverse_string" and pos != "rope" and not smoke:
                settings = {**settings, "steps": LONG_CAP}
            position_arms.append(arm(f"{task} {pos}", f"{task}-length", split, seeds, cost=4, **settings))  # seeds 0 and 1 (eighth edition)
    out.append(Claim(
        "generalize", "randomized", "Randomized positions raise the length score of reverse_string and parity over RoPE and NoPE",
        tuple(position_arms),
        f"on each task, the randomized model's length score (best learned seed) ≥ the larger of RoPE's and NoPE's + {RANDOMIZED_MARGIN}",
        "Ruoss et al. 2023: randomized positional encodings raise test accuracy on the Deletang tasks by 12.0 % on average (up to 43.5 %)",
        randomized_wins, learned=LEARNED, losing=tuple(f"{t} {p}" for t in POSITION_TASKS for p in ("rope", "nope")), previous=PREVIOUS["randomized"],
        setup="reverse_string and parity_check, train 1..20, test 21..40, autoregressive (the lengths axis's set-up); randomized "
              "positions sampled from 0..2L-1 in training; RoPE and NoPE are losing arms (vacuous if they do not learn)."))
    addition = length_split("addition", smoke, format="little_endian")
    rope = arm("rope", "addition-length-little_endian", addition, seeds, cost=4, **train)
    abacus = arm("abacus", "addition-length-little_endian", addition, seeds, cost=4, pos="abacus", **train)
    out.append(Claim(
        "generalize", "abacus", "Abacus embeddings let a tiny transformer add longer numbers than it was trained on, better than RoPE",
        (rope, abacus), f"OOD exact match of the abacus model ≥ RoPE's + {ABACUS_MARGIN}",
        "McLeish et al. 2024: trained on numbers of up to 20 digits, abacus embeddings reach 99 % exact match on 100-digit addition",
        abacus_wins, learned=LEARNED, losing=("rope",), previous=PREVIOUS["abacus"],
        setup="addition, operands of 1..5 digits in training, 6..10 in test, every number written least significant digit first "
              "(format little_endian); abacus places count each number's digits from the first written (its units digit), with a "
              "random offset 0..100 in training; RoPE on the same split is a losing arm."))
    return out


def inductive_wins(figures: Figures) -> Decision:
    plain, fine, inductive = figures["answer only"], figures["fine trace"], figures["inductive trace"]
    a, f, i = plain.mean("ood_exact_match"), answer_match(fine, "ood"), answer_match(inductive, "ood")
    best = None if a is None or f is None else max(a, f)
    difference = None if best is None or i is None else i - best
    details = {label: f"{f3(answer_match(r, 'id'))} / {f3(answer_match(r, 'ood'))}"
               for label, r in (("answer only: ID / OOD answer exact match", plain), ("fine trace: ID / OOD answer exact match", fine),
                                ("inductive trace: ID / OOD answer exact match", inductive))}
    details["inductive trace: ID / OOD trace exact match"] = f"{f3(inductive.mean('id_trace_exact_match'))} / {f3(inductive.mean('ood_trace_exact_match'))}"
    return Decision(difference is not None and difference >= INDUCTIVE_MARGIN,
                    f"OOD answer EM: answer-only {f3(a)}, fine {f3(f)}, inductive {f3(i)}, margin {f3(difference)}", details)


def _task_row(figures: Figures, task: str) -> tuple[bool, str]:
    scores = {pos: figures[f"{task} {pos}"].score for pos in ENCODINGS}
    others = [scores["rope"], scores["nope"]]
    wins = scores["randomized"] is not None and None not in others and scores["randomized"] >= max(others) + RANDOMIZED_MARGIN  # type: ignore[type-var]
    text = ", ".join(f"{pos} {f3(scores[pos])}" + ("" if figures[f"{task} {pos}"].learned else " (not learned)") for pos in ENCODINGS)
    return wins, f"{task}: {text}"


def randomized_wins(figures: Figures) -> Decision:
    rows = [_task_row(figures, task) for task in POSITION_TASKS]
    details: dict[str, Any] = {f"{task}: OOD exact match ({', '.join(ENCODINGS)})": " / ".join(f3(figures[f"{task} {pos}"].ood) for pos in ENCODINGS)
                               for task in POSITION_TASKS}
    return Decision(all(wins for wins, _ in rows), "length score: " + "; ".join(text for _, text in rows), details)


def abacus_wins(figures: Figures) -> Decision:
    rope, abacus = figures["rope"], figures["abacus"]
    difference = None if rope.ood is None or abacus.ood is None else abacus.ood - rope.ood
    details = {"length score: rope / abacus": f"{f3(rope.score)} / {f3(abacus.score)}"}
    return Decision(difference is not None and difference >= ABACUS_MARGIN,
                    f"OOD exact match: rope {f3(rope.ood)}, abacus {f3(abacus.ood)} (ID {f3(abacus.id)}), difference {f3(difference)}", details)
