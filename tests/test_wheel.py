"""Packaging: the data files the code reads are declared package data, and the wheel as users
install it builds, holds exactly its packages' files, installs alone and releases (tests/wheel_smoke.py)."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

import pytest

from tests.wheel_smoke import package_files, package_sources, setuptools_table


def test_every_data_file_of_the_packages_is_declared_package_data() -> None:
    """A non-.py file below a package (a schema, a suite, a sweep) reaches the wheel only through
    [tool.setuptools.package-data]; one that matches none of its patterns would be left out."""
    table = setuptools_table()
    packages, patterns = set(table["packages"]), table.get("package-data", {})
    undeclared = []
    for name in sorted(package_files()):
        if name.endswith(".py"):
            continue
        path = PurePosixPath(name)
        owner = next(".".join(path.parts[:i]) for i in range(len(path.parts) - 1, 0, -1) if ".".join(path.parts[:i]) in packages)
        inside = str(path.relative_to(*owner.split(".")))
        if not any(fnmatch(inside, pattern) for pattern in patterns.get(owner, [])):
            undeclared.append(name)
    assert undeclared == []


def test_the_license_is_the_apache_license_2_0_text_and_pyproject_declares_it() -> None:
    """pyproject's SPDX expression (Apache-2.0) with the license's own text in LICENSE, shipped in
    the wheel and the sdist (license-files); setuptools >= 77 takes no License classifier beside it."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:5] == ["Apache", "License", "Version", "2.0,", "January"] and "END OF TERMS AND CONDITIONS" in text
    assert len(text.split()) > 1500  # the whole license, not a notice


def test_the_fast_schema_validator_is_in_the_base_install() -> None:
    """release, verify and check validate every record: jsonschema-rs comes with plain `pip install .`."""
    import tomllib

    import gengap.schema

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.startswith("jsonschema-rs") for dep in project["dependencies"])
    assert gengap.schema.jsonschema_rs is not None


@pytest.mark.slow
def test_the_wheel_builds_installs_alone_and_releases(tmp_path: Path) -> None:
    from tests.wheel_smoke import check

    assert check(tmp_path / "wheel") == []


def test_error_messages_ask_for_extras_from_a_checkout() -> None:
    """gengap is not on PyPI: no message in the packages says `pip install 'gengap[...]'`; they
    use gengap.generators.extras.install_hint, which says how to install from a checkout."""
    from gengap.generators.extras import install_hint

    assert install_hint("train") == "pip install -e '.[train]' in a gengap checkout"
    assert install_hint("trl", "harness") == "pip install -e '.[trl,harness]' in a gengap checkout"
    root = Path(__file__).resolve().parents[1]
    offenders = [name for name in sorted(package_sources().values()) if name.endswith(".py") and "pip install 'gengap" in (root / name).read_text(encoding="utf-8")]
    assert offenders == []
