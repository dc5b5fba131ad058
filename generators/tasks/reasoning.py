"""Reasoning-chain tasks with a hops knob: variable_binding, pointer_chasing.

``variable_binding`` (LEGO-style, Zhang et al. 2022): statements ``x = v ;`` (a literal
value), ``x = y ;`` (copy) and, with negation, ``x = - y ;`` ((k-1) - value of y, which for
values 0/1 is LEGO's sign flip), followed by ``? q``; the target is the value of q. Each
example holds one chain of ``hops`` copies from a literal to the queried variable and
``distractor_chains`` disjoint chains of the same length; every variable is assigned once
and the statements are shuffled, so their order does not reveal the chain. Variable names
are distinct tokens of lowercase letters (``a``..``z``, ``aa``..``zz``, ``aaa``..) drawn
from a pool of ``name_pool`` names; values are ``0``..``k-1`` (k = ``values``, kept in meta).

``pointer_chasing``: a table of ``table_size`` pairs ``key value`` over node labels (distinct
numbers drawn from 0..node_labels-1, listed in random order; the values form a random
function or permutation of the keys), then ``? s k``; the target is the node reached from
s after following k pointers. Example: ``3 7 7 3 5 7 ? 5 2`` -> 5 -> 7 -> 3 -> ``3``.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.task import Task, decimal_below
from gengap.generators.text import DIGITS, digit_tokens, join_tokens
from gengap.generators.traces import describe_running, running_states, trace_knob, with_traces

MAX_HOPS = 10_000
MAX_NAMES = 26 + 26**2 + 26**3  # every name of one to three letters
HOP_LEVELS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
TABLE_LEVELS = (2, 4, 8, 12, 16, 24, 32, 64, 128, 250)


def distinct_draws(rng: np.random.Generator, n: int, pool: int, k: int) -> np.ndarray:
    """(n, k) int64: each row k distinct values of 0..pool-1, a uniform random ordered draw.

    Floyd's sampling over the whole batch (k vectorized steps marking a flat seen-matrix,
    in chunks of rows) picks a uniform subset, and a row-wise shuffle orders it; when k is
    at least half the pool, shuffling the whole pool per row is cheaper.
    """
    if k > pool:
        raise ValueError(f"cannot draw {k} distinct values from {pool}")
    if 2 * k >= pool:
        everything = np.broadcast_to(np.arange(pool, dtype=np.int64), (n, pool))
        return np.ascontiguousarray(rng.permuted(everything, axis=1)[:, :k])
    out = np.empty((k, n), dtype=np.int64)
    chunk = max(1, (1 << 23) // pool)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        base = np.arange(m, dtype=np.int64) * pool
        seen = np.zeros(m * pool, dtype=bool)
        picks = out[:, start : start + m]
        for column, j in enumerate(range(pool - k, pool)):
            t = rng.integers(0, j + 1, size=m, dtype=np.int64)
            index = base + t
            taken = seen[index]
            t[taken] = j  # Floyd: if t was drawn already, take j (never drawn before)
            index[taken] = base[taken] + j
            seen[index] = True
            picks[column] = t
    return rng.permuted(out.T, axis=1)


def sample_range(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    """Per-example integers uniform over [lo, hi] (int64)."""
    if lo == hi:
        return np.full(n, lo, dtype=np.int64)
    return rng.integers(lo, hi + 1, size=n, dtype=np.int64)


def compact(ids: np.ndarray, empty: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ids with every ``empty`` entry removed (left-aligned) and their lengths."""
    keep = ids != empty
    lengths = keep.sum(axis=1, dtype=np.int64)
    out = np.zeros((len(ids), max(int(lengths.max()), 1)), dtype=ids.dtype)
    rank = np.cumsum(keep, axis=1) - 1
    rows = np.broadcast_to(np.arange(len(ids))[:, None], ids.shape)
    out[rows[keep], rank[keep]] = ids[keep]
    return out, lengths


def variable_name(i: int) -> str:
    """The i-th name: a..z, aa..zz, aaa.. (bijective base 26)."""
    letters = []
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        letters.append(chr(97 + r))
    return "".join(reversed(letters))


# -- variable_binding ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class VariableBindingParams(Params):
    """Chain length range, distractor chains, value range, negation and the name pool."""

    min_hops: int = knob(1, lo=1, hi=MAX_HOPS, doc="fewest copies between the literal and the queried variable")
    max_hops: int = knob(8, lo=1, hi=MAX_HOPS, doc="most copies between the literal and the queried variable")
    distractor_chains: int = knob(3, lo=0, hi=1000, doc="chains besides the queried one, each as long as it")
    values: int = knob(10, lo=2, hi=10, doc="number of values, written 0..values-1")
    negation: bool = knob(False, doc="copies may negate: x = - y means x = (values-1) - y")
    name_pool: int = knob(702, lo=2, hi=MAX_NAMES, doc="variable names are drawn from the first name_pool names")
    trace: str = trace_knob()

    def check_consistency(self) -> None:
        self.require(
            self.min_hops <= self.max_hops,
            f"parameter min_hops={self.min_hops} exceeds max_hops={self.max_hops}",
        )
        needed = (self.max_hops + 1) * (self.distractor_chains + 1)
        self.require(
            needed <= self.name_pool,
            f"parameter name_pool={self.name_pool} is below the {needed} variables "
            "(max_hops+1)*(distractor_chains+1) an example can need",
        )


@lru_cache(maxsize=16)
def _binding_vocab(pool: int) -> tuple[str, ...]:
    """Names 0..pool-1, then the digits, then = - ; ?."""
    return tuple(variable_name(i) for i in range(pool)) + tuple(DIGITS) + ("=", "-", ";", "?")


@register
class VariableBinding(Task[VariableBindingParams]):
    """Chains of variable assignments with distractor chains; query one variable's value."""

    name = "variable_binding"
    meta_keys = ("values",)
    family = "reasoning"
    description = "shuffled assignments x = v ; x = y ; (distractor chains, optional negation) -> value of the query"
    params_type = VariableBindingParams
    size_knob = "hops of the queried chain (min_hops..max_hops); input ~ 4*(hops+1)*(distractor_chains+1) tokens"
    level_feature = "hops"
    test_caps = {"min_hops": 6, "max_hops": 6, "distractor_chains": 3}
    trace_formats = {
        "coarse": "the chain from the query to its literal: the queried name, then the right-hand side of "
        "each assignment followed ('-' before a negated copy), ending with the literal",
        "fine": "the coarse chain, then the value of each variable on it from the one assigned the literal "
        "back to the query",
    }

    def with_size(self, lo: int, hi: int) -> VariableBindingParams:
        base = self.default_params()
        needed = (hi + 1) * (base.distractor_chains + 1)
        return base.replace(min_hops=lo, max_hops=hi, name_pool=max(base.name_pool, needed))

    def levels(self) -> dict[int, VariableBindingParams]:
        levels = {}
        for k, hi in enumerate(HOP_LEVELS, start=1):
            lo = HOP_LEVELS[k - 2] + 1 if k > 1 else 1
            levels[k] = VariableBindingParams(min_hops=lo, max_hops=hi)
        return levels

    def possible_answer(self, example: Mapping[str, Any], answer: str) -> bool:
        """Answers are 0..values-1 (meta.values)."""
        return decimal_below(answer, self.meta(example, "values"))

    def generate(self, rng: np.random.Generator, n: int, params: VariableBindingParams) -> Batch:
        pool, k = params.name_pool, params.values
        digit0, equals, minus, semicolon, query = pool, pool + 10, pool + 11, pool + 12, pool + 13
        empty = -1
        hops = sample_range(rng, n, params.min_hops, params.max_hops)
        chains, links = params.distractor_chains + 1, params.max_hops + 1
        names = distinct_draws(rng, n, pool, chains * links).reshape(n, chains, links)
        roots = rng.integers(0, k, size=(n, chains), dtype=np.int64)
        negated = np.zeros((n, chains, links), dtype=bool)
        if params.negation:
            negated[:, :, 1:] = rng.integers(0, 2, size=(n, chains, links - 1), dtype=np.uint8).astype(bool)
        flips = np.cumsum(negated, axis=2) & 1
        values = np.where(flips == 1, k - 1 - roots[:, :, None], roots[:, :, None])
        rows = np.arange(n)
        answers = values[rows, 0, hops]
        # statements (n, chains, links, slots): name = [-] source ; (the - slot only with negation)
        slots = 5 if params.negation else 4
        statements = np.empty((n, chains, links, slots), dtype=np.int32)
        statements[..., 0] = names
        statements[..., 1] = equals
        if params.negation:
            statements[..., 2] = np.where(negated, minus, empty)
        statements[:, :, 0, -2] = digit0 + roots
        statements[:, :, 1:, -2] = names[:, :, :-1]
        statements[..., -1] = semicolon
        # shuffle each example's statements; unused links (past its hops) sort last
        keys = np.where(np.arange(links)[None, None, :] > hops[:, None, None], 2.0, rng.random((n, chains, links)))
        order = np.argsort(keys.reshape(n, chains * links), axis=1)
        shuffled = np.take_along_axis(statements.reshape(n, chains * links, slots), order[:, :, None], axis=1)
        ids = np.zeros((n, chains * links * slots + 2), dtype=np.int32)
        ids[:, :-2] = shuffled.reshape(n, -1)
        end = slots * chains * (hops + 1)
        ids[rows, end] = query
        ids[rows, end + 1] = names[rows, 0, hops]
        lengths = end + 2
        if params.negation:  # drop the empty - slots
            ids[np.arange(ids.shape[1])[None, :] >= lengths[:, None]] = empty
            ids, lengths = compact(ids, empty)
        inputs = join_tokens(ids, lengths, _binding_vocab(pool))
        targets = digit_tokens(answers)
        features = {"hops": hops, "distractors": (chains - 1) * (hops + 1)}
        return with_traces(self, Batch(inputs, targets, features, meta={"values": k}), params.trace)

    def solve(self, example: Mapping[str, Any]) -> str:
        k, chain = self._chain(example)
        flips, literal = sum(negate for _, negate, _ in chain), int(chain[-1][2])
        return str(k - 1 - literal if flips % 2 else literal)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        k, chain = self._chain(example)
        out = [chain[0][0]]
        for _, negate, source in chain:
            out += ["-", source] if negate else [source]
        if fmt == "fine":
            value = int(chain[-1][2])
            for _, negate, _ in reversed(chain):
                value = k - 1 - value if negate else value
                out.append(str(value))
        return out

    def trace_steps(self, trace: list[str], fmt: str, example: Mapping[str, Any] | None = None) -> list[list[str]]:
        """One step per token, a '-' (a negated copy) with the token after it."""
        steps: list[list[str]] = []
        for token in trace:
            if steps and steps[-1] == ["-"]:
                steps[-1].append(token)
            else:
                steps.append([token])
        return steps

    def verify_trace(self, example: Mapping[str, Any], trace: list[str], fmt: str) -> bool:
        """The chain must start at the query and follow assignments of the input ('-' exactly
        where the copy negates) to a literal; fine values must go back from that literal, each
        the previous written value, negated where the link negates."""
        k, sources, asked = self._statements(example)
        if not trace or trace[0] != asked:
            return False
        links: list[bool] = []
        current, at = asked, 1
        while current not in [str(v) for v in range(k)]:
            negate = at < len(trace) and trace[at] == "-"
            at += negate
            if at >= len(trace) or sources.get(current) != (negate, trace[at]):
                return False
            links.append(negate)
            current, at = trace[at], at + 1
        values = trace[at:]
        if fmt == "coarse":
            return not values
        if len(values) != len(links):
            return False
        previous = current
        for negate, written in zip(reversed(links), values):
            if written != str(k - 1 - int(previous) if negate else int(previous)):
                return False
            previous = written
        return True

    def _chain(self, example: Mapping[str, Any]) -> tuple[int, list[tuple[str, bool, str]]]:
        """The number of values and the assignments followed from the query to a literal:
        (variable, negated, source) each, the last source a literal."""
        k, sources, asked = self._statements(example)
        literals = [str(v) for v in range(k)]
        chain = []
        current = asked
        for _ in range(len(sources) + 1):
            if current not in sources:
                raise ValueError(f"variable {current} is never assigned")
            negate, source = sources[current]
            chain.append((current, negate, source))
            if source in literals:
                return k, chain
            current = source
        raise ValueError("assignments form a cycle")

    def _statements(self, example: Mapping[str, Any]) -> tuple[int, dict[str, tuple[bool, str]], str]:
        """The number of values, each variable's (negated, source) and the queried variable."""
        k = self.meta(example, "values")
        if not isinstance(k, int) or not 2 <= k <= 10:
            raise ValueError("meta.values must be an integer in 2..10")
        tokens = example["input"].split()
        if len(tokens) < 2 or tokens[-2] != "?":
            raise ValueError("input must end with '? name'")
        body, asked = tokens[:-2], tokens[-1]
        if not body or body[-1] != ";":
            raise ValueError("statements must end with ';'")
        literals = [str(v) for v in range(k)]
        sources: dict[str, tuple[bool, str]] = {}
        statement: list[str] = []
        for token in body:
            if token != ";":
                statement.append(token)
                continue
            negate = len(statement) == 4 and statement[2] == "-"
            if len(statement) != 3 + negate or statement[1] != "=":
                raise ValueError(f"malformed statement {' '.join(statement)!r}")
            target, source = statement[0], statement[-1]
            if not (target.isalpha() and target.islower() and target.isascii()):
                raise ValueError(f"bad variable name {target!r}")
            if target in sources:
                raise ValueError(f"variable {target} is assigned twice")
            if negate and source in literals:
                raise ValueError("only copies may be negated")
            sources[target] = (negate, source)
            statement = []
        return k, sources, asked


# -- pointer_chasing -------------------------------------------------------------------

MAPPINGS = ("function", "permutation")


@dataclasses.dataclass(frozen=True)
class PointerChasingParams(Params):
    """Table size range, hop range, kind of mapping and the node label pool."""

    min_table_size: int = knob(4, lo=1, hi=50_000, doc="fewest key-value pairs in the table")
    max_table_size: int = knob(16, lo=1, hi=50_000, doc="most key-value pairs in the table")
    min_hops: int = knob(1, lo=1, hi=MAX_HOPS, doc="fewest pointers to follow")
    max_hops: int = knob(8, lo=1, hi=MAX_HOPS, doc="most pointers to follow")
    mapping: str = knob(
        "function", choices=MAPPINGS, doc="values form a random function or a permutation of the keys"
    )
    node_labels: int = knob(
        1000, lo=1, hi=50_000, doc="node labels are distinct numbers drawn from 0..node_labels-1"
    )
    trace: str = trace_knob()

    def check_consistency(self) -> None:
        for lo_name, hi_name in (("min_table_size", "max_table_size"), ("min_hops", "max_hops")):
            lo, hi = getattr(self, lo_name), getattr(self, hi_name)
            self.require(lo <= hi, f"parameter {lo_name}={lo} exceeds {hi_name}={hi}")
        self.require(
            self.max_table_size <= self.node_labels,
            f"parameter node_labels={self.node_labels} is below max_table_size={self.max_table_size}",
        )


@lru_cache(maxsize=16)
def _number_vocab(size: int) -> tuple[str, ...]:
    """Numbers 0..size-1, then ?."""
    return tuple(str(i) for i in range(size)) + ("?",)


@register
class PointerChasing(Task[PointerChasingParams]):
    """Follow k pointers through a key-value table given in the input."""

    name = "pointer_chasing"
    family = "reasoning"
    description = "table of key value pairs (random function or permutation), '? s k' -> node reached after k hops"
    params_type = PointerChasingParams
    size_knob = "pairs in the table (min_table_size..max_table_size); input = 2*table_size + 3 tokens"
    level_feature = "hops"
    trace_formats = describe_running("the node reached", "hop")

    def with_size(self, lo: int, hi: int) -> PointerChasingParams:
        base = self.default_params()
        return base.replace(min_table_size=lo, max_table_size=hi, node_labels=max(base.node_labels, hi))

    def levels(self) -> dict[int, PointerChasingParams]:
        levels = {}
        for k, (table, hops) in enumerate(zip(TABLE_LEVELS, HOP_LEVELS), start=1):
            lo_table = TABLE_LEVELS[k - 2] + 1 if k > 1 else 1
            lo_hops = HOP_LEVELS[k - 2] + 1 if k > 1 else 1
            levels[k] = PointerChasingParams(
                min_table_size=lo_table, max_table_size=table, min_hops=lo_hops, max_hops=hops
            )
        return levels

    def generate(self, rng: np.random.Generator, n: int, params: PointerChasingParams) -> Batch:
        sizes = sample_range(rng, n, params.min_table_size, params.max_table_size)
        width = params.max_table_size
        labels = distinct_draws(rng, n, params.node_labels, width)
        beyond = np.arange(width)[None, :] >= sizes[:, None]
        if params.mapping == "function":
            pointers = (rng.random((n, width)) * sizes[:, None]).astype(np.int64)
        else:
            keys = rng.random((n, width))
            keys[beyond] = 2.0
            pointers = np.argsort(keys, axis=1)
        pointers[beyond] = 0
        hops = sample_range(rng, n, params.min_hops, params.max_hops)
        start = (rng.random(n) * sizes).astype(np.int64)
        rows = np.arange(n)
        current = start.copy()
        for step in range(params.max_hops):
            moving = step < hops
            current[moving] = pointers[rows[moving], current[moving]]
        vocab_size = max(params.node_labels, params.max_hops + 1)
        ids = np.zeros((n, 2 * width + 3), dtype=np.int64)
        ids[:, 0 : 2 * width : 2] = labels
        ids[:, 1 : 2 * width : 2] = np.take_along_axis(labels, pointers, axis=1)
        ids[rows, 2 * sizes] = vocab_size
        ids[rows, 2 * sizes + 1] = labels[rows, start]
        ids[rows, 2 * sizes + 2] = hops
        inputs = join_tokens(ids, 2 * sizes + 3, _number_vocab(vocab_size))
        targets = labels[rows, current].astype(f"S{len(str(params.node_labels - 1))}")
        return with_traces(self, Batch(inputs, targets, {"hops": hops, "table_size": sizes}), params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        pointer, start, hops = _pointer_table(example)
        return running_states(start, range(hops), lambda node, _: pointer[node], fmt)

    def solve(self, example: Mapping[str, Any]) -> str:
        pointer, start, hops = _pointer_table(example)
        path = [start]
        seen = {start: 0}
        while len(path) <= hops:
            node = pointer[path[-1]]
            if node not in pointer:
                raise ValueError(f"node {node} has no pointer")
            if node in seen:  # entered a cycle: skip the remaining whole turns
                first = seen[node]
                return path[first + (hops - first) % (len(path) - first)]
            seen[node] = len(path)
            path.append(node)
        return path[hops]


def _pointer_table(example: Mapping[str, Any]) -> tuple[dict[str, str], str, int]:
    """The pointer table, start node and hops of a pointer_chasing record."""
    tokens = example["input"].split()
    if len(tokens) < 5 or tokens[-3] != "?":
        raise ValueError("input must be a table followed by '? start hops'")
    table, start, hops_text = tokens[:-3], tokens[-2], tokens[-1]
    if len(table) % 2:
        raise ValueError("the table must hold key value pairs")
    pointer: dict[str, str] = {}
    for key, value in zip(table[0::2], table[1::2]):
        if key in pointer:
            raise ValueError(f"key {key} occurs twice")
        pointer[key] = value
    if not (hops_text.isdigit() and hops_text.isascii()):
        raise ValueError("hops must be a number")
    if start not in pointer:
        raise ValueError(f"start node {start} is not in the table")
    return pointer, start, int(hops_text)
