"""Prompts: a record rendered for a pretrained language model, as plain text or as chat messages.

A prompt has four parts:

- an **instruction** that explains the task and its token conventions in English, written per
  task (``EXPLANATIONS``) and filled in from the config's parameters and the record's ``meta``
  (modulus, cycle length, output format, ...); a task without an explanation falls back to its
  one-line ``description`` and non-size parameters;
- optional **k-shot examples** from the train side, drawn per query by a seeded hash of (seed,
  record id), so the same query always gets the same examples whatever the order or the
  subset evaluated (a train record never serves as its own example);
- the **query** (``Input: <tokens>``), followed with :class:`Pause` by a line of filler tokens
  (k, or k per input token: the pause tokens of Goyal et al. 2023);
- the expected **answer format**: a last line ``Answer: <tokens>``.

A **traced** config's records (``meta.trace``: gengap.generators.traces) are answered with their
trace: the instruction then states the format, the task's own description of it
(``Task.trace_formats``), and shows one worked example, a record of the train pool (never of
validation or test: the pool is the config's train part), the same for every query of the
config (the one with the shortest input, ties in pool order; another when the query has its
input). A traced config without train records gets the statement alone.

Text prompts (for completion models and lm-evaluation-harness) end with ``Answer:``, so the
model's continuation is the answer. Chat prompts are lists of ``{"role", "content"}``
messages: the examples are earlier user / assistant turns, the instruction opens the first
user message (or is a system message with ``system=True``). The instruction of a chat prompt
ends with the **answer format** asked for (``answer_format``, one of ``ANSWER_FORMATS``), and
the replies (the examples', and the one :meth:`Prompter.reply` gives for supervised
fine-tuning) are written in it:

- ``line`` (the default): a last line ``Answer: <tokens>``; reply ``Answer: <tokens>``;
- ``tags``: the answer between ``<answer>`` and ``</answer>``, reasoning before it allowed
  (reasoning-gym's convention); reply ``<answer><tokens></answer>``;
- ``think``: reasoning in ``<think> </think>``, then the answer tags (DeepSeek-R1-Zero style);
  reply ``<think>``, newline, ``</think>``, newline, ``<answer><tokens></answer>``;
- ``boxed``: the answer in ``\\boxed{...}``; reply ``\\boxed{<tokens>}``.

gengap has no reasoning to show, so a ``think`` reply holds an empty block: that format is
meant for RL (verl, GRPO), where the model writes its own. Whatever the format asked for,
:func:`gengap.harnesses.extraction.extract_answer` reads all of them; whether an output kept to the
format is :func:`gengap.harnesses.extraction.format_ok`. Everything here is deterministic and pure
Python.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from gengap.generators import get_task
from gengap.harnesses.extraction import ANSWER_FORMATS, MARKS

Record = Mapping[str, Any]
Message = dict[str, str]

ANSWER_PREFIX = "Answer:"
CONVENTIONS = "Tokens are separated by single spaces; write the answer's tokens the same way."
TEXT_FORMAT = 'Give the answer after "Answer:".'
FORMAT_INSTRUCTIONS = {
    "line": 'End your reply with a line "Answer: " followed by the answer.',
    "tags": "You may reason first; then give the final answer, and nothing else, between <answer> and </answer> tags.",
    "think": (
        "First think about the problem inside <think> </think> tags, then give the final answer, and nothing else, "
        "between <answer> and </answer> tags: <think> reasoning here </think> <answer> answer here </answer>"
    ),
    "boxed": "End your reply with the final answer, and nothing else, in \\boxed{}.",
}
REPLIES: dict[str, Callable[[str], str]] = {
    "line": lambda target: f"{ANSWER_PREFIX} {target}",
    "tags": lambda target: f"<answer>{target}</answer>",
    "think": lambda target: f"<think>\n</think>\n<answer>{target}</answer>",
    "boxed": lambda target: f"\\boxed{{{target}}}",
}
CHAT_FORMAT = FORMAT_INSTRUCTIONS["line"]
TRACE_STATEMENT = (
    "Write the answer as its worked steps, then the token => and the final answer. The steps: {steps}."
)
TRACE_NAMES = {
    "coarse": "intermediate results",
    "fine": "every intermediate result",
    "inductive": "states, each opened by # and computed from the previous state and the input",
    "index_hints": "steps, each starting with the position token p<i> of what it reads",
    "least_to_most": "the smaller sub-problems first, each written as the sub-problem, =, its answer and |",
}
WORKED_EXAMPLE = "Worked example: Input: {input} -> Answer: {target}"
PAUSE_TOKEN = "<pause>"
MAX_PAUSE = 4096  # filler tokens after every input: each multiplies the export's size, beyond this it is a typo
MAX_PAUSE_PER_TOKEN = 16  # per input token, as training's --computation-steps (gengap.baselines.layout.MAX_COMPUTATION_STEPS)
MAX_PAUSE_TOKEN_CHARS = 64
MAX_SHOTS = 256  # examples per prompt: each multiplies the prompt's size
# What a prompt or a reply is made of besides the record's tokens: a pause token equal to one would make answers ambiguous.
PROMPT_TOKENS = frozenset({"Input:", ANSWER_PREFIX, "=>", "<answer>", "</answer>", "<think>", "</think>", "\\boxed{", *MARKS})
PAUSE_STATEMENT = "Every input is followed by a line of filler tokens {token} ({count}): they carry no information."
SIZE_WORDS = ("min_", "max_")  # size-knob parameters: they differ between train and test, so prompts never state them


def _addition_like(op: str, result: str) -> Callable[[Mapping[str, Any]], str]:
    def explain(p: Mapping[str, Any]) -> str:
        form = p.get("format", "plain")
        head = f"The input is a {op} b with one token per decimal digit, most significant digit first."
        if form == "reversed":
            return f"{head} Answer the {result} with one token per digit, least significant digit first (reversed)."
        if form == "little_endian":
            return (f"The input is a {op} b with one token per decimal digit, least significant digit first (every number reversed). "
                    f"Answer the {result} the same way: one token per digit, least significant digit first.")
        if form == "index_hints":
            return (
                f"The input is a {op} b where every decimal digit is preceded by its position token "
                f"(p0 for the units digit, p1 for the tens, ...), most significant digit first. "
                f"Answer the {result} in the same notation: each digit preceded by its position token, most significant first."
            )
        return f"{head} Answer the {result} with one token per digit, most significant digit first."

    return explain


def _m(p: Mapping[str, Any], key: str = "modulus", default: int = 5) -> int:
    value = p.get(key, default)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else default


BOOLEAN_RULES = {
    "parity": "1 if an odd number of the bits at {where} are 1, else 0",
    "majority": "1 if more than half of the bits at {where} are 1 (a tie gives 0), else 0",
    "monomial": "1 if every bit at {where} is 1, else 0",
}


def _boolean(p: Mapping[str, Any]) -> str:
    """boolean_function: the rule over the support, read from the record's meta (a list of positions)
    or from the parameters."""
    support = p.get("support")
    if not isinstance(support, list):
        values = {key: p[key] for key in ("n", "k", "support", "support_seed") if key in p}
        support = list(get_task("boolean_function").make_params(values).coordinates())
    where = "position " if len(support) == 1 else "positions "
    where += " ".join(str(i) for i in support) + " (counting from 0)"
    rule = BOOLEAN_RULES.get(str(p.get("function")), BOOLEAN_RULES["parity"]).format(where=where)
    return f"The input is {p.get('n')} bits, one token each. Answer {rule}."


def _cfq_like() -> str:
    """cfq_like's query language, its tokens read from the task's lexicon."""
    from gengap.generators.kb_world import ATTRIBUTES, RELATIONS, SYMMETRIC
    from gengap.generators.tasks._cfq_lexicon import ATTRIBUTE_PREDICATES, CLASS_TOKENS, PREDICATES, VALUE_TOKENS

    relations = ", ".join(f"{token} ({RELATIONS[name][0]} -> {RELATIONS[name][1]})" for name, token in PREDICATES.items())
    symmetric = " or ".join(PREDICATES[name] for name in sorted(SYMMETRIC))
    attributes = "; ".join(
        f"{token} ({', '.join(VALUE_TOKENS[(name, value)] for value in ATTRIBUTES[name])})" for name, token in ATTRIBUTE_PREDICATES.items()
    )
    return (
        "Translate the English question about films, people and companies into its SPARQL-like query. M0, M1, ... stand "
        "for entities and are written as they are. A question asking who, what or which is answered by "
        "SELECT DISTINCT ?x0 WHERE { ITEM . ITEM . ... } with the variable ?x0 the answer; a yes/no question by "
        "SELECT count(*) WHERE { ITEM . ... }. An item is a triple SUBJECT PREDICATE OBJECT, or FILTER ( A != B ); "
        "subjects and objects are variables (?x0, ?x1, ...), placeholders or constants. Predicates: the relations "
        f"(subject -> object) {relations}; every {symmetric} triple comes with a FILTER that its two terms differ; "
        f"X a C for membership of a class C: {', '.join(CLASS_TOKENS.values())}; a person's attributes {attributes}. "
        "The answer is the query in normal form: each item once, the triples sorted as text, then the FILTERs, the "
        "other variables named ?x1, ?x2, ... (exact match reads any order of the items and any names of the variables)."
    )


EXPLANATIONS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "boolean_function": _boolean,
    "maze": lambda p: (
        "The input is a maze drawn as a grid of tokens, row by row, rows separated by |: # is a wall, . is open, "
        "S is the start and G the goal. Cells lie at odd rows and columns; the square between two neighbouring cells "
        "is a wall or an opening. Answer a shortest path from S to G as moves U (up), D (down), L (left) and R (right), "
        "one move per step from a cell through an opening to the next cell."
    ),
    "parity_check": lambda p: "The input is a string of bits. Answer 1 if it contains an odd number of 1s, else 0.",
    "even_pairs": lambda p: (
        "The input is a string of bits. Count the places where two neighbouring bits differ (01 or 10). "
        "Answer 0 if that count is even, else 1."
    ),
    "modular_arithmetic": lambda p: (
        f"The input is an arithmetic expression over the numbers 0 to {_m(p) - 1} with + - and * "
        f"(* binds tighter than + and -). Answer its value modulo {_m(p)}, one number from 0 to {_m(p) - 1}."
    ),
    "cycle_navigation": lambda p: (
        f"Start at position 0 on a cycle of {_m(p, 'cycle_length')} positions numbered 0 to {_m(p, 'cycle_length') - 1}. "
        "Each input token is a move: L goes one step down (-1), S stays, R goes one step up (+1), wrapping around the cycle. "
        "Answer the final position."
    ),
    "stack_manipulation": lambda p: (
        "The input starts with a stack of bits written from bottom to top, followed by actions: POP removes the top "
        "symbol (nothing happens when the stack is empty), PUSH0 and PUSH1 put 0 or 1 on top. "
        "Answer the final stack from top to bottom, or EMPTY when it is empty."
    ),
    "reverse_string": lambda p: "Answer the input's symbols in reverse order.",
    "modular_arithmetic_brackets": lambda p: (
        f"The input is an expression with brackets over the digits 0 to {_m(p) - 1} with + and - "
        "(a - before a digit or bracket with nothing to subtract from is a unary minus). "
        f"Answer its value modulo {_m(p)}, one digit from 0 to {_m(p) - 1}."
    ),
    "solve_equation": lambda p: (
        f"The input is an equation: an expression with brackets over the digits 0 to {_m(p) - 1} with + and - in which one "
        f"digit is replaced by x, then = and the expression's value modulo {_m(p)}. Answer the digit that x stands for."
    ),
    "duplicate_string": lambda p: "Answer the input string written twice.",
    "missing_duplicate_string": lambda p: (
        "The input is a string written twice in a row, with one symbol replaced by _ (a final # only pads inputs of "
        "odd length). Answer the symbol that _ replaces."
    ),
    "odds_first": lambda p: (
        "Answer the input's symbols at odd positions (1st, 3rd, 5th, ...) followed by its symbols at even positions "
        "(2nd, 4th, ...), each group in its original order."
    ),
    "binary_addition": lambda p: (
        "The input is two binary numbers written least significant bit first, separated by +. "
        "Answer their sum in binary, least significant bit first, without trailing zeros."
    ),
    "binary_multiplication": lambda p: (
        "The input is two binary numbers written least significant bit first, separated by *. "
        "Answer their product in binary, least significant bit first, without trailing zeros (0 for zero)."
    ),
    "compute_sqrt": lambda p: (
        "The input is a binary number of L bits, most significant bit first, padded with leading zeros. "
        "Answer the integer part of its square root in binary, most significant bit first, padded with leading zeros "
        "to half of L bits, rounded up."
    ),
    "bucket_sort": lambda p: (
        f"The input is a string of symbols 0 to {_m(p, 'alphabet_size') - 1}. Answer the same symbols sorted in ascending order."
    ),
    "addition": _addition_like("+", "sum"),
    "multiplication": _addition_like("*", "product"),
    "modular_operation": lambda p: (
        f"The input is x op y with x and y numbers from 0 to {_m(p, 'p', 97) - 1} and op one of + - * / "
        f"(/ multiplies x by the inverse of y modulo {_m(p, 'p', 97)}). Answer (x op y) modulo {_m(p, 'p', 97)}, one number."
    ),
    "variable_binding": lambda p: (
        "The input is a list of assignments, each ended by ;. x = v gives x the value v, x = y gives x the value of y"
        + (f", x = - y gives x the value {_m(p, 'values', 10) - 1} minus the value of y" if p.get("negation") else "")
        + ". After ? comes one variable. Answer its value."
    ),
    "pointer_chasing": lambda p: (
        "The input is a table of key value pairs (each pair says: key points to value), then ? s k. Start at node s and "
        "follow the pointers k times. Answer the node you reach."
    ),
    "listops": lambda p: (
        "Evaluate the nested expression over the digits 0 to 9. [MAX is the maximum of its arguments, [MIN the minimum, "
        "[MED the median (for an even number of arguments the mean of the two middle values, rounded down), [SM the sum "
        "modulo 10; ] closes the innermost open operator. Answer the value, one digit."
    ),
    "prefix_sums": lambda p: (
        "The input is a string of bits. Answer its running parity: output bit i is the sum modulo 2 of input bits 1 to i, "
        "one output bit per input bit."
    ),
    "shortest_path": lambda p: (
        "The input is an undirected graph as a list of edges u v separated by commas, then ? s t. "
        "Answer a shortest path from s to t as its sequence of nodes, starting with s and ending with t."
    ),
    "graph_connectivity": lambda p: (
        "The input is an undirected graph as a list of edges u v separated by commas, then ? s t. "
        "Answer yes if s and t are connected by a path, else no."
    ),
    "scan": lambda p: (
        "Translate the command into a sequence of actions I_WALK I_RUN I_JUMP I_LOOK I_TURN_LEFT I_TURN_RIGHT. "
        "walk run jump look are one action each; turn left is I_TURN_LEFT, X left is I_TURN_LEFT then X (right alike); "
        "X opposite left turns left twice, then X; X around left is (I_TURN_LEFT X) four times; twice and thrice repeat "
        "what precedes them; A and B is A then B; A after B is B then A."
    ),
    "pcfg_set": lambda p: (
        "The input is a program in prefix notation over strings of symbols. Unary functions: copy x (x), reverse x, "
        "shift x (first symbol moved to the end), echo x (x and its last symbol again), swap_first_last x, repeat x "
        "(x twice). Binary functions take x , y: append (x y), prepend (y x), remove_first (y), remove_second (x). "
        "A function applies to the expression that follows it. Answer the resulting string of symbols."
    ),
    "cfq_like": lambda p: _cfq_like(),
    "cogs_like": lambda p: (
        "Translate the English sentence into its logical form in COGS notation: first every definite noun phrase "
        "(the N) as * N ( x _ i ) ; then the other conjuncts joined by AND, where x _ i stands for the word at 0-based "
        "position i of the sentence, proper names are written as themselves, verbs take roles such as "
        "V . agent ( x _ e , x _ i ), V . theme, V . recipient, V . ccomp, and prepositional phrases are "
        "N . nmod . P ( x _ i , x _ j ). Verbs and nouns are written in their base form."
    ),
}


def _utf8(text: str) -> bool:
    """Whether text can be written as UTF-8 (argv bytes that are not UTF-8 reach Python as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class Pause:
    """Filler tokens between a query's input and its answer (pause tokens, Goyal et al. 2023):
    ``count`` of them, plus ``per_token`` for every input token, written ``token``. The
    export-side counterpart of training's computation steps (``--computation-steps C`` puts
    C x n blank tokens there; ``Pause(per_token=C)`` the same count of filler text). Bounded
    up front (ValueError): count <= MAX_PAUSE, per_token <= MAX_PAUSE_PER_TOKEN, the token
    printable UTF-8 of at most MAX_PAUSE_TOKEN_CHARS characters and none of PROMPT_TOKENS
    (``Answer:``, ``=>``, ``}``, ...); ``clash`` refuses a token of the records themselves."""

    count: int = 0
    per_token: int = 0
    token: str = PAUSE_TOKEN

    def __post_init__(self) -> None:
        for name, most in (("count", MAX_PAUSE), ("per_token", MAX_PAUSE_PER_TOKEN)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"pause {name} must be a non-negative integer, got {value!r}")
            if value > most:
                raise ValueError(f"pause {name} may be at most {most:,}, got {value:,}")
        if not isinstance(self.token, str) or not self.token or self.token.split() != [self.token]:
            raise ValueError(f"the pause token must be one token without spaces, got {self.token!r}")
        if not self.token.isprintable() or not _utf8(self.token) or len(self.token) > MAX_PAUSE_TOKEN_CHARS:
            raise ValueError(f"the pause token must be printable UTF-8 text of at most {MAX_PAUSE_TOKEN_CHARS} characters, got {self.token!r}")
        if self.token in PROMPT_TOKENS:
            raise ValueError(f"the pause token {self.token!r} is a token prompts or replies use (answers would be ambiguous)")

    def clash(self, records: Sequence[Record]) -> str | None:
        """Why this pause cannot fill the queries of records (None: it can): its token is one
        of their input or target tokens (cues and trace separators included), so a filled
        query or answer would read two ways. Without filler there is nothing to clash."""
        if not (self.count or self.per_token):
            return None
        for record in records:
            if self.token in str(record.get("input", "")).split() or self.token in str(record.get("target", "")).split():
                return f"the pause token {self.token!r} is a token of the records (record {record.get('id', '')}): answers would be ambiguous"
        return None

    def length(self, record: Record) -> int:
        """How many filler tokens follow this record's input."""
        return self.count + self.per_token * len(str(record["input"]).split())

    def line(self, record: Record) -> str:
        """The filler line of a record ("" when there is none)."""
        return " ".join([self.token] * self.length(record))

    def describe(self) -> str:
        """How many filler tokens follow an input, in words."""
        parts = ([str(self.count)] if self.count else []) + ([f"{self.per_token} per input token"] if self.per_token else [])
        return " plus ".join(parts)


NO_PAUSE = Pause()


def trace_of(task: str, params: Mapping[str, Any] | None = None, record: Record | None = None) -> str:
    """The trace format a record is answered in: its ``meta.trace``, else the config's ``trace``, else none."""
    fmt = prompt_params(task, params, record).get("trace", "none")
    return fmt if isinstance(fmt, str) and fmt in get_task(task).trace_formats else "none"


def trace_statement(task: str, fmt: str) -> str:
    """What a traced prompt says of the format: the trace's shape and the task's description of its steps."""
    described = get_task(task).trace_formats[fmt]
    return TRACE_STATEMENT.format(steps=f"{TRACE_NAMES[fmt]}: {described}")


def worked_candidates(pool: Sequence[Record]) -> list[Record]:
    """The pool records a worked example is taken from: the two with the shortest inputs of two
    different inputs (ties in pool order), so that one is never the query's own input."""
    ordered = sorted(range(len(pool)), key=lambda i: (len(str(pool[i]["input"]).split()), i))
    chosen: list[Record] = []
    for i in ordered:
        if not chosen or pool[i]["input"] != chosen[0]["input"]:
            chosen.append(pool[i])
            if len(chosen) == 2:
                break
    return chosen


def worked_example(record: Record | None, pool: Sequence[Record]) -> Record | None:
    """The worked example of a traced prompt: the pool record (train) with the shortest input
    (ties: the first), not one with the query's input; None for an empty pool."""
    own = None if record is None else record.get("input")
    return next((r for r in worked_candidates(pool) if r.get("input") != own), None)


def prompt_params(task: str, params: Mapping[str, Any] | None = None, record: Record | None = None) -> dict[str, Any]:
    """The parameters a prompt states: the task's defaults, then the config's parameters, then the record's meta."""
    merged: dict[str, Any] = dict(get_task(task).default_params().to_dict())
    merged.update(params or {})
    if record is not None and isinstance(record.get("meta"), Mapping):
        merged.update(record["meta"])
    return merged


def explanation(task: str, params: Mapping[str, Any] | None = None, record: Record | None = None) -> str:
    """What the task asks, in English, for these parameters (and this record's meta)."""
    values = prompt_params(task, params, record)
    if task in EXPLANATIONS:
        return EXPLANATIONS[task](values)
    spec = get_task(task)
    settings = ", ".join(f"{k}={v}" for k, v in values.items() if not k.startswith(SIZE_WORDS))
    return f"The task {task}: {spec.description}." + (f" Settings: {settings}." if settings else "")


def check_answer_format(answer_format: str) -> str:
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"unknown answer format {answer_format!r}; choose one of {', '.join(ANSWER_FORMATS)}")
    return answer_format


def instruction(
    task: str,
    params: Mapping[str, Any] | None = None,
    record: Record | None = None,
    chat: bool = False,
    answer_format: str = "line",
    pool: Sequence[Record] = (),
    pause: Pause = NO_PAUSE,
) -> str:
    """The instruction of a prompt: the explanation, for a traced record the trace format and a
    worked example from pool (see the module doc), the filler tokens a pause adds, the token
    conventions and the answer format (a chat prompt's in ``answer_format``; a text prompt's is
    always the ``Answer:`` cue)."""
    form = FORMAT_INSTRUCTIONS[check_answer_format(answer_format)] if chat else TEXT_FORMAT
    lines = [explanation(task, params, record)]
    fmt = trace_of(task, params, record)
    if fmt != "none":
        lines.append(trace_statement(task, fmt))
        example = worked_example(record, pool)
        if example is not None:
            lines.append(WORKED_EXAMPLE.format(input=example["input"], target=example["target"]))
    if pause.count or pause.per_token:
        lines.append(PAUSE_STATEMENT.format(count=pause.describe(), token=pause.token))
    return "\n".join(lines) + f"\n{CONVENTIONS} {form}"


def query(record: Record, pause: Pause = NO_PAUSE) -> str:
    """``Input: <tokens>``, and with a pause its line of filler tokens."""
    filler = pause.line(record)
    return f"Input: {record['input']}" + (f"\n{filler}" if filler else "")


def reply(record: Record, answer_format: str = "line") -> str:
    """The expected reply of a record in an answer format (``Answer: <target>`` for ``line``)."""
    return REPLIES[check_answer_format(answer_format)](str(record["target"]))


def _draw_seed(seed: int, record: Record) -> int:
    key = f"gengap-shots\n{seed}\n{record.get('id', '')}\n{record['input']}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little")


def choose_shots(record: Record, pool: Sequence[Record], k: int, seed: int = 0) -> list[Record]:
    """k examples of pool for record: a seeded draw per (seed, record), never one with the record's input."""
    if k <= 0 or not pool:
        return []
    rng = random.Random(_draw_seed(seed, record))
    n = len(pool)
    picks = rng.sample(range(n), min(n, k + 8))  # a few spares for copies of the record itself
    chosen = [pool[i] for i in picks if pool[i]["input"] != record["input"]][:k]
    if len(chosen) < k and len(picks) < n:  # many copies of the record's input: look through the whole pool
        chosen = [pool[i] for i in rng.sample(range(n), n) if pool[i]["input"] != record["input"]][:k]
    return chosen


@dataclass
class Prompter:
    """Prompts of one config: its task, parameters and train pool, the number of shots and the seed.

    ``text(record)`` is the completion prompt, ``chat(record)`` the messages, ``reply(record)``
    the expected reply in ``answer_format``, ``completion(record)`` that reply as an assistant
    message list (TRL's prompt/completion form), ``sft(record)`` the messages with the reply
    appended, ``shots(record)`` the examples it uses.
    """

    task: str
    params: Mapping[str, Any] = field(default_factory=dict)
    pool: Sequence[Record] = ()
    k: int = 0
    seed: int = 0
    system: bool = False
    answer_format: str = "line"
    pause: Pause = NO_PAUSE
    _worked: list[Record] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        get_task(self.task)  # an unknown task fails here, not at the first record
        if not 0 <= self.k <= MAX_SHOTS:
            raise ValueError(f"shots must be in 0..{MAX_SHOTS}, got {self.k}")
        check_answer_format(self.answer_format)

    def shots(self, record: Record) -> list[Record]:
        return choose_shots(record, self.pool, self.k, self.seed)

    def describe(self, record: Record, answer_format: str | None = None) -> str:
        """The instruction of the record's task (the head of text prompts: the answer after
        ``Answer:``; with an answer format, the answer asked for in it, as a chat prompt's)."""
        if self._worked is None:
            self._worked = worked_candidates(self.pool)  # once per prompter: the pool is its train part
        if answer_format is None:
            return instruction(self.task, self.params, record, pool=self._worked, pause=self.pause)
        return instruction(self.task, self.params, record, chat=True, answer_format=answer_format, pool=self._worked, pause=self.pause)

    def query(self, record: Record) -> str:
        """The record's query, with this prompter's filler tokens."""
        return query(record, self.pause)

    def text(self, record: Record) -> str:
        blocks = [self.describe(record)]
        blocks += [f"{self.query(shot)}\n{reply(shot)}" for shot in self.shots(record)]
        blocks.append(f"{self.query(record)}\n{ANSWER_PREFIX}")
        return "\n\n".join(blocks)

    def chat(self, record: Record) -> list[Message]:
        head = self.describe(record, self.answer_format)
        turns: list[Message] = [{"role": "system", "content": head}] if self.system else []
        for shot in self.shots(record):
            turns.append({"role": "user", "content": self.query(shot)})
            turns.append({"role": "assistant", "content": self.reply(shot)})
        turns.append({"role": "user", "content": self.query(record)})
        if not self.system:
            first = turns[0]
            turns[0] = {"role": "user", "content": f"{head}\n\n{first['content']}"}
        return turns

    def reply(self, record: Record) -> str:
        return reply(record, self.answer_format)

    def completion(self, record: Record) -> list[Message]:
        return [{"role": "assistant", "content": self.reply(record)}]

    def sft(self, record: Record) -> list[Message]:
        return self.chat(record) + self.completion(record)


@dataclass
class TaskPrompters:
    """Prompts of a multi-task config: each record is prompted by the Prompter of its own task
    (that task's instruction and parameters; shots drawn from that task's train records only,
    so a task held out for test is prompted zero-shot, by its instruction alone)."""

    prompters: Mapping[str, Prompter]
    answer_format: str = "line"

    def of(self, record: Record) -> Prompter:
        try:
            return self.prompters[str(record["task"])]
        except KeyError:
            raise ValueError(f"record {record.get('id')!r} is of task {record.get('task')!r}, not one of {', '.join(self.prompters)}") from None

    @property
    def k(self) -> int:
        return max(p.k for p in self.prompters.values())

    def shots(self, record: Record) -> list[Record]:
        return self.of(record).shots(record)

    def describe(self, record: Record, answer_format: str | None = None) -> str:
        return self.of(record).describe(record, answer_format)

    def query(self, record: Record) -> str:
        return self.of(record).query(record)

    def text(self, record: Record) -> str:
        return self.of(record).text(record)

    def chat(self, record: Record) -> list[Message]:
        return self.of(record).chat(record)

    def reply(self, record: Record) -> str:
        return self.of(record).reply(record)

    def completion(self, record: Record) -> list[Message]:
        return self.of(record).completion(record)

    def sft(self, record: Record) -> list[Message]:
        return self.of(record).sft(record)


def config_prompter(
    tasks: Mapping[str, Mapping[str, Any]], pool: Sequence[Record], k: int = 0, seed: int = 0, system: bool = False, answer_format: str = "line",
    pause: Pause = NO_PAUSE,
) -> Prompter | TaskPrompters:
    """The prompter of a config whose records come from `tasks` (task -> parameters): a
    Prompter for one task, a TaskPrompters (shots and worked examples from each task's own pool
    records) for several."""
    made = {
        task: Prompter(task, dict(params), [r for r in pool if r["task"] == task] if len(tasks) > 1 else pool,
                       k=k, seed=seed, system=system, answer_format=answer_format, pause=pause)
        for task, params in tasks.items()
    }
    return next(iter(made.values())) if len(made) == 1 else TaskPrompters(made, answer_format)


AnyPrompter = Prompter | TaskPrompters  # what exporters take: one task's prompter, or a multi-task config's
