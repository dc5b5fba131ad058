"""SequenceTask: levels and input-space sizes derived from the params type, checked by hand."""

from __future__ import annotations

from gengap.generators import get_task, task_names
from gengap.generators.sequences import SequenceTask

LENGTH_TASKS = {
    "parity_check", "even_pairs", "modular_arithmetic", "cycle_navigation", "reverse_string", "stack_manipulation",
    "modular_arithmetic_brackets", "solve_equation", "duplicate_string", "missing_duplicate_string", "odds_first",
    "binary_addition", "binary_multiplication", "compute_sqrt", "bucket_sort", "prefix_sums",
}  # fmt: skip
BANDS = [(1, 5), (6, 10), (11, 20), (21, 40), (41, 60), (61, 80), (81, 100), (101, 200), (201, 350), (351, 500)]


def test_the_sixteen_length_tasks_are_sequence_tasks() -> None:
    assert {n for n in task_names() if isinstance(get_task(n), SequenceTask)} == LENGTH_TASKS


def bands(name: str) -> list[tuple[int, int]]:
    return [(p.min_length, p.max_length) for _, p in sorted(get_task(name).levels().items())]


def test_levels_by_hand() -> None:
    assert bands("parity_check") == BANDS
    assert bands("solve_equation")[:2] == [(3, 5), (6, 10)]  # shortest = 3
    odd = bands("modular_arithmetic")  # odd lengths only, each band moved inward
    assert odd[:4] == [(1, 5), (7, 9), (11, 19), (21, 39)] and odd[-1] == (351, 499)
    assert all(lo % 2 and hi % 2 for lo, hi in odd)
    assert get_task("reverse_string").level(3).alphabet_size == 2  # other fields keep their defaults


def test_input_space_sizes_by_hand() -> None:
    def size(name: str, **values: int) -> int | None:
        task = get_task(name)
        return task.input_space_size(task.make_params(values))

    assert size("parity_check", min_length=1, max_length=3) == 2 + 4 + 8
    assert size("prefix_sums", min_length=2, max_length=2) == 4
    assert size("cycle_navigation", min_length=1, max_length=2) == 3 + 9  # L S R
    assert size("reverse_string", min_length=2, max_length=2, alphabet_size=3) == 9
    assert size("bucket_sort", min_length=1, max_length=2, alphabet_size=4) == 4 + 16
