"""gengap.generators.seeding: every stream pinned, derived in one module only, independent of PYTHONHASHSEED."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gengap.generators import get_task
from gengap.generators.seeding import (
    block_rng,
    chain_rngs,
    component_seed,
    config_seed,
    data_seed_of,
    epoch_rng,
    estimate_rng,
    exposure_rng,
    train_sample_rng,
    evaluation_rng,
    fresh_rng,
    fresh_round_seed,
    fresh_seed,
    init_seed_of,
    labels_key,
    labels_seed,
    mixture_rng,
    positions_rng,
    probe_rng,
    process_rng,
    side_seed,
    validation_seed,
    split_rng,
    subsample_rng,
    support_rng,
    world_rng,
    alphabet_rng,
    binding_rng,
    lexicon_rng,
    length_test_rng,
)

ROOT = Path(__file__).resolve().parents[1]
PARITY = get_task("parity_check").default_params()

# First two raw 64-bit outputs of each generator stream (PCG64.random_raw, stable across numpy
# versions). block, split, epoch: the values gengap has always produced.
RAW = {
    "block": (lambda: block_rng(3, "parity_check", PARITY, 2), [4453113276931018023, 15721898322303344598]),
    "split": (lambda: split_rng(3, "mcd"), [9858090936782856166, 13404907348222526307]),
    "subsample": (lambda: subsample_rng(5), [1837404704961592534, 15460081829374261129]),
    "epoch": (lambda: epoch_rng(7, 2), [5127646655721812508, 8211625751441680169]),
    "evaluation": (evaluation_rng, [15277208888166227079, 91175429123790233]),
    "estimate": (estimate_rng, [2001831332550685535, 6476860034933157182]),
    "support": (lambda: support_rng(0), [11266166488492862390, 13881406992188585247]),
    "chain": (lambda: chain_rngs(split_rng(3, "mcd"), 2)[1], [10707578314974008718, 16288687403343750112]),
    "world": (lambda: world_rng(0, "100,4,2,10"), [9829737160469135396, 18331550559492713324]),
    "probe": (probe_rng, [4787212051202021971, 12067494252029775622]),
    "alphabet": (lambda: alphabet_rng("letter_analogy", 1), [13265736068948306774, 4474129699305061389]),
    "mixture": (lambda: mixture_rng(3, 2), [13678582061079363098, 9501132319371791091]),
    "exposure": (lambda: exposure_rng(3), [7486109062484424729, 7275323622380304667]),
    "train_sample": (lambda: train_sample_rng(3), [12736991742654724246, 8924545475052220218]),
    "fresh": (lambda: fresh_rng(3), [17327491203985367714, 7724983903151345781]),
    "binding": (lambda: binding_rng("cfq_like", "Who directed M0 ?"), [10937258924664223537, 14365554015025531375]),
    "process": (lambda: process_rng(3, "parity_check-0123456789abcdef"), [15659892424559991647, 7733394867506080535]),
    "positions": (lambda: positions_rng(3, 2), [787388216101490676, 2397501687541677524]),
    "lexicon": (lambda: lexicon_rng("scan", 1), [13060086102559544048, 10032027746701359364]),
    "length_test": (lambda: length_test_rng(0, "parity_check", PARITY), [5078741054853364561, 15982648314041101462]),
}


@pytest.mark.parametrize("name", sorted(RAW))
def test_generator_streams_are_pinned(name: str) -> None:
    make, expected = RAW[name]
    assert [int(v) for v in make().bit_generator.random_raw(2)] == expected


def test_integer_seeds_are_pinned() -> None:
    # 83274510058008343 is the seed of scan-mcd in every gengap-core manifest so far
    assert config_seed(20261130, "scan-mcd") == 83274510058008343
    assert side_seed(11, "test", 1) == 1488106885669671028
    assert validation_seed(11, 0, 1) == 4964749120075325733
    assert component_seed(11, "parity_check", 1) == 8430144797217658949
    assert init_seed_of(2) == 6692606887555221245
    assert data_seed_of(2) == 6810602600827606827
    assert fresh_seed(83274510058008343, 0) == 2453255455785097087  # draw 0 of scan-mcd
    assert fresh_round_seed(11, 1, 2) == 8039988318697573584


def test_fresh_seeds_by_hand_and_never_the_releases() -> None:
    """seed63(config seed, "fresh", draw), written out with hashlib; a fresh seed is none of the
    seeds the release drew its config from (the config's, its sides', its validation rounds')."""
    import hashlib

    for config, draw in ((83274510058008343, 0), (7, 12), (0, 1)):
        expected = int.from_bytes(hashlib.sha256(f"{config}\nfresh\n{draw}".encode()).digest()[:8], "little") >> 1
        assert fresh_seed(config, draw) == expected
        used = {config} | {side_seed(config, side, i) for side in ("train", "test") for i in range(4)}
        used |= {validation_seed(config, i, r) for i in range(4) for r in range(4)}
        assert fresh_seed(config, draw) not in used
    assert fresh_seed(5, 0) != fresh_seed(5, 1) != fresh_seed(6, 1)
    assert fresh_round_seed(5, 0, 1) != fresh_round_seed(5, 1, 0)


@pytest.mark.smoke
def test_primitives_hand_computed() -> None:
    import hashlib

    digest = hashlib.sha256(b"split\nmcd").digest()
    assert labels_key("split", "mcd", words=2) == (
        int.from_bytes(digest[0:4], "little"),
        int.from_bytes(digest[4:8], "little"),
    )
    assert labels_seed(7, "a") == int.from_bytes(hashlib.sha256(b"7\na").digest()[:8], "little") >> 1
    assert 0 <= labels_seed("x") < 2**63
    digest = hashlib.sha256(b"process-labels\nr-1").digest()  # a string label (a record id) as written
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(5, spawn_key=key))).bit_generator.random_raw(2)
    assert process_rng(5, "r-1").bit_generator.random_raw(2).tolist() == expected.tolist()
    digest = hashlib.sha256(b"lexicon\nscan\n1").digest()  # lexicon 1 of the scan spec: seed 0, the labels as the key
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(0, spawn_key=key))).bit_generator.random_raw(2)
    assert lexicon_rng("scan", 1).bit_generator.random_raw(2).tolist() == expected.tolist()
    digest = hashlib.sha256(b"positions").digest()  # training pass 2 of position seed 3: the pass appended to the key
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(3, spawn_key=(*key, 2)))).bit_generator.random_raw(2)
    assert positions_rng(3, 2).bit_generator.random_raw(2).tolist() == expected.tolist()


def test_streams_are_distinct() -> None:
    draw = lambda rng: rng.bit_generator.random_raw(3).tolist()  # noqa: E731
    assert draw(split_rng(1, "mcd")) != draw(split_rng(2, "mcd"))
    assert draw(split_rng(1, "mcd")) != draw(split_rng(1, "iid"))
    assert draw(block_rng(1, "parity_check", PARITY, 0)) != draw(block_rng(1, "parity_check", PARITY, 1))
    assert draw(subsample_rng(1)) != draw(subsample_rng(2))
    assert draw(exposure_rng(1)) != draw(subsample_rng(1)) and draw(exposure_rng(1)) != draw(exposure_rng(2))
    assert draw(train_sample_rng(1)) != draw(exposure_rng(1)) and draw(train_sample_rng(1)) != draw(train_sample_rng(2))
    assert draw(process_rng(1, "a")) != draw(process_rng(1, "b")) != draw(process_rng(2, "b"))
    assert draw(positions_rng(1, 0)) != draw(positions_rng(1, 1)) != draw(positions_rng(2, 1))
    assert draw(epoch_rng(1, 0)) != draw(epoch_rng(1, 1))
    assert config_seed(1, "a-b") != config_seed(2, "a-b") != config_seed(1, "a-c")
    assert init_seed_of(0) != data_seed_of(0)
    assert draw(binding_rng("cfq_like", "Who directed M0 ?")) != draw(binding_rng("cfq_like", "Who edited M0 ?"))
    assert draw(lexicon_rng("scan", 1)) != draw(lexicon_rng("scan", 2)) != draw(lexicon_rng("cogs", 2))


def test_seeds_do_not_depend_on_the_hash_seed() -> None:
    """The same values in processes with other PYTHONHASHSEEDs (Python's hash() is salted)."""
    code = (
        "from gengap.generators.seeding import config_seed, side_seed, split_rng;"
        "print(config_seed(20261130, 'scan-mcd'), side_seed(11, 'test', 1), split_rng(3, 'mcd').bit_generator.random_raw())"
    )
    outputs = set()
    for hash_seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outputs.add(done.stdout)
    assert outputs == {f"83274510058008343 1488106885669671028 {RAW['split'][1][0]}\n"}


PACKAGES = ("generators", "splits", "gengap", "baselines", "data_cards")
FORBIDDEN = re.compile(r"SeedSequence|default_rng|PCG64|\bhash\(|random\.seed\(")


def test_every_seed_is_derived_in_the_seeding_module() -> None:
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "generators" / "seeding.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if FORBIDDEN.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
