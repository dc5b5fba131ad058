"""Lexicon resampling: which words play which lexical roles of a task, drawn from a seed.

A task with a lexicon (SCAN, COGS, cogs_like, pcfg_set, the facts tasks, letter_analogy)
declares its lexical classes in a :class:`LexiconSpec`: each :class:`WordClass` lists its
*roles*, the items of lexicon 0 (the task's own words: role ``jump`` is written ``jump``),
and the *pool* of items a lexicon k > 0 draws for them. An item is a tuple of forms, the
tokens that stand for it (a COGS verb: lemma, past, participle; a facts relation: ``r3`` and
``r3^-1``); the forms of a role and of the pool item that replaces it correspond place by
place, so a token map carries every form over. Lexicon k draws, class by class from stream
``lexicon`` (gengap.generators.seeding.lexicon_rng over the spec's name and k), a permutation
of the pool; role i is written with pool item ``perm[i]``. Lexicon 0 is the identity.

A lexicon is a rendering (the ``lexicon`` knob is a rendering knob, gengap.generators.params.knob):
a setting draws the same examples whatever its lexicon, and a record of lexicon k is its
lexicon-0 twin with every role form replaced token by token (input and target; the
``structure`` is kept: it names roles, so atoms, compounds, categories and every split read
from them are those of the twin), its ``meta.lexicon`` set to k. Checkers read a record of
lexicon k through :func:`role_view`: its tokens mapped back to the roles, then the task's
own lexicon-0 checker, which re-derives the answer from that input; answers are mapped
forward again. :func:`lexical` wires this into a task class.

A token of a record of lexicon k that is a role form of the task but no word of lexicon k
(``jump`` when jump's role is written ``dax`` and no role is written ``jump``) makes its
input unreadable (ValueError), and a wrong token in a prediction; a token that is neither
(``I_JUMP``, ``->``) is kept as it is.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from gengap.generators.batch import Batch
from gengap.generators.params import knob
from gengap.generators.seeding import lexicon_rng
from gengap.generators.text import from_strings

KEY = "lexicon"  # the parameter and the meta field
MAX_LEXICON = 1_000_000
FOREIGN = "<no-word-of-this-lexicon>"  # a prediction's token that is a role form but no word of the record's lexicon
Forms = tuple[str, ...]
T = TypeVar("T")


def lexicon_knob() -> Any:
    """The ``lexicon`` parameter of a task with lexical roles (a rendering knob, default 0)."""
    return knob(
        0,
        lo=0,
        hi=MAX_LEXICON,
        rendering=True,
        doc="0: the task's own words; k > 0: which words play its lexical roles, drawn from seed k "
        "(the same examples, written with other words; records carry meta.lexicon)",
    )


@dataclass(frozen=True)
class WordClass:
    """One lexical class: its roles (lexicon 0's items) and the pool a lexicon k > 0 draws
    from (``pool_size`` items; ``items(js)`` gives the items js, in order). Every item of the
    class has the same number of forms, equal in the same places."""

    name: str
    roles: Sequence[Forms]
    pool_size: int
    items: Callable[[Sequence[int]], Sequence[Forms]]

    @classmethod
    def permuted(cls, name: str, roles: Iterable[Sequence[str] | str], extra: Iterable[Sequence[str] | str] = ()) -> "WordClass":
        """A class whose lexicons permute its roles and ``extra`` items (unfamiliar words)."""
        mine = tuple(_forms(x) for x in roles)
        pool = mine + tuple(_forms(x) for x in extra)
        return cls(name, mine, len(pool), lambda js: [pool[j] for j in js])


def classes_of(items: Iterable[tuple[str, Sequence[str], Sequence[str]]]) -> tuple[WordClass, ...]:
    """Permuted classes of (class name, forms, form names) items: items of one name whose forms
    are equal in the same places (``split``'s past and participle are its lemma, ``eat``'s are
    not) form one class, so that a token map carries every form over; a name split so is
    suffixed with the forms that are alike (``verb transitive (past = participle)``) or
    ``(forms distinct)``. Classes keep the order of their first items."""
    groups: dict[tuple[str, tuple[int, ...]], list[Forms]] = {}
    labels: dict[tuple[str, tuple[int, ...]], str] = {}
    for name, forms, form_names in items:
        forms = _forms(forms)
        pattern = tuple(forms.index(f) for f in forms)
        groups.setdefault((name, pattern), []).append(forms)
        alike = [" = ".join(n for n, p in zip(form_names, pattern) if p == i) for i in sorted(set(pattern))]
        labels[(name, pattern)] = ", ".join(a for a in alike if "=" in a) or "forms distinct"
    names = [name for name, _ in groups]
    return tuple(
        WordClass.permuted(f"{name} ({labels[key]})" if names.count(name) > 1 else name, roles)
        for key, roles in groups.items()
        for name in (key[0],)
    )


def _forms(item: Sequence[str] | str) -> Forms:
    return (item,) if isinstance(item, str) else tuple(item)


@dataclass(frozen=True)
class LexiconSpec:
    """The lexical classes of a task (or of a family of tasks sharing one lexicon: the facts
    tasks), named for the ``lexicon`` stream."""

    name: str
    classes: Callable[[], Sequence[WordClass]]


@dataclass(frozen=True)
class Lexicon:
    """Lexicon k of a spec: role form -> its word (``forward``) and back (``backward``)."""

    spec: str
    index: int
    forward: Mapping[str, str]
    backward: Mapping[str, str]
    role_forms: frozenset[str]
    words: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # class -> role's first form -> word

    def write(self, text: str) -> str:
        """text (role forms) written in this lexicon."""
        if not self.index:
            return text
        forward = self.forward
        return " ".join([forward.get(t, t) for t in text.split()])

    def read(self, text: str, strict: bool = True) -> str:
        """text of this lexicon with its words mapped back to role forms; a role form that is no
        word of the lexicon raises ValueError (strict) or becomes :data:`FOREIGN`."""
        if not self.index:
            return text
        out = []
        for token in text.split():
            role = self.backward.get(token)
            if role is None:
                if token in self.role_forms:
                    if strict:
                        raise ValueError(f"{token!r} is no word of {self.spec} lexicon {self.index}")
                    role = FOREIGN
                else:
                    role = token
            out.append(role)
        return " ".join(out)


@functools.lru_cache(maxsize=None)
def _classes(spec: LexiconSpec) -> tuple[tuple[WordClass, ...], frozenset[str]]:
    """The spec's classes and every role form (built once per process)."""
    classes = tuple(spec.classes())
    return classes, frozenset(form for cls in classes for role in cls.roles for form in role)


@functools.lru_cache(maxsize=16)
def _lexicon(spec: LexiconSpec, index: int) -> Lexicon:
    classes, role_forms = _classes(spec)
    if index == 0:
        return Lexicon(spec.name, 0, {}, {}, role_forms)
    rng = lexicon_rng(spec.name, index)
    forward: dict[str, str] = {}
    words: dict[str, dict[str, str]] = {}
    for cls in classes:
        items = cls.items(rng.permutation(cls.pool_size)[: len(cls.roles)].tolist())
        words[cls.name] = {role[0]: item[0] for role, item in zip(cls.roles, items)}
        for place in range(len(cls.roles[0]) if cls.roles else 0):
            forward.update(zip([role[place] for role in cls.roles], [item[place] for item in items]))
    backward = {word: role for role, word in forward.items()}
    return Lexicon(spec.name, index, forward, backward, role_forms, words)


def lexicon_of(spec: LexiconSpec, index: int) -> Lexicon:
    """Lexicon `index` of a spec (built once per process; ValueError outside 0..MAX_LEXICON)."""
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_LEXICON:
        raise ValueError(f"meta.{KEY}={index!r} is not an integer from 0 to {MAX_LEXICON:,}")
    return _lexicon(spec, index)


def record_lexicon(example: Mapping[str, Any]) -> int:
    """The lexicon a record is written in: ``meta.lexicon``, 0 without it."""
    meta = example.get("meta")
    return meta.get(KEY, 0) if isinstance(meta, Mapping) else 0


def role_view(spec: LexiconSpec, example: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record as its lexicon-0 twin: input and target read back to role forms (the target
    leniently: a stray word becomes FOREIGN), ``meta.lexicon`` dropped. The record itself when
    it is of lexicon 0; ValueError when meta.lexicon is malformed or the input holds a role
    form that is no word of the record's lexicon."""
    index = record_lexicon(example)
    if index == 0 and not (isinstance(example.get("meta"), Mapping) and KEY in example["meta"]):
        return example
    lexicon = lexicon_of(spec, index)
    view = dict(example)
    view["meta"] = {k: v for k, v in example["meta"].items() if k != KEY}
    if not view["meta"]:
        del view["meta"]
    if isinstance(example.get("input"), str):
        view["input"] = lexicon.read(example["input"])
    if isinstance(example.get("target"), str):
        view["target"] = lexicon.read(example["target"], strict=False)
    return view


def relabel(batch: Batch, spec: LexiconSpec, index: int) -> Batch:
    """The batch written in lexicon `index` (unchanged for 0): inputs and targets mapped token
    by token, structure and features kept, ``meta.lexicon`` set."""
    if not index:
        return batch
    lexicon = lexicon_of(spec, index)
    write = lexicon.write
    inputs = [write(raw.decode()) for raw in batch.inputs.tolist()]
    targets = [write(raw.decode()) for raw in batch.targets.tolist()]
    meta = {**(batch.meta or {}), KEY: index}
    return Batch(from_strings(inputs), from_strings(targets), batch.features, batch.structure, meta)


# -- wiring into a task class ------------------------------------------------------------------

# methods whose first argument after self is a record, by what they return or take besides
_READ = ("derive", "measure", "structure_problem", "category", "rule_system")  # read the role view
_ANSWER_OUT = ("solve",)  # an answer: written forward
_TOKENS_OUT = ("trace_tokens",)  # a token list: written forward
_TEXT_IN = ("check", "check_parts", "check_answer", "possible_answer")  # a prediction or answer: read back
_TOKENS_IN = ("check_trace", "verify_trace", "step_verdicts")  # a trace (token list): read back
_PARAMS_OUT = ("generate", "enumerate")  # a batch drawn with params: written in params.lexicon


def _wrap(name: str, method: Callable[..., Any], spec: LexiconSpec) -> Callable[..., Any]:
    if name in _PARAMS_OUT:

        @functools.wraps(method)
        def drawn(self: Any, *args: Any) -> Any:
            batch = method(self, *args)
            return None if batch is None else relabel(batch, spec, args[-1].lexicon)

        return drawn

    def lexicon_in(example: Mapping[str, Any]) -> Lexicon:
        return lexicon_of(spec, record_lexicon(example))

    @functools.wraps(method)
    def wrapped(self: Any, example: Mapping[str, Any], *args: Any) -> Any:
        if name in _TEXT_IN or name in _TOKENS_IN:
            try:
                view, lexicon = role_view(spec, example), lexicon_in(example)
            except ValueError:
                if name == "step_verdicts":
                    return [False] * len(self.trace_steps(*args))
                return (False, False) if name == "check_parts" else False
            first = args[0]
            first = lexicon.read(first, strict=False) if name in _TEXT_IN else lexicon.read(" ".join(first), strict=False).split()
            return method(self, view, first, *args[1:])
        view = role_view(spec, example)
        result = method(self, view, *args)
        if name in _ANSWER_OUT:
            return lexicon_in(example).write(result)
        if name in _TOKENS_OUT:
            return lexicon_in(example).write(" ".join(result)).split()
        return result

    return wrapped


def lexicon_problem(spec: LexiconSpec, example: Mapping[str, Any]) -> str | None:
    """Why a record's meta.lexicon cannot be read (None: it can, or the record has none)."""
    meta = example.get("meta")
    if not isinstance(meta, Mapping) or KEY not in meta:
        return None
    try:
        lexicon_of(spec, meta[KEY])
    except ValueError as err:
        return str(err)
    return None


def lexical(spec: LexiconSpec) -> Callable[[type[T]], type[T]]:
    """Class decorator: the task's records may be written in any lexicon of spec. Its
    ``generate``/``enumerate`` write their batch in ``params.lexicon``; every method of the
    class that reads a record (solve, trace_tokens, verify_trace, derive, measure,
    structure_problem, category, possible_answer; check, check_parts, check_answer,
    check_trace, step_verdicts where the class overrides them) reads it through
    :func:`role_view`, predictions and traces mapped back and answers and traces forward.
    Methods the class keeps from Task are left alone: they read records through those
    (Task.check_answer compares a prediction with ``solve``'s answer, written in the record's
    lexicon), so a task that keeps Task's checker still has it (``type(task).check is
    Task.check``), and one that cannot enumerate still cannot. ``meta_problem`` also reports a
    malformed meta.lexicon."""

    def decorate(cls: type[T]) -> type[T]:
        from gengap.generators.task import Task  # imported when a task class is decorated: task.py imports this module

        for name in (*_READ, *_ANSWER_OUT, *_TOKENS_OUT, *_TEXT_IN, *_TOKENS_IN, *_PARAMS_OUT):
            if getattr(cls, name) is not getattr(Task, name):  # Task's own read a record through the methods wrapped here
                setattr(cls, name, _wrap(name, getattr(cls, name), spec))
        meta_problem = getattr(cls, "meta_problem")

        @functools.wraps(meta_problem)
        def checked_meta(self: Any, example: Mapping[str, Any]) -> str | None:
            return lexicon_problem(spec, example) or meta_problem(self, example)

        setattr(cls, "meta_problem", checked_meta)
        setattr(cls, "lexicon_spec", spec)
        return cls

    return decorate


def words_of(spec: LexiconSpec, index: int) -> dict[str, dict[str, str]]:
    """Class -> role (its first form) -> the word lexicon `index` writes it with (lexicon 0: each
    role its own word)."""
    if index == 0:
        return {cls.name: {role[0]: role[0] for role in cls.roles} for cls in _classes(spec)[0]}
    return {name: dict(chosen) for name, chosen in lexicon_of(spec, index).words.items()}


SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")  # 70 consonant-vowel syllables


def made_up_words(js: Sequence[int], syllables: int) -> list[str]:
    """Made-up words js of ``syllables`` consonant-vowel syllables each: word j spells the
    base-70 digits of j, most significant first (j < 70 ** syllables; word 0 of 3 syllables is
    ``bababa``)."""
    places = len(SYLLABLES) ** np.arange(syllables - 1, -1, -1)
    digits = np.asarray(js, dtype=np.int64)[:, None] // places % len(SYLLABLES)
    return ["".join(parts) for parts in np.asarray(SYLLABLES, dtype=object)[digits].tolist()]
