"""Every seed and random stream of gengap, derived in this one module from named streams.

A stream's randomness is a pure function of a seed and a path of labels, computed with
sha256 and numpy's ``SeedSequence``: never ``seed + index`` (nearby seeds would share
examples), never Python's ``hash()`` (salted per process), never a bare constant. Two
primitives do all the work: :func:`labels_key` (32-bit words of sha256 over the labels
joined by newlines, a SeedSequence spawn key) and :func:`labels_seed` (the first 63 bits
of that digest, for code that wants an integer seed).

=============  ============================================  ==========================================================
stream         seeds                                         derivation
=============  ============================================  ==========================================================
``block``      block b of (task, params): the examples       SeedSequence(seed, spawn_key=(*key(task, canonical params), b))
``split``      a split's partition and validation carving    SeedSequence(seed, spawn_key=key("split", strategy)[:2])
``exposure``   the test-side examples a split moves into     SeedSequence(split seed, spawn_key=key("exposure"))
               train (``exposure: k``; gengap.splits.exposure)
``train_sample`` the train records a split with a train budget   SeedSequence(split seed, spawn_key=key("train-sample"))
               keeps: the random draw, the diverse sampler's
               ties (gengap.splits.diverse)
``chain``      chain i of a multi-chain search (MCD)         SeedSequence(s, spawn_key=key("chain", i)), s drawn from the search's generator
``config``     one config of a release (from the suite seed) seed63(suite seed, config name)
``side``       setting i of a sampled split's side           seed63(seed, side, i)
``validation`` round r of the validation candidates of train  seed63(seed, "validation", i, r)
               setting i of a sampled split (gengap.splits.validation)
``component``  task i of a multi-task pool (its records)     seed63(seed, "component", task, i)
``subsample``  a release's caps on part sizes                SeedSequence(config seed, spawn_key=key("subsample"))
``init``       a baseline model's initial weights            seed63("gengap-baselines", "init", run seed)
``data``       a baseline run's order of training examples   seed63("gengap-baselines", "data", run seed)
``epoch``      the permutation of epoch e of that order      SeedSequence(entropy=(data seed, e))
``evaluation`` the fixed evaluation subset of a baseline     SeedSequence(0, spawn_key=key("evaluation"))
``estimate``   the records measured to estimate a config's   SeedSequence(0, spawn_key=key("estimate"))
               memory (gengap.limits; no data comes of it)
``support``    a seeded choice of coordinates stored in a     SeedSequence(support seed, spawn_key=key("support"))
               task's params (boolean_function's support)
``curriculum`` the level of each position in block b of a    SeedSequence(seed, spawn_key=(*key("curriculum"), b))
               record stream that mixes levels
``mixture``    the component of each position in block b of  SeedSequence(seed, spawn_key=(*key("mixture"), b))
               a multi-task mixture stream
``world``      the relations and attributes of a seeded      SeedSequence(world seed, spawn_key=key("world", sizes))
               world (gengap.generators.worlds: a facts world,
               a knowledge base), from its knobs
``binding``    the entities an execution check binds a       SeedSequence(0, spawn_key=key("binding", task, question))
               question's placeholders to (cfq_like)
``alphabet``   the order of permuted alphabet i of a task    SeedSequence(seed63(task, "alphabet", i))
               (letter_analogy's counterfactual alphabets)
``lexicon``    lexicon k of a task's lexical roles: which    SeedSequence(0, spawn_key=key("lexicon", spec, k))
               words play them (gengap.generators.lexicons;
               spec: scan, cogs, facts, ...)
``noise``      which training targets a baseline run with    SeedSequence(noise seed, spawn_key=key("label-noise"))
               label noise corrupts, and their wrong answers
``cue``        the shortcut cues of one part of a split      SeedSequence(seed, spawn_key=key("cue", part))
               (gengap.generators.cues: agree or not, which answer)
``fresh``      fresh test part d of a release config         seed63(config seed, "fresh", d); round r of the candidates
               (gengap.fresh): its seed, its candidates,      of test setting i: seed63(fresh seed, "fresh", i, r); its
               its choices (records of an enumeration,        choices: SeedSequence(fresh seed, spawn_key=key("fresh"))
               the MCD search)
``process``    which steps of a record's trace process       SeedSequence(seed, spawn_key=key("process-labels", record id))
               labels corrupt, and how (gengap.generators.process_labels)
``positions``  training pass t of a model with randomized    SeedSequence(position seed, spawn_key=(*key("positions"), t))
               positions or abacus places: the positions      (position seed: drawn at initialisation, under the init seed)
               and offsets (gengap.baselines.positions)
``length_test`` the N test sequences of one input length a    SeedSequence(seed, spawn_key=(*key("length-test"), *key(task, canonical params)))
               baseline samples per length (gengap.baselines.length_test; the same for every run seed)
=============  ============================================  ==========================================================

key(...) is :func:`labels_key`, seed63(...) :func:`labels_seed`; canonical params is
``Params.canonical()``, which leaves out rendering knobs (``trace``: how a target is written,
not which example is drawn), so a traced setting draws its answer-only twin's examples. ``block``, ``split``,
``config``, ``side``, ``init``, ``data`` and ``epoch`` are derived as gengap always has,
so examples, splits, releases and baseline runs regenerate byte for byte; ``subsample``,
``evaluation`` and ``estimate`` replaced bare constants; ``support`` is new with
boolean_function, ``binding`` with cfq_like's execution check, ``lexicon`` with lexicon resampling (gengap.generators.lexicons), ``curriculum`` with record streams (gengap.generators.streams), ``mixture`` with
multi-task mixtures (gengap.generators.mixtures), ``component`` with multi-task pools (gengap.splits.tasks), ``noise`` with label
noise (gengap.baselines.label_noise), ``cue`` with shortcut cues (gengap.generators.cues), ``fresh``
with fresh test parts (gengap.fresh), ``train_sample`` with train budgets (gengap.splits.diverse), ``process`` with process labels (gengap.generators.process_labels)
``positions`` with the randomized and abacus positional encodings (gengap.baselines.positions)
and ``length_test`` with per-length test sampling (gengap.baselines.length_test).
Tests pin one value of every
stream (tests/test_seeding.py).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gengap.generators.params import Params

KEY_WORDS = 4  # 32-bit words of a stream key
SPLIT_KEY_WORDS = 2  # the split stream has always used two
SEED_BITS = 63  # integer seeds fit a signed 64-bit integer


def _digest(labels: tuple[object, ...]) -> bytes:
    return hashlib.sha256("\n".join(str(label) for label in labels).encode()).digest()


def labels_key(*labels: object, words: int = KEY_WORDS) -> tuple[int, ...]:
    """`words` little-endian 32-bit words of sha256 over the labels joined by newlines."""
    digest = _digest(labels)
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 4 * words, 4))


def labels_seed(*labels: object) -> int:
    """A non-negative 63-bit integer seed: the first 8 bytes of the labels' sha256, little-endian, >> 1."""
    return int.from_bytes(_digest(labels)[:8], "little") >> (64 - SEED_BITS)


def stream(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    """PCG64 over SeedSequence(entropy=seed, spawn_key=key)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed, spawn_key=key)))


def probe_rng() -> np.random.Generator:
    """The fixed stream of a one-record probe that reads a task's keys, never its values (gengap check's
    known difficulty features): labels ("probe",)."""
    return stream(labels_seed("probe"), labels_key("probe"))


# -- generators ------------------------------------------------------------------------


def stream_key(task: str, params: "Params") -> tuple[int, ...]:
    """The key of the (task, canonical params) example stream."""
    return labels_key(task, params.canonical())


def block_rng(seed: int, task: str, params: "Params", block: int) -> np.random.Generator:
    """Stream ``block``: the random generator of block `block` of a (seed, task, params) run."""
    return stream(seed, (*stream_key(task, params), block))


def curriculum_rng(seed: int, block: int) -> np.random.Generator:
    """Stream ``curriculum``: the uniforms that choose the level of each position of block
    `block` of a record stream (independent of the task, so any curriculum can read them)."""
    return stream(seed, (*labels_key("curriculum"), block))


def mixture_rng(seed: int, block: int) -> np.random.Generator:
    """Stream ``mixture``: the uniforms that choose the component (task) of each position of
    block `block` of a multi-task mixture stream (independent of the ``curriculum`` uniforms)."""
    return stream(seed, (*labels_key("mixture"), block))


# -- splits and releases -------------------------------------------------------------------


def split_rng(seed: int, strategy: str) -> np.random.Generator:
    """Stream ``split``: partition and validation carving of a split made with `strategy`."""
    return stream(seed, labels_key("split", strategy, words=SPLIT_KEY_WORDS))


def exposure_rng(seed: int) -> np.random.Generator:
    """Stream ``exposure``: which test-side examples a split with ``exposure: k`` moves into train
    (one permutation of the test inputs; k takes its first k, so smaller k choose subsets)."""
    return stream(seed, labels_key("exposure"))


def train_sample_rng(seed: int) -> np.random.Generator:
    """Stream ``train_sample``: the train records a split with ``train_budget`` keeps (the random
    sampler's draw, the order that breaks the diverse sampler's ties)."""
    return stream(seed, labels_key("train-sample"))


def chain_rngs(rng: np.random.Generator, count: int) -> list[np.random.Generator]:
    """Stream ``chain``: `count` independent generators for the chains of a search that
    draws from `rng` (one 63-bit draw s, then SeedSequence(s, spawn_key=key("chain", i)))."""
    base = int(rng.integers(0, 2**SEED_BITS))
    return [stream(base, labels_key("chain", i)) for i in range(count)]


def config_seed(suite_seed: int, config: str) -> int:
    """Stream ``config``: the seed of one release config, from the suite seed and its name."""
    return labels_seed(suite_seed, config)


def side_seed(seed: int, side: str, index: int) -> int:
    """Stream ``side``: the seed of setting `index` of a sampled split's side ("train" or "test")."""
    return labels_seed(seed, side, index)


def validation_seed(seed: int, index: int, round_: int) -> int:
    """Stream ``validation``: the seed of round `round_` of the validation candidates drawn from
    train setting `index` of a sampled split (gengap.splits.validation.draw_validation)."""
    return labels_seed(seed, "validation", index, round_)


def component_seed(seed: int, task: str, index: int) -> int:
    """Stream ``component``: the seed of the records of task `task`, the index-th task of a
    multi-task pool (gengap.splits.tasks), from the pool's seed."""
    return labels_seed(seed, "component", task, index)


def subsample_rng(seed: int) -> np.random.Generator:
    """Stream ``subsample``: which records a release keeps when it caps a part's size."""
    return stream(seed, labels_key("subsample"))


def cue_rng(seed: int, part: str) -> np.random.Generator:
    """Stream ``cue``: whether each record of `part` (train, validation, test) of a split with
    shortcut cues gets an agreeing cue, and which other answer it names otherwise."""
    return stream(seed, labels_key("cue", part))


def fresh_seed(config_seed: int, draw: int) -> int:
    """Stream ``fresh``: the seed of fresh test part `draw` of a release config (gengap.fresh), from
    the config's seed (its labels differ from every stream the release itself draws from)."""
    return labels_seed(config_seed, "fresh", draw)


def fresh_round_seed(seed: int, setting: int, round_: int) -> int:
    """Stream ``fresh``: the seed of round `round_` of the candidates a fresh draw of seed `seed`
    generates from test setting `setting` (the block stream of that seed then draws them)."""
    return labels_seed(seed, "fresh", setting, round_)


def fresh_rng(seed: int) -> np.random.Generator:
    """Stream ``fresh``: the choices of a fresh draw of seed `seed` beyond its candidates (which
    records of an enumerated pool it keeps; the start and moves of its MCD search)."""
    return stream(seed, labels_key("fresh"))


def process_rng(seed: int, record_id: str) -> np.random.Generator:
    """Stream ``process``: which steps of one record's trace process labels corrupt and the wrong
    values they get, a function of the seed and the record's id alone (never of other records)."""
    return stream(seed, labels_key("process-labels", record_id))


def support_rng(seed: int) -> np.random.Generator:
    """Stream ``support``: a choice a task makes from its params alone (not per example), e.g. the
    coordinates boolean_function reads when its support is seeded."""
    return stream(seed, labels_key("support"))


def alphabet_rng(task: str, index: int) -> np.random.Generator:
    """Stream ``alphabet``: the order of a task's permuted alphabet `index` (letter_analogy's
    counterfactual alphabets), a function of the index alone."""
    return np.random.default_rng(labels_seed(task, "alphabet", index))


def lexicon_rng(spec: str, index: int) -> np.random.Generator:
    """Stream ``lexicon``: the permutations that choose which words play the lexical roles of a
    task (spec: the task, or the family sharing one lexicon) in its lexicon `index`
    (gengap.generators.lexicons), a function of the two alone."""
    return stream(0, labels_key("lexicon", spec, index))


def world_rng(world_seed: int, sizes: str) -> np.random.Generator:
    """Stream ``world``: the facts of a seeded world (gengap.generators.worlds), a function of its
    seed knob and its sizes (canonical text, which names the kind of world too) only, so every
    task and split of one world setting queries the same facts."""
    return stream(world_seed, labels_key("world", sizes))


def binding_rng(task: str, question: str) -> np.random.Generator:
    """Stream ``binding``: the search order and the random entities with which an execution check
    binds a question's placeholders (gengap.generators.tasks.cfq_like), a function of the question
    alone, so every check of one question on one world binds it alike."""
    return stream(0, labels_key("binding", task, question))


def estimate_rng() -> np.random.Generator:
    """Stream ``estimate``: the sample of records measured to estimate memory (no data comes of it)."""
    return stream(0, labels_key("estimate"))


# -- baselines -------------------------------------------------------------------------------

BASELINES = "gengap-baselines"


def init_seed_of(run_seed: int) -> int:
    """Stream ``init``: the seed of a baseline model's initial weights for a run seed."""
    return labels_seed(BASELINES, "init", run_seed)


def data_seed_of(run_seed: int) -> int:
    """Stream ``data``: the seed of a baseline run's training order for a run seed."""
    return labels_seed(BASELINES, "data", run_seed)


def epoch_rng(data_seed: int, epoch: int) -> np.random.Generator:
    """Stream ``epoch``: the permutation of training examples in epoch `epoch` (the data seed
    and the epoch are the entropy: the data seed already names the stream)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence((data_seed, epoch))))


def evaluation_rng() -> np.random.Generator:
    """Stream ``evaluation``: the fixed subset of records a baseline evaluates (same for every seed)."""
    return stream(0, labels_key("evaluation"))


def positions_rng(position_seed: int, draw: int) -> np.random.Generator:
    """Stream ``positions``: the randomized positions and abacus offsets of training pass ``draw``
    of a model whose position seed (a buffer drawn at its initialisation) is position_seed."""
    return stream(position_seed, (*labels_key("positions"), draw))


def length_test_rng(seed: int, task: str, params: "Params") -> np.random.Generator:
    """Stream ``length_test``: the test sequences a baseline samples at the params of one input length."""
    return stream(seed, (*labels_key("length-test"), *stream_key(task, params)))


def noise_rng(noise_seed: int) -> np.random.Generator:
    """Stream ``noise``: which training targets label noise corrupts, and the wrong answers they get."""
    return stream(noise_seed, labels_key("label-noise"))
