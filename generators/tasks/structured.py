"""Structured tasks: listops, prefix_sums, shortest_path, graph_connectivity.

``listops`` (Nangia & Bowman 2018; the Long Range Arena variant of Tay et al. 2021):
a nested expression over the digits 0..9, one token per operator-with-bracket, digit and
closing bracket, e.g. ``[MAX 2 9 [MIN 4 7 ] 0 ]``; the target is its value, one digit.
Operators: ``[MAX`` maximum, ``[MIN`` minimum, ``[SM`` sum mod 10 and ``[MED`` median,
where the median of an even number of arguments is the mean of the two middle values
rounded down (``int(np.median(...))`` as in the LRA generator), e.g. MED 1 4 = 2.
Every operator takes 2..max_args arguments; the whole input is one operator expression.
Inputs have exactly the drawn length (uniform over the lengths the depth and argument
limits allow): a vectorized sampler writes all rows token by token, keeping the tokens
left between the fewest and the most that can still close the expression, and leaning
towards opening operators while many tokens per free argument slot remain (so long
inputs nest deeply, as in LRA, where most inputs reach the depth limit).

``prefix_sums`` (the easy-to-hard anchor of Schwarzschild et al. 2021): an n-bit string
-> its running parity, bit i of the target being the XOR of input bits 0..i (n bits out).

``shortest_path`` and ``graph_connectivity``: a random simple undirected graph written as
its edge list, then a query: ``u v , u v , ... , u v ? s t``. Nodes are decimal integers,
one token each; edges are separated by ``,``, each printed in a random orientation and
the list in random order; ``?`` is followed by the two query nodes. Nodes that touch no
edge do not appear (query nodes always touch an edge). An input with E edges has
3E + 2 tokens. Graphs are uniform among those with V nodes and E edges, where E is drawn
from [min_edges, max_edges] and V = max(ceil(E / edges_per_node), fewest nodes holding E
edges). shortest_path asks for a shortest path from s to t (s != t, connected) as its
node sequence; any shortest path is accepted by ``check``, and the generated target is
the lexicographically smallest (by node number) one. graph_connectivity asks ``yes`` /
``no``: are s and t connected; about half the queries are connected (``no`` is
impossible when every edge lies in one component, and those examples say ``yes``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import deque
from typing import Any, Mapping

import numpy as np

from gengap.generators.batch import Batch, concat
from gengap.generators.params import Params, knob
from gengap.generators.registry import register
from gengap.generators.sequences import (
    LEVEL_BOUNDS,
    MAX_LENGTH,
    LengthParams,
    SequenceTask,
    parse_symbols,
    past_length,
    random_bits,
    sample_lengths,
)
from gengap.generators.task import Task
from gengap.generators.text import DIGITS, ZERO, digit_tokens, join_chars, join_tokens
from gengap.generators.traces import inductive_states, trace_knob, with_traces

# ---------------------------------------------------------------------------------------
# token joining for multi-byte vocabularies
# ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _empty_batch(features: tuple[str, ...]) -> Batch:
    """A batch of no examples with the given feature columns."""
    empty = np.zeros(0, dtype="S1")
    return Batch(empty, empty.copy(), {name: np.zeros(0, dtype=np.int64) for name in features})


# ---------------------------------------------------------------------------------------
# prefix_sums
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PrefixSumsParams(LengthParams):
    """Input length range and the trace format (inductive)."""

    trace: str = trace_knob("inductive")


@register
class PrefixSums(SequenceTask[PrefixSumsParams]):
    """n-bit string -> its prefix sums mod 2 (running parity), n bits.

    Feature ``ones``: the number of 1s in the input (= parity flips in the target).
    """

    name = "prefix_sums"
    family = "structured"
    description = "bit string -> its running parity (prefix sums mod 2), one bit per input bit"
    params_type = PrefixSumsParams
    trace_formats = {"inductive": "per bit, a state: '#', the bit read, then the parity of the bits read so far"}
    alphabet = 2

    def generate(self, rng: np.random.Generator, n: int, params: PrefixSumsParams) -> Batch:
        lengths = sample_lengths(rng, n, params)
        bits = random_bits(rng, n, params.max_length)
        if params.min_length != params.max_length:
            bits[past_length(lengths, params.max_length)] = 0
        # uint8 wraps at 256, an even number, so the low bit of the running sum is exact
        parity = np.cumsum(bits, axis=1, dtype=np.uint8)
        parity &= 1
        ones = np.count_nonzero(bits, axis=1).astype(np.int64)
        bits += ZERO
        parity += ZERO
        return with_traces(self, Batch(join_chars(bits, lengths), join_chars(parity, lengths), {"ones": ones}), params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        bits = parse_symbols(example["input"], "01")
        return inductive_states(0, bits, lambda parity, bit: parity ^ bit, example["input"].split())

    def measure(self, example: Mapping[str, Any]) -> dict[str, int]:
        return {"ones": example["input"].split().count("1")}

    def solve(self, example: Mapping[str, Any]) -> str:
        running = 0
        out = []
        for bit in parse_symbols(example["input"], "01"):
            running ^= bit
            out.append("1" if running else "0")
        return " ".join(out)


# ---------------------------------------------------------------------------------------
# listops
# ---------------------------------------------------------------------------------------

LISTOPS_OPERATORS = ("[MAX", "[MIN", "[MED", "[SM")
LISTOPS_CLOSE = "]"
LISTOPS_VOCAB = tuple(DIGITS) + LISTOPS_OPERATORS + (LISTOPS_CLOSE,)
_FIRST_OPERATOR, _CLOSE_ID = 10, 14
MIN_LISTOPS_LENGTH = 4  # [OP d d ]
MAX_LISTOPS_DEPTH = 20
_ATTEMPTS = 1000  # sampling rounds before listops gives up (each round replaces failed rows)
_SPREAD = 6.0  # per-slot budget at which opening a new operator becomes the likeliest move

Spans = list[tuple[int, int]]  # integer sets as progressions lo, lo + step, ..., hi


def _step(max_args: int) -> int:
    """Spacing of the possible token counts: with exactly two arguments per operator every
    expression has 3 * operators + 1 tokens, so sizes are sets of progressions with step 3."""
    return 3 if max_args == 2 else 1


def _merge(spans: Spans, cap: int, step: int) -> Spans:
    """Sorted, non-overlapping progressions (of the given step) covering the given ones,
    cut at cap; progressions of one residue mod step that touch are joined."""
    out: Spans = []
    for lo, hi in sorted(spans, key=lambda span: (span[0] % step, span[0])):
        hi = min(hi, cap - (cap - lo) % step)
        if lo > hi:
            continue
        if out and out[-1][0] % step == lo % step and lo <= out[-1][1] + step:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return sorted(out)


def _plus(a: Spans, b: Spans, cap: int, step: int) -> Spans:
    """Minkowski sum of two sets of progressions, up to cap."""
    return _merge([(p + r, q + s) for p, q in a for r, s in b], cap, step)


@functools.lru_cache(maxsize=256)
def _argument_sizes(max_depth: int, max_args: int, cap: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Entry j: token counts (progressions, up to cap) of an argument nested at most j deep:
    a digit (1 token) or an operator expression of depth <= j."""
    step = _step(max_args)
    sizes: list[Spans] = [[(1, 1)]]
    for _ in range(max_depth):
        children, sums, found = sizes[-1], sizes[-1], []
        for _ in range(2, max_args + 1):
            sums = _plus(sums, children, cap, step)
            found += sums
        sizes.append(_merge([(1, 1)] + [(lo + 2, hi + 2) for lo, hi in found], cap, step))
    return tuple(tuple(s) for s in sizes)


def expression_sizes(max_depth: int, max_args: int, cap: int) -> tuple[tuple[int, int, int], ...]:
    """Token counts of listops expressions whose operators take 2..max_args arguments and
    nest at most max_depth deep, up to cap, as progressions (lo, hi, step)."""
    # an argument is a digit (1 token) or an expression (4 tokens or more): drop the 1
    step = _step(max_args)
    spans = [(lo + step if lo == 1 else lo, hi) for lo, hi in _argument_sizes(max_depth, max_args, cap)[-1]]
    return tuple((lo, hi, step) for lo, hi in spans if lo <= hi)


@functools.lru_cache(maxsize=64)
def _completions(max_depth: int, max_args: int, cap: int) -> np.ndarray:
    """Boolean table [level, args, r]: whether an open operator at that nesting level with
    that many arguments so far can be completed (more arguments, then ``]``) in exactly r
    tokens."""
    step = _step(max_args)
    sizes = _argument_sizes(max_depth, max_args, cap)
    table = np.zeros((max_depth + 1, max_args + 1, cap + 1), dtype=bool)
    for level in range(1, max_depth + 1):
        children = list(sizes[max_depth - level])
        sums: Spans = [(0, 0)]
        by_count = [sums]
        for _ in range(max_args):
            sums = _plus(sums, children, cap, step)
            by_count.append(sums)
        for args in range(max_args + 1):
            for k in range(max(0, 2 - args), max_args - args + 1):
                for lo, hi in by_count[k]:
                    table[level, args, lo + 1 : min(hi + 1, cap) + 1 : step] = True
    table.flags.writeable = False
    return table


@dataclasses.dataclass(frozen=True)
class ListOpsParams(LengthParams):
    """Input length range, nesting depth and arguments per operator."""

    min_length: int = knob(4, lo=MIN_LISTOPS_LENGTH, hi=MAX_LENGTH, doc="shortest input, in tokens")
    max_length: int = knob(40, lo=MIN_LISTOPS_LENGTH, hi=MAX_LENGTH, doc="longest input, in tokens")
    max_depth: int = knob(10, lo=1, hi=MAX_LISTOPS_DEPTH, doc="deepest nesting of operators (1: one flat list)")
    max_args: int = knob(5, lo=2, hi=10, doc="most arguments of an operator (each has at least 2)")
    trace: str = trace_knob()

    def check_consistency(self) -> None:
        super().check_consistency()
        self.require(
            bool(self.lengths()),
            f"no listops expression with max_depth={self.max_depth} and max_args={self.max_args} "
            f"has {self.min_length}..{self.max_length} tokens",
        )

    def lengths(self) -> list[tuple[int, int, int]]:
        """The input lengths these parameters allow, as progressions (lo, hi, step)."""
        spans = []
        for lo, hi, step in expression_sizes(self.max_depth, self.max_args, self.max_length):
            if lo < self.min_length:
                lo += -(-(self.min_length - lo) // step) * step
            if lo <= hi:
                spans.append((lo, hi, step))
        return spans


_LISTOPS_DEPTHS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)


def _evaluate(values: np.ndarray, counts: np.ndarray, ops: np.ndarray) -> np.ndarray:
    """Values of operators (ids 0..3 = MAX MIN MED SM) over rows of argument values
    (k, max_args) whose entries past counts[i] hold the padding 10."""
    columns = np.ascontiguousarray(values.T)
    smallest = columns.min(axis=0)
    largest = np.where(columns < 10, columns, 0).max(axis=0)
    total = columns.sum(axis=0, dtype=np.int64) % 10  # each padding 10 adds 0 mod 10
    result = np.choose(ops, (largest, smallest, largest, total)).astype(np.int64)
    median = np.flatnonzero(ops == 2)
    if median.size:
        ordered = np.sort(values[median], axis=1).astype(np.int64)
        rows, k = np.arange(median.size), counts[median]
        result[median] = (ordered[rows, (k - 1) // 2] + ordered[rows, k // 2]) // 2
    return result


@dataclasses.dataclass
class _Grown:
    tokens: np.ndarray  # (m, width) token ids
    values: np.ndarray
    ok: np.ndarray


@functools.lru_cache(maxsize=64)
def _move_tables(max_depth: int, max_args: int) -> dict[str, Any]:
    """Per state (level * (max_args + 1) + args of the innermost open operator) and move
    (0 digit, 1 open an operator, 2 close, 3 none): what the move needs and changes.

    ``low``/``high`` (3, state): a move is allowed when (tokens left) - need >= low and
    cap - (tokens left) >= high; ``need``/``cap``/``free`` (state * 4 + move): the changes.
    Subtree sizes are capped at 2**20 (beyond any input length), which keeps cap an
    underestimate only where it exceeds every length.
    """
    arity, huge = max_args, 1 << 20
    most = [1]  # most tokens of an argument nested at most j deep
    for _ in range(max_depth):
        most.append(min(arity * most[-1] + 2, huge))
    states = (max_depth + 1) * (arity + 1)
    low = np.full((states, 3), 1 << 30, dtype=np.int32)
    high = np.zeros((states, 3), dtype=np.int32)
    need = np.zeros((states, 4), dtype=np.int32)
    cap = np.zeros((states, 4), dtype=np.int32)
    free = np.zeros((states, 4), dtype=np.int32)
    for level in range(1, max_depth + 1):
        child = most[max_depth - level]
        gain = arity * most[max_depth - level - 1] + 1 if level < max_depth else 0
        for args in range(arity + 1):
            state = level * (arity + 1) + args
            short = int(args < 2)
            if args < arity:
                low[state, 0], high[state, 0] = -short, child
                need[state, 0], cap[state, 0], free[state, 0] = -short, -child, -1
                if level < max_depth:
                    low[state, 1], high[state, 1] = 3 - short, child - gain
                    need[state, 1], cap[state, 1], free[state, 1] = 3 - short, gain - child, arity - 1
            if args >= 2:
                close_cap = 1 + (arity - args) * child
                low[state, 2], high[state, 2] = -1, close_cap
                need[state, 2], cap[state, 2], free[state, 2] = -1, -close_cap, args - arity
    tables: dict[str, Any] = {
        "low": np.ascontiguousarray(low.T),
        "high": np.ascontiguousarray(high.T),
        "need": need.reshape(-1),
        "cap": cap.reshape(-1),
        "free": free.reshape(-1),
    }
    for table in tables.values():
        table.flags.writeable = False
    tables["root_cap"] = arity * most[max_depth - 1] + 1
    return tables


_LEAN_BASE = np.array([[0.75], [0.05], [0.35]])  # move weights (digit, open, close) at lean 0 ...
_LEAN_SLOPE = np.array([[-0.7], [1.0], [-0.3]])  # ... plus lean times these
_SCALE = np.array([10, 4, 0, 0], dtype=np.float32)  # symbol range by move
_TOKEN_BASE = np.array([0, _FIRST_OPERATOR, _CLOSE_ID, _CLOSE_ID], dtype=np.int32)
_LEVEL_STEP = np.array([0, 1, -1, 0], dtype=np.int32)


def _grow(rng: np.random.Generator, lengths: np.ndarray, max_depth: int, max_args: int, longest: int) -> _Grown:
    """Expressions of exactly the given lengths, written token by token for all rows at once.

    State per row: the stack of open operators (levels 1..depth) and the argument count of
    the innermost; ``need``, the fewest tokens that can complete the expression; ``cap``,
    the most tokens that can; ``free``, the open argument slots. A move (write a digit,
    open an operator, close one) is allowed when the tokens left stay within [need, cap]
    and, where only one operator can still take arguments, when that operator can use
    them exactly. Moves are weighted so that more tokens left per free slot favours
    opening operators. A row left with no allowed move (rare: a length the tests pass but
    no completion attains) fails. Rows are processed longest first, so the rows still
    writing at step t are a prefix and per-row state is sliced, not gathered. Operators
    are recorded with their arguments (a digit, or a reference to a child operator) and
    evaluated afterwards, deepest first. ``longest`` bounds the lengths (the parameters'
    max_length, so the exact-completion table is shared between calls).
    """
    arity = max_args
    tables = _move_tables(max_depth, max_args)
    low, high = tables["low"], tables["high"]
    d_need, d_cap, d_free = tables["need"], tables["cap"], tables["free"]
    exact = _completions(max_depth, max_args, longest)
    order = np.argsort(-lengths, kind="stable")
    lens = lengths[order].astype(np.int32)
    m, width = lens.size, int(lens[0])
    active = np.searchsorted(-lens, -np.arange(width), side="left")  # rows with length > t
    stride = max_depth + 1
    base = np.arange(m, dtype=np.int64) * stride
    saved_count = np.zeros(m * stride, dtype=np.int32)  # a level's count when it opened a child
    saved_id = np.zeros(m * stride, dtype=np.int64)  # a level's operator while a child is open
    saved_count[base] = 1  # level 0 holds one value, the root's
    # operator records: ids in order of opening (row i's root is i); arguments are digits
    # 0..9, -1 - id for a child operator, 10 for none
    room_for = m * ((width - 1) // 3 + 1)  # an expression of L tokens has <= (L - 1) / 3 operators
    arguments = np.full((room_for, arity), 10, dtype=np.int32)
    flat_arguments = arguments.reshape(-1)
    kind = np.zeros(room_for, dtype=np.int64)
    depth = np.zeros(room_for, dtype=np.int8)
    used = np.zeros(room_for, dtype=np.int64)
    kind[:m] = (rng.random(m) * 4).astype(np.int64)
    depth[:m] = 1
    issued = m
    tokens = np.zeros((width, m), dtype=np.uint8)
    tokens[0] = _FIRST_OPERATOR + kind[:m]
    current = np.arange(m, dtype=np.int64)  # innermost open operator
    level = np.ones(m, dtype=np.int32)
    count = np.zeros(m, dtype=np.int32)  # its arguments so far
    enclosing = np.ones(m, dtype=np.int32)  # arguments of the operator around it (level 0: 1)
    need = np.full(m, 3, dtype=np.int32)
    cap = np.full(m, tables["root_cap"], dtype=np.int32)
    free = np.full(m, arity, dtype=np.int32)
    failed = np.zeros(m, dtype=bool)
    for t in range(1, width):
        k = int(active[t])
        lv, args = level[:k], count[:k]
        left = lens[:k] - (t + 1)  # tokens after this one
        state = lv * (arity + 1) + args
        allowed = (left - need[:k] >= low.take(state, axis=1)) & (cap[:k] - left >= high.take(state, axis=1))
        allowed &= ~failed[:k]
        # exact test where a single operator can still take arguments after the move: the
        # outer ones then only need their ']' and the length must fit that operator alone
        outer = free[:k] - (arity - args)  # free slots of the enclosing operators
        above = enclosing[:k]  # arguments of the innermost's parent
        check = np.flatnonzero((outer == 0) | ((outer == arity - above) & (lv > 1)))
        if check.size:
            c_lv, c_args, c_left, c_above = lv[check], args[check], left[check], above[check]
            rigid = outer[check] == 0  # every outer operator is full
            fits = exact[c_lv, np.minimum(c_args + 1, arity), np.clip(c_left - c_lv + 1, 0, longest)]
            allowed[0, check] &= ~rigid | fits
            fits = exact[np.minimum(c_lv + 1, max_depth), 0, np.clip(c_left - c_lv, 0, longest)]
            allowed[1, check] &= ~rigid | (c_args + 1 < arity) | fits
            fits = exact[c_lv - 1, c_above, np.clip(c_left - c_lv + 2, 0, longest)]
            allowed[2, check] &= (c_lv == 1) | (outer[check] != arity - c_above) | fits
        spare = left + 1 - need[:k]
        lean = spare / (spare + _SPREAD * np.maximum(free[:k], 1))
        weight = allowed * (_LEAN_BASE + lean * _LEAN_SLOPE)
        weight[1] += weight[0]
        weight[2] += weight[1]
        draw = rng.random((2, k), dtype=np.float32)
        pick = draw[0] * weight[2]
        move = (pick >= weight[0]).view(np.int8) + (pick >= weight[1]) + (pick >= weight[2])  # 3: none
        failed[:k] |= move == 3
        symbol = (draw[1] * _SCALE[move]).astype(np.int32)
        tokens[t, :k] = symbol + _TOKEN_BASE[move]
        change = state * 4 + move
        need[:k] += d_need[change]
        cap[:k] += d_cap[change]
        free[:k] += d_free[change]

        here = current[:k] * arity + args  # where a new argument of the innermost goes
        written = np.flatnonzero(move == 0)
        flat_arguments[here[written]] = symbol[written]
        opened = np.flatnonzero(move == 1)
        fresh = np.arange(issued, issued + opened.size, dtype=np.int64)
        issued += opened.size
        flat_arguments[here[opened]] = -1 - fresh
        kind[fresh] = symbol[opened]
        depth[fresh] = lv[opened] + 1
        slot = base[opened] + lv[opened]
        saved_count[slot] = args[opened] + 1
        saved_id[slot] = current[opened]
        closed = np.flatnonzero(move == 2)
        used[current[closed]] = args[closed]
        parent = base[closed] + lv[closed] - 1

        current[opened] = fresh
        current[closed] = saved_id[parent]
        enclosing[opened] = args[opened] + 1
        enclosing[closed] = saved_count[parent - 1]  # (meaningless, and unused, for a root)
        count[:k] += move == 0
        count[opened] = 0
        count[closed] = saved_count[parent]
        level[:k] += _LEVEL_STEP[move]
    value = np.zeros(issued, dtype=np.int64)
    depth = depth[:issued]
    for d in range(max_depth, 0, -1):
        ids = np.flatnonzero(depth == d)
        codes = arguments[ids]
        refs = codes < 0
        codes[refs] = value[-1 - codes[refs]]
        value[ids] = _evaluate(codes, used[ids], kind[ids])
    back = np.empty_like(order)
    back[order] = np.arange(m)
    return _Grown(np.ascontiguousarray(tokens.T[back]), value[:m][back], ~failed[back])


def _listops_features(tokens: np.ndarray, lengths: np.ndarray) -> dict[str, np.ndarray]:
    """Deepest nesting and number of operators of token-id rows (ids past a row's end ignored)."""
    inside = np.arange(tokens.shape[1])[None, :] < lengths[:, None]
    opens = inside & (tokens >= _FIRST_OPERATOR) & (tokens < _CLOSE_ID)
    closes = inside & (tokens == _CLOSE_ID)
    nesting = np.cumsum(opens.astype(np.int16) - closes, axis=1, dtype=np.int16)
    return {
        "depth": nesting.max(axis=1).astype(np.int64),
        "operators": np.count_nonzero(opens, axis=1).astype(np.int64),
    }


@register
class ListOps(Task[ListOpsParams]):
    """Nested MAX / MIN / MED / SM expression over digits -> its value, one digit.

    Features: ``depth`` (deepest operator nesting) and ``operators`` (number of operators).
    """

    name = "listops"
    family = "structured"
    description = "nested [MAX [MIN [MED [SM ... ] expression over digits 0..9 -> its value (one digit)"
    params_type = ListOpsParams
    answer_tokens = tuple("0123456789")
    trace_formats = {
        "coarse": "the value of each sub-list that is an argument of the outermost operator, left to right "
        "(its digit arguments are not repeated)",
        "fine": "the value of every operator's sub-list in the order its ']' closes (the outermost last)",
    }

    def with_size(self, lo: int, hi: int) -> ListOpsParams:
        """Default parameters with lengths lo..hi (raised to at least 4, the shortest input)."""
        lo = max(lo, MIN_LISTOPS_LENGTH)
        return self.default_params().replace(min_length=lo, max_length=max(hi, lo))

    def levels(self) -> dict[int, ListOpsParams]:
        levels = {}
        for k, depth in enumerate(_LISTOPS_DEPTHS, start=1):
            lo = max(LEVEL_BOUNDS[k - 1] + 1, MIN_LISTOPS_LENGTH)
            levels[k] = ListOpsParams(min_length=lo, max_length=LEVEL_BOUNDS[k], max_depth=depth)
        return levels

    def generate(self, rng: np.random.Generator, n: int, params: ListOpsParams) -> Batch:
        """Lengths uniform over the allowed ones; rows the sampler cannot complete are
        replaced by spare rows drawn alongside (so a length's share is weighted by the
        sampler's success rate at it: over 98 % in every level)."""
        if n == 0:
            return with_traces(self, _empty_batch(("depth", "operators")), params.trace)
        spans = params.lengths()
        starts = np.array([lo for lo, _, _ in spans], dtype=np.int64)
        steps = np.array([step for _, _, step in spans], dtype=np.int64)
        sizes = np.array([(hi - lo) // step + 1 for lo, hi, step in spans], dtype=np.int64)
        ends = np.cumsum(sizes)
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        missing, size = n, n + n // 25 + 8
        for _ in range(_ATTEMPTS):
            pick = rng.integers(0, int(ends[-1]), size=size, dtype=np.int64)
            span = np.searchsorted(ends, pick, side="right")
            lengths = starts[span] + steps[span] * (pick - (ends[span] - sizes[span]))
            grown = _grow(rng, lengths, params.max_depth, params.max_args, params.max_length)
            done = np.flatnonzero(grown.ok)[:missing]
            parts.append((grown.tokens[done], grown.values[done], lengths[done]))
            missing -= done.size
            if not missing:
                break
            size = int(missing * 1.2 / max(float(grown.ok.mean()), 0.02)) + 4
        else:
            raise RuntimeError(f"listops: the sampler keeps failing for {params}")
        lengths = np.concatenate([p[2] for p in parts])
        tokens = np.zeros((n, int(lengths.max())), dtype=np.uint8)
        row = 0
        for part_tokens, _, _ in parts:
            width = min(part_tokens.shape[1], tokens.shape[1])
            tokens[row : row + len(part_tokens), :width] = part_tokens[:, :width]
            row += len(part_tokens)
        values = np.concatenate([p[1] for p in parts])
        targets = digit_tokens(values)
        inputs = join_tokens(tokens, lengths, LISTOPS_VOCAB)
        return with_traces(self, Batch(inputs, targets, _listops_features(tokens, lengths)), params.trace)

    def trace_tokens(self, example: Mapping[str, Any], fmt: str) -> list[str]:
        stack: list[tuple[str, list[int]]] = []
        closed: list[int] = []  # every sub-list's value, in closing order
        outermost: list[int] = []  # the values of the outermost operator's sub-list arguments
        for token in example["input"].split():
            if token in LISTOPS_OPERATORS:
                stack.append((token, []))
            elif token == LISTOPS_CLOSE:
                op, args = stack.pop()
                closed.append(apply_listops(op, args))
                if stack:
                    stack[-1][1].append(closed[-1])
                if len(stack) == 1:
                    outermost.append(closed[-1])
            elif len(token) == 1 and "0" <= token <= "9":
                stack[-1][1].append(int(token))
            else:
                raise ValueError(f"unexpected token {token!r}")
        return [str(v) for v in (closed if fmt == "fine" else outermost)]

    def solve(self, example: Mapping[str, Any]) -> str:
        stack: list[tuple[str, list[int]]] = []
        result: int | None = None
        for token in example["input"].split():
            if result is not None:
                raise ValueError("tokens after the end of the expression")
            if token in LISTOPS_OPERATORS:
                stack.append((token, []))
            elif token == LISTOPS_CLOSE:
                if not stack:
                    raise ValueError("unbalanced ']'")
                op, args = stack.pop()
                if not args:
                    raise ValueError(f"{op} has no arguments")
                value = apply_listops(op, args)
                if stack:
                    stack[-1][1].append(value)
                else:
                    result = value
            elif len(token) == 1 and "0" <= token <= "9":
                if not stack:
                    raise ValueError("a digit outside every operator")
                stack[-1][1].append(int(token))
            else:
                raise ValueError(f"unexpected token {token!r}")
        if result is None:
            raise ValueError("empty or unclosed expression")
        return str(result)


def apply_listops(op: str, args: list[int]) -> int:
    """Value of one listops operator applied to its argument values."""
    if op == "[MAX":
        return max(args)
    if op == "[MIN":
        return min(args)
    if op == "[SM":
        return sum(args) % 10
    if op == "[MED":
        ordered = sorted(args)
        k = len(ordered)
        return (ordered[(k - 1) // 2] + ordered[k // 2]) // 2
    raise ValueError(f"unknown operator {op!r}")


# ---------------------------------------------------------------------------------------
# graphs: shared parameters, vectorized sampling and breadth-first search over a batch
# ---------------------------------------------------------------------------------------

MAX_EDGES = 3333  # 3 * 3333 + 2 = 10,001 tokens
COMMA, QUERY = ",", "?"
_CELLS = 1 << 22  # bound on examples * nodes handled at once (memory of the (n, V) arrays)


def edges_for_tokens(lo: int, hi: int) -> tuple[int, int]:
    """Edge range whose inputs (3E + 2 tokens) lie in [lo, hi] tokens, at least one edge."""
    lo_edges = min(max(1, -(-(lo - 2) // 3)), MAX_EDGES)
    hi_edges = min(max(lo_edges, (hi - 2) // 3), MAX_EDGES)
    return lo_edges, hi_edges


def fewest_nodes(edges: int) -> int:
    """Smallest V >= 2 with V(V-1)/2 >= edges."""
    v = max(2, math.isqrt(2 * edges))
    while v * (v - 1) // 2 < edges:
        v += 1
    while v > 2 and (v - 1) * (v - 2) // 2 >= edges:
        v -= 1
    return v


@dataclasses.dataclass(frozen=True)
class GraphParams(Params):
    """Edge-count range (the size knob) and density of random graphs."""

    min_edges: int = knob(1, lo=1, hi=MAX_EDGES, doc="fewest edges (an input has 3E + 2 tokens)")
    max_edges: int = knob(12, lo=1, hi=MAX_EDGES, doc="most edges")
    edges_per_node: float = knob(
        1.0,
        lo=0.25,
        hi=8.0,
        doc="edges per node: a graph with E edges has max(ceil(E / edges_per_node), "
        "fewest nodes that hold E edges) nodes, numbered 0..V-1",
    )

    def check_consistency(self) -> None:
        self.require(
            self.min_edges <= self.max_edges,
            f"parameter min_edges={self.min_edges} exceeds max_edges={self.max_edges}",
        )

    def node_count(self, edges: int) -> int:
        """Number of nodes V of a graph with the given number of edges."""
        return max(math.ceil(round(edges / self.edges_per_node, 9)), fewest_nodes(edges))


@dataclasses.dataclass(frozen=True)
class ConnectivityParams(GraphParams):
    """GraphParams with sparser default graphs (more components, so more ``no`` pairs)."""

    edges_per_node: float = knob(
        0.75,
        lo=0.25,
        hi=8.0,
        doc="edges per node: a graph with E edges has max(ceil(E / edges_per_node), "
        "fewest nodes that hold E edges) nodes, numbered 0..V-1",
    )


def _graph_levels(params_type: type[GraphParams]) -> dict[int, Any]:
    """Levels 1..10: the input-length bands of the sequence tasks, as edge counts."""
    levels = {}
    for k in range(1, 11):
        lo, hi = edges_for_tokens(LEVEL_BOUNDS[k - 1] + 1, LEVEL_BOUNDS[k])
        levels[k] = params_type(min_edges=lo, max_edges=hi)
    return levels


@dataclasses.dataclass
class _Graphs:
    """A batch of graphs: edge endpoints (n, Emax) as printed, counts, and a CSR of the
    disjoint union of all graphs (global node id = row * width + node)."""

    u: np.ndarray
    v: np.ndarray
    edges: np.ndarray
    nodes: np.ndarray
    width: int
    indptr: np.ndarray
    dst: np.ndarray
    degree: np.ndarray  # (n, width)


def _sample_graphs(rng: np.random.Generator, n: int, params: GraphParams) -> _Graphs:
    """n uniform random simple graphs with E ~ U[min_edges, max_edges] edges each.

    Edges are drawn as uniform ordered pairs of distinct nodes (the order is the printed
    orientation); repeated pairs are redrawn until each row's pairs are distinct.
    """
    if params.min_edges == params.max_edges:
        edges = np.full(n, params.min_edges, dtype=np.int64)
    else:
        edges = rng.integers(params.min_edges, params.max_edges + 1, size=n, dtype=np.int64)
    nodes = _node_counts(params)[edges]
    width = int(nodes.max())
    emax = int(edges.max())
    valid = np.arange(emax)[None, :] < edges[:, None]
    u = (rng.random((n, emax)) * nodes[:, None]).astype(np.int32)
    v = (rng.random((n, emax)) * (nodes[:, None] - 1)).astype(np.int32)
    v += v >= u
    bits = width.bit_length()  # a node fits in `bits` bits, a pair code in 2 * bits <= 28
    shift = max(1, emax.bit_length())
    absent = np.int64(1) << (2 * bits)  # pair code of the padding past a row's edges
    position = np.arange(emax, dtype=np.int64)[None, :]
    rows = np.arange(n)
    while rows.size:
        su, sv = u[rows].astype(np.int64), v[rows].astype(np.int64)
        code = np.where(valid[rows], (np.minimum(su, sv) << bits) | np.maximum(su, sv), absent)
        keys = (code << shift) | position
        keys.sort(axis=1)
        code = keys >> shift
        at_row, at_col = np.nonzero((code[:, 1:] == code[:, :-1]) & (code[:, 1:] < absent))
        if not at_row.size:
            break
        row = rows[at_row]
        col = keys[at_row, at_col + 1] & ((1 << shift) - 1)
        a = (rng.random(row.size) * nodes[row]).astype(np.int32)
        b = (rng.random(row.size) * (nodes[row] - 1)).astype(np.int32)
        b += b >= a
        u[row, col] = a
        v[row, col] = b
        rows = np.unique(row)
    # adjacency of the disjoint union, both directions, sorted by (row, source, target)
    both = np.empty((n, 2 * emax), dtype=np.int32)
    np.bitwise_or(u << bits, v, out=both[:, :emax])
    np.bitwise_or(v << bits, u, out=both[:, emax:])
    pad = np.concatenate([~valid, ~valid], axis=1)
    both[pad] = np.iinfo(np.int32).max
    both.sort(axis=1)
    keep = np.arange(2 * emax)[None, :] < 2 * edges[:, None]  # a sorted row's arcs come first
    offset = (np.arange(n, dtype=np.int32) * width)[:, None]
    src = ((both >> bits) + offset)[keep]
    dst = ((both & ((1 << bits) - 1)) + offset)[keep]
    counts = np.bincount(src, minlength=n * width)
    indptr = np.zeros(n * width + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    return _Graphs(u, v, edges, nodes, width, indptr, dst, counts.reshape(n, width))


@functools.lru_cache(maxsize=64)
def _node_counts(params: GraphParams) -> np.ndarray:
    """Node count V for each edge count 0..max_edges."""
    counts = np.array([params.node_count(max(e, 1)) for e in range(params.max_edges + 1)], dtype=np.int64)
    counts.flags.writeable = False
    return counts


def _gather(indptr: np.ndarray, dst: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours of each node of ``nodes`` (concatenated) and each node's count."""
    starts = indptr[nodes]
    counts = indptr[nodes + 1] - starts
    total = int(counts.sum())
    ends = np.cumsum(counts)
    index = np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - counts), counts)
    return dst[index], counts


def _bfs(graphs: _Graphs, sources: np.ndarray) -> np.ndarray:
    """Hop distance (n, width) from each row's source node; -1 where unreachable."""
    n, width = graphs.degree.shape
    dist = np.full(n * width, -1, dtype=np.int32)
    frontier = (np.arange(n, dtype=np.int64) * width + sources).astype(np.int32)
    dist[frontier] = 0
    mark = np.empty(n * width, dtype=np.int32)
    level = 0
    while frontier.size:
        level += 1
        found, _ = _gather(graphs.indptr, graphs.dst, frontier)
        found = found[dist[found] < 0]
        position = np.arange(found.size, dtype=np.int32)
        mark[found] = position
        found = found[mark[found] == position]  # each newly reached node once
        dist[found] = level
        frontier = found
    return dist.reshape(n, width)


def _pick(rng: np.random.Generator, allowed: np.ndarray) -> np.ndarray:
    """Per row, a uniformly random column where allowed (rows need one True)."""
    keys = rng.random(allowed.shape)
    keys[~allowed] = -1.0
    return np.argmax(keys, axis=1)


def _query_ids(graphs: _Graphs, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Token ids (vocabulary: node names 0..width-1, then ',' and '?') of the inputs."""
    n, emax = graphs.u.shape
    comma, query = graphs.width, graphs.width + 1
    ids = np.full((n, 3 * emax + 2), comma, dtype=np.int64)
    ids[:, 0 : 3 * emax : 3] = graphs.u
    ids[:, 1 : 3 * emax : 3] = graphs.v
    rows = np.arange(n)
    end = 3 * graphs.edges
    ids[rows, end - 1] = query
    ids[rows, end] = first
    ids[rows, end + 1] = second
    return ids


@functools.lru_cache(maxsize=64)
def _vocabulary(width: int) -> tuple[str, ...]:
    """Node names 0..width-1, then ',' and '?'."""
    return tuple(str(i) for i in range(width)) + (COMMA, QUERY)


def _chunks(n: int, params: GraphParams) -> list[int]:
    """Sizes of the sub-batches generated at once, bounding examples * nodes."""
    step = max(1, _CELLS // params.node_count(params.max_edges))
    return [min(step, n - start) for start in range(0, n, step)]


def _node(token: str) -> int:
    """A node name: a decimal integer without leading zeros."""
    if not token or not all("0" <= c <= "9" for c in token) or (token[0] == "0" and token != "0"):
        raise ValueError(f"bad node name {token!r}")
    return int(token)


def parse_graph_query(text: str) -> tuple[dict[int, set[int]], int, int]:
    """Adjacency sets, source and target of ``u v , ... , u v ? s t``; ValueError if malformed."""
    tokens = text.split()
    if tokens.count(QUERY) != 1:
        raise ValueError("input needs exactly one '?'")
    split = tokens.index(QUERY)
    query = tokens[split + 1 :]
    if len(query) != 2:
        raise ValueError("'?' must be followed by two nodes")
    body = tokens[:split]
    if len(body) % 3 != 2:
        raise ValueError("edge list must be 'u v' pairs separated by ','")
    adjacency: dict[int, set[int]] = {}
    for i in range(0, len(body), 3):
        if i + 2 < len(body) and body[i + 2] != COMMA:
            raise ValueError("edges must be separated by ','")
        a, b = _node(body[i]), _node(body[i + 1])
        adjacency.setdefault(a, set()).add(b)
        adjacency.setdefault(b, set()).add(a)
    return adjacency, _node(query[0]), _node(query[1])


def bfs_distances(adjacency: Mapping[int, set[int]], source: int) -> dict[int, int]:
    """Hop distances from source to every node it reaches (plain breadth-first search)."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for other in adjacency.get(node, ()):
            if other not in dist:
                dist[other] = dist[node] + 1
                queue.append(other)
    return dist


@register
class ShortestPath(Task[GraphParams]):
    """Edge list and a query ``? s t`` -> a shortest path from s to t as its node sequence.

    Features: ``nodes`` (nodes that touch an edge), ``edges``, ``hops`` (path length).
    """

    name = "shortest_path"
    family = "structured"
    description = "random undirected graph as an edge list and a query s t -> a shortest path from s to t"
    params_type = GraphParams
    size_knob = "edges (min_edges..max_edges); an input has 3 * edges + 2 tokens"

    def with_size(self, lo: int, hi: int) -> GraphParams:
        """Edge range whose inputs have lo..hi tokens (3E + 2 tokens, at least one edge)."""
        low, high = edges_for_tokens(lo, hi)
        return self.default_params().replace(min_edges=low, max_edges=high)

    def levels(self) -> dict[int, GraphParams]:
        return _graph_levels(GraphParams)

    def generate(self, rng: np.random.Generator, n: int, params: GraphParams) -> Batch:
        if n == 0:
            return _empty_batch(("nodes", "edges", "hops"))
        batches = [self._generate(rng, size, params) for size in _chunks(n, params)]
        return batches[0] if len(batches) == 1 else concat(batches)

    def _generate(self, rng: np.random.Generator, n: int, params: GraphParams) -> Batch:
        graphs = _sample_graphs(rng, n, params)
        width = graphs.width
        touched = graphs.degree > 0
        # target t first; the source is a random other node of its component
        target = _pick(rng, touched)
        dist = _bfs(graphs, target)
        reach = dist > 0
        source = _pick(rng, reach)
        rows = np.arange(n)
        hops = dist[rows, source]
        # the lexicographically smallest shortest path: from s, always step to the
        # smallest-numbered neighbour one hop closer to t (neighbours are sorted)
        path = np.zeros((n, int(hops.max()) + 1), dtype=np.int64)
        path[:, 0] = source
        current = rows * width + source
        flat_dist = dist.reshape(-1)
        for step in range(1, path.shape[1]):
            live = np.flatnonzero(hops >= step)
            here = current[live]
            found, counts = _gather(graphs.indptr, graphs.dst, here)
            wanted = np.repeat(flat_dist[here] - 1, counts)
            candidate = np.where(flat_dist[found] == wanted, found, n * width)  # n*width: none
            starts = np.cumsum(counts) - counts
            nxt = np.minimum.reduceat(candidate, starts)
            current[live] = nxt
            path[live, step] = nxt - live * width
        vocab = _vocabulary(width)
        inputs = join_tokens(_query_ids(graphs, source, target), 3 * graphs.edges + 2, vocab)
        targets = join_tokens(path, hops + 1, vocab)
        features = {
            "nodes": touched.sum(axis=1, dtype=np.int64),
            "edges": graphs.edges,
            "hops": hops.astype(np.int64),
        }
        return Batch(inputs, targets, features)

    def solve(self, example: Mapping[str, Any]) -> str:
        """The lexicographically smallest shortest path, or ``NONE`` if t is unreachable."""
        adjacency, source, target = parse_graph_query(example["input"])
        to_target = bfs_distances(adjacency, target)
        if source not in to_target:
            return "NONE"
        path = [source]
        while path[-1] != target:
            here = path[-1]
            path.append(min(w for w in adjacency[here] if to_target.get(w) == to_target[here] - 1))
        return " ".join(str(node) for node in path)

    def check(self, example: Mapping[str, Any], prediction: str) -> bool:
        """Any shortest path is correct: starts at s, ends at t, follows edges, has the
        breadth-first hop count; ``NONE`` exactly when t is unreachable."""
        try:
            adjacency, source, target = parse_graph_query(example["input"])
        except (ValueError, KeyError, TypeError):
            return False
        dist = bfs_distances(adjacency, source)
        tokens = prediction.split()
        if target not in dist:
            return tokens == ["NONE"]
        try:
            path = [_node(token) for token in tokens]
        except ValueError:
            return False
        return (
            len(path) == dist[target] + 1
            and path[0] == source
            and path[-1] == target
            and all(b in adjacency.get(a, ()) for a, b in zip(path, path[1:]))
        )


@register
class GraphConnectivity(Task[ConnectivityParams]):
    """Edge list and a query ``? s t`` -> ``yes`` if s and t are connected, else ``no``.

    Features: ``nodes`` (nodes that touch an edge), ``edges``, ``distance`` (hops between
    the query nodes; 0 when they are not connected).
    """

    name = "graph_connectivity"
    family = "structured"
    description = "random undirected graph as an edge list and a query s t -> yes if s and t are connected, else no"
    params_type = ConnectivityParams
    answer_tokens = ("no", "yes")
    size_knob = "edges (min_edges..max_edges); an input has 3 * edges + 2 tokens"

    def with_size(self, lo: int, hi: int) -> ConnectivityParams:
        """Edge range whose inputs have lo..hi tokens (3E + 2 tokens, at least one edge)."""
        low, high = edges_for_tokens(lo, hi)
        return self.default_params().replace(min_edges=low, max_edges=high)

    def levels(self) -> dict[int, ConnectivityParams]:
        return _graph_levels(ConnectivityParams)

    def generate(self, rng: np.random.Generator, n: int, params: ConnectivityParams) -> Batch:
        if n == 0:
            return _empty_batch(("nodes", "edges", "distance"))
        batches = [self._generate(rng, size, params) for size in _chunks(n, params)]
        return batches[0] if len(batches) == 1 else concat(batches)

    def _generate(self, rng: np.random.Generator, n: int, params: ConnectivityParams) -> Batch:
        graphs = _sample_graphs(rng, n, params)
        touched = graphs.degree > 0
        source = _pick(rng, touched)
        dist = _bfs(graphs, source)
        same = dist > 0
        other = touched & (dist < 0)
        want_yes = random_bits(rng, n, 1)[:, 0].astype(bool) | ~other.any(axis=1)
        target = _pick(rng, np.where(want_yes[:, None], same, other))
        swap = random_bits(rng, n, 1)[:, 0].astype(bool)
        first, second = np.where(swap, target, source), np.where(swap, source, target)
        rows = np.arange(n)
        inputs = join_tokens(_query_ids(graphs, first, second), 3 * graphs.edges + 2, _vocabulary(graphs.width))
        targets = np.where(want_yes, b"yes", b"no")
        features = {
            "nodes": touched.sum(axis=1, dtype=np.int64),
            "edges": graphs.edges,
            "distance": np.maximum(dist[rows, target], 0),
        }
        return Batch(inputs, targets, features)

    def solve(self, example: Mapping[str, Any]) -> str:
        adjacency, source, target = parse_graph_query(example["input"])
        return "yes" if target in bfs_distances(adjacency, source) else "no"
