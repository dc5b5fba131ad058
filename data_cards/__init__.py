"""Dataset card, Croissant and CITATION rendering for releases."""
