"""gengap: synthetic generalization benchmarks (CLI and release spine)."""

__version__ = "0.1.0"
