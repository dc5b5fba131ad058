"""Split strategies (iid, length, difficulty, holdout, MCD) and divergence measures."""
