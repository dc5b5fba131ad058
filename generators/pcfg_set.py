"""PCFG SET-style string-edit programs (Hupkes et al. 2020)."""
