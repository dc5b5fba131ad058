"""One import name: gengap.generators, gengap.splits, ...; the old top-level names are deprecated
aliases that give the very same module objects and never shadow a user's own module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", textwrap.dedent(code)],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_old_names_are_the_new_modules_with_a_deprecation_warning(tmp_path: Path) -> None:
    done = _run(
        """
        import gengap
        import generators.registry, splits.mcd, baselines, harnesses.extraction, data_cards
        import gengap.generators.registry, gengap.splits.mcd, gengap.baselines, gengap.harnesses.extraction, gengap.data_cards
        assert generators.registry is gengap.generators.registry
        assert splits.mcd is gengap.splits.mcd
        assert baselines is gengap.baselines and data_cards is gengap.data_cards
        assert harnesses.extraction is gengap.harnesses.extraction
        from generators import get_task
        assert get_task("parity_check") is gengap.generators.get_task("parity_check")
        print("same")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"
    for old in ("generators", "splits", "baselines", "harnesses", "data_cards"):
        assert f"`{old}` is deprecated: import gengap.{old} instead" in done.stderr


def test_old_names_in_a_source_checkout_are_the_new_modules(tmp_path: Path) -> None:
    """Run from the repository root the old folders are importable by their old names: they
    redirect to gengap's modules instead of becoming copies (one task registry)."""
    done = _run(
        """
        import generators.registry, splits.mcd
        import gengap.generators.registry, gengap.splits.mcd
        assert generators.registry is gengap.generators.registry and splits.mcd is gengap.splits.mcd
        print(generators.get_task("scan") is gengap.generators.registry.get_task("scan"))
        """,
        ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    assert "`generators` is deprecated" in done.stderr


def test_a_users_own_splits_module_neither_breaks_gengap_nor_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "splits.py").write_text("MINE = True\n")
    (tmp_path / "generators").mkdir()
    (tmp_path / "generators" / "__init__.py").write_text("MINE = 'package'\n")
    done = _run(
        """
        import splits, generators
        from gengap.release import build_entry
        from gengap.splits import split
        from gengap.generators.registry import get_task
        import gengap
        import splits as again, generators.__init__ as pkg
        assert splits.MINE is True and again is splits and generators.MINE == "package"
        assert get_task("parity_check").name == "parity_check"
        print("ok")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert "deprecated" not in done.stderr


def test_python_dash_m_with_an_old_name_runs_the_new_module_or_says_why_not_in_one_line() -> None:
    """In a source checkout (the old folders redirect), ``python -m <old>.<sub>`` runs what
    ``python -m gengap.<old>.<sub>`` runs; a package or a missing module is one line, exit 1."""
    ran = subprocess.run([sys.executable, "-m", "splits.atoms"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    for name, says in (("generators", "'generators' is a package"), ("baselines.nosuch", "no module named gengap.baselines.nosuch")):
        done = subprocess.run([sys.executable, "-m", name], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr and says in done.stderr, done.stderr
        errors = [line for line in done.stderr.strip().splitlines() if "LegacyNameWarning" not in line and not line.startswith("  ")]
        assert len(errors) == 1, done.stderr  # the error in one line (beside the old name's warning, with its source line)


def _plain_run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Python with its default warning filters (no -W), gengap importable from this checkout via PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([sys.executable, *arguments], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_warning_is_shown_by_default_and_names_the_importing_line(tmp_path: Path) -> None:
    """Python's default filters show it (a FutureWarning: DeprecationWarning would be hidden
    outside __main__), attributed to the user's file and line, also for an import in a module of
    their own, not to sys:1 or the import machinery."""
    (tmp_path / "mylib.py").write_text("import gengap\n\nfrom generators import get_task  # the old name\n")
    (tmp_path / "script.py").write_text("import gengap\nimport splits.mcd\nimport mylib\n")
    done = _plain_run(["script.py"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{tmp_path / 'script.py'}:2: LegacyNameWarning: `splits` is deprecated: import gengap.splits instead" in done.stderr
    assert f"{tmp_path / 'mylib.py'}:3: LegacyNameWarning: `generators` is deprecated: import gengap.generators instead" in done.stderr
    assert "sys:1" not in done.stderr and "importlib" not in done.stderr and "legacy_names.py" not in done.stderr
    from gengap.legacy_names import LegacyNameWarning

    assert issubclass(LegacyNameWarning, FutureWarning)
    checkout = _plain_run(["-c", "import generators"], ROOT)  # in a checkout the old folder redirects itself: the same attribution
    assert checkout.returncode == 0 and checkout.stderr.startswith("<string>:1: LegacyNameWarning: `generators` is deprecated"), checkout.stderr
