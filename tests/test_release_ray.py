"""gengap release --ray: configs and blocks of large pools (a shared one among them) as Ray tasks, byte-identical to the local build."""

from __future__ import annotations

from pathlib import Path

import pytest

from gengap.cli import main
from gengap.release import pool_block, pool_plan, render
from gengap.suite import parse_suite

SUITE = """\
name: raytest
version: 0.0.1
seed: 3
license: mit
entries:
  - {task: parity_check, split: iid, pool: {n: 20001, shared: big}, sizes: {train: 300, validation: 30, test: 30}}
  - {task: reverse_string, split: length, train_range: [1, 5], test_range: [6, 8], sizes: {train: 200, validation: 20, test: 20}}
  - {task: addition, split: length, pool: {n: 600}, options: {by: input_length, train_max: 9}}
  - {task: parity_check, split: iid_again, strategy: iid, pool: {n: 20001, shared: big}, sizes: {train: 300, validation: 30, test: 30}}
"""


def test_a_pool_rendered_from_its_blocks_equals_the_pool_rendered_whole() -> None:
    suite = parse_suite(SUITE)
    large, sampled, small, again = suite["entries"]
    plan = pool_plan(large, suite["seed"])
    assert plan is not None and plan.num_blocks == 3
    assert pool_plan(again, suite["seed"]) == plan  # a shared pool: the same blocks, split with another seed
    assert pool_plan(sampled, suite["seed"]) is None and pool_plan(small, suite["seed"]).num_blocks == 1
    pool = [record for block in range(plan.num_blocks) for record in pool_block(plan, block)]
    assert len(pool) == 20001
    assert render(large, suite["seed"], pool) == render(large, suite["seed"])
    assert render(again, suite["seed"], pool) == render(again, suite["seed"])


def test_release_on_ray_is_byte_identical_to_the_local_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    assert main(["release", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    local = capsys.readouterr().out
    assert main(["release", "--ray", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "ray"), "--workers", "2"]) == 0
    on_ray = capsys.readouterr().out
    fingerprint = local.split("fingerprint ")[1].split()[0]
    assert len(fingerprint) == 16 and f"fingerprint {fingerprint} " in on_ray
    assert (tmp_path / "ray" / "SHA256SUMS").read_bytes() == (tmp_path / "local" / "SHA256SUMS").read_bytes()
    files = lambda root: {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert files(tmp_path / "ray") == files(tmp_path / "local")
    assert main(["verify", str(tmp_path / "ray")]) == 0
