"""The published works a config reproduces or follows, with their BibTeX.

A config cites a work through its task (SCAN, COGS, CFQ, PCFG SET, ListOps, the Chomsky
hierarchy tasks, mazes, Boolean functions, ...) or its split strategy (MCD, GOTU). Entries carry no URL: the card shows
URLs only where the suite sets them.
"""

from __future__ import annotations

from typing import Any, Mapping

DELETANG_TASKS = (
    "even_pairs", "modular_arithmetic", "parity_check", "cycle_navigation", "stack_manipulation",
    "reverse_string", "modular_arithmetic_brackets", "solve_equation", "duplicate_string",
    "missing_duplicate_string", "odds_first", "binary_addition", "binary_multiplication",
    "compute_sqrt", "bucket_sort",
)  # fmt: skip

BIBTEX: dict[str, str] = {
    "lake2018generalization": """@inproceedings{lake2018generalization,
  title     = {Generalization without Systematicity: On the Compositional Skills of Sequence-to-Sequence Recurrent Networks},
  author    = {Lake, Brenden M. and Baroni, Marco},
  booktitle = {Proceedings of the 35th International Conference on Machine Learning (ICML)},
  year      = {2018}
}
""",
    "keysers2020measuring": """@inproceedings{keysers2020measuring,
  title     = {Measuring Compositional Generalization: A Comprehensive Method on Realistic Data},
  author    = {Keysers, Daniel and Sch{\\"a}rli, Nathanael and Scales, Nathan and Buisman, Hylke and Furrer, Daniel and Kashubin, Sergii and Momchev, Nikola and Sinopalnikov, Danila and Stafiniak, Lukasz and Tihon, Tibor and Tsarkov, Dmitry and Wang, Xiao and van Zee, Marc and Bousquet, Olivier},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2020}
}
""",
    "kim2020cogs": """@inproceedings{kim2020cogs,
  title     = {{COGS}: A Compositional Generalization Challenge Based on Semantic Interpretation},
  author    = {Kim, Najoung and Linzen, Tal},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year      = {2020}
}
""",
    "deletang2023neural": """@inproceedings{deletang2023neural,
  title     = {Neural Networks and the {C}homsky Hierarchy},
  author    = {Del{\\'e}tang, Gr{\\'e}goire and Ruoss, Anian and Grau-Moya, Jordi and Genewein, Tim and Wenliang, Li Kevin and Catt, Elliot and Cundy, Chris and Hutter, Marcus and Legg, Shane and Veness, Joel and Ortega, Pedro A.},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2023}
}
""",
    "hupkes2020compositionality": """@article{hupkes2020compositionality,
  title   = {Compositionality Decomposed: How do Neural Networks Generalise?},
  author  = {Hupkes, Dieuwke and Dankers, Verna and Mul, Mathijs and Bruni, Elia},
  journal = {Journal of Artificial Intelligence Research},
  volume  = {67},
  pages   = {757--795},
  year    = {2020}
}
""",
    "nangia2018listops": """@inproceedings{nangia2018listops,
  title     = {{ListOps}: A Diagnostic Dataset for Latent Tree Learning},
  author    = {Nangia, Nikita and Bowman, Samuel R.},
  booktitle = {Proceedings of the 2018 Conference of the North American Chapter of the Association for Computational Linguistics: Student Research Workshop},
  year      = {2018}
}
""",
    "power2022grokking": """@article{power2022grokking,
  title   = {Grokking: Generalization Beyond Overfitting on Small Algorithmic Datasets},
  author  = {Power, Alethea and Burda, Yuri and Edwards, Harri and Babuschkin, Igor and Misra, Vedant},
  journal = {arXiv preprint arXiv:2201.02177},
  year    = {2022}
}
""",
    "abbe2023generalization": """@inproceedings{abbe2023generalization,
  title     = {Generalization on the Unseen, Logic Reasoning and Degree Curriculum},
  author    = {Abbe, Emmanuel and Bengio, Samy and Lotfi, Aryo and Rizk, Kevin},
  booktitle = {Proceedings of the 40th International Conference on Machine Learning (ICML)},
  year      = {2023}
}
""",
    "schwarzschild2021can": """@inproceedings{schwarzschild2021can,
  title     = {Can You Learn an Algorithm? Generalizing from Easy to Hard Problems with Recurrent Networks},
  author    = {Schwarzschild, Avi and Borgnia, Eitan and Gupta, Arjun and Huang, Furong and Vishkin, Uzi and Goldblum, Micah and Goldstein, Tom},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2021}
}
""",
}

BY_TASK: dict[str, tuple[str, ...]] = {
    **{task: ("deletang2023neural",) for task in DELETANG_TASKS},
    "scan": ("lake2018generalization",),
    "cfq_like": ("keysers2020measuring",),
    "cogs_like": ("kim2020cogs",),
    "cogs": ("kim2020cogs",),
    "pcfg_set": ("hupkes2020compositionality",),
    "listops": ("nangia2018listops",),
    "modular_operation": ("power2022grokking",),
    "prefix_sums": ("schwarzschild2021can",),
    "maze": ("schwarzschild2021can",),
    "boolean_function": ("abbe2023generalization",),
}
BY_STRATEGY: dict[str, tuple[str, ...]] = {"mcd": ("keysers2020measuring",), "gotu": ("abbe2023generalization",)}


def config_references(config: Mapping[str, Any]) -> list[str]:
    """BibTeX keys of the works a config reproduces or follows (task first, then strategy)."""
    tasks = [str(t["task"]) for t in config["tasks"]] if isinstance(config.get("tasks"), list) else [str(config.get("task"))]
    keys = list(dict.fromkeys(k for task in tasks for k in BY_TASK.get(task, ())))
    strategy = str((config.get("split") or {}).get("strategy", ""))
    keys += [k for k in BY_STRATEGY.get(strategy, ()) if k not in keys]
    return keys


def release_references(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """BibTeX key -> names of the configs citing it, keys in order of first use."""
    cited: dict[str, list[str]] = {}
    for config in manifest["configs"]:
        for key in config_references(config):
            cited.setdefault(key, []).append(str(config["name"]))
    return cited
