"""Vectorized construction of space-separated token strings.

Generated text is held as numpy bytes arrays (dtype ``S``): one UTF-8 string per example,
NUL-padded to a common width. Tokens never contain NUL or whitespace, so a string's
length is its count of non-NUL bytes and its token count is its spaces plus one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

SPACE = 32
DIGITS = "0123456789"
ZERO = ord("0")  # ASCII code of the digit 0


def _as_bytes_array(matrix: np.ndarray) -> np.ndarray:
    """View a C-contiguous (n, w) uint8 matrix as a length-n ``S{w}`` array."""
    n, width = matrix.shape
    if width == 0:
        raise ValueError("token strings are never empty")
    return np.ascontiguousarray(matrix).view(f"S{width}").reshape(n)


def join_chars(codes: np.ndarray, lengths: np.ndarray | int) -> np.ndarray:
    """Join single-byte tokens: row i is ``codes[i, :lengths[i]]`` separated by spaces.

    ``codes`` is an (n, w) uint8 array of ASCII codes; ``lengths`` (n,) or a scalar, each
    in [1, w]. Returns an ``S{2w-1}`` array.
    """
    n, width = codes.shape
    out = np.empty((n, 2 * width - 1), dtype=np.uint8)
    out[:, 0::2] = codes
    out[:, 1::2] = SPACE
    lengths = np.broadcast_to(np.asarray(lengths), (n,))
    if width and (lengths < width).any():
        out *= np.arange(2 * width - 1)[None, :] < (2 * lengths - 1)[:, None]  # NUL past each row's end
    return _as_bytes_array(out)


def digits_to_chars(values: np.ndarray) -> np.ndarray:
    """ASCII codes of single-digit values 0..9 (any integer dtype and shape) as uint8."""
    return (values.astype(np.uint8) + ZERO).astype(np.uint8)


def digit_tokens(values: np.ndarray) -> np.ndarray:
    """One single-digit token per value 0..9 of a 1-D integer array, as an ``S1`` array."""
    return digits_to_chars(values).view("S1")


def join_tokens(ids: np.ndarray, lengths: np.ndarray | int, vocab: Sequence[str]) -> np.ndarray:
    """Join multi-byte tokens: row i is ``vocab[ids[i, j]]`` for j < lengths[i], spaced.

    ``ids`` is an (n, w) integer array indexing ``vocab``; entries past a row's length
    are ignored. Returns an ``S`` array. Every token becomes a NUL-padded cell holding
    the token and a space (packed into one 1/2/4/8-byte integer when it fits, so a token
    is gathered as one element); dropping the NULs of all cells in row-major order gives
    the rows' bytes back to back, which a row-length mask lays out again row by row.
    """
    n, width = ids.shape
    encoded = [token.encode() for token in vocab]
    if any(not tok for tok in encoded):
        raise ValueError("tokens are never empty")
    cell = max(len(tok) for tok in encoded) + 1
    if cell <= 8:
        cell = 1 << (cell - 1).bit_length()  # 1, 2, 4 or 8 bytes
    table = np.zeros((len(encoded) + 1, cell), dtype=np.uint8)  # last row: the empty cell
    for row, tok in enumerate(encoded):
        table[row, : len(tok)] = np.frombuffer(tok, dtype=np.uint8)
        table[row, len(tok)] = SPACE
    lengths = np.broadcast_to(np.asarray(lengths, dtype=np.int64), (n,))
    if (lengths < width).any():
        ids = np.where(np.arange(width)[None, :] < lengths[:, None], ids, len(encoded))
    if cell <= 8:
        cells = table.view(f"u{cell}").reshape(len(table))[ids].view(np.uint8).reshape(n, width * cell)
    else:
        cells = table[ids].reshape(n, width * cell)
    keep = cells != 0
    counts = np.count_nonzero(keep, axis=1)
    out = np.zeros((n, int(counts.max())), dtype=np.uint8)
    out[np.arange(out.shape[1])[None, :] < counts[:, None]] = cells[keep]
    out[np.arange(n), counts - 1] = 0  # each row's trailing space
    return _as_bytes_array(out[:, :-1] if out.shape[1] > 1 else out)


def from_strings(strings: Sequence[str]) -> np.ndarray:
    """An ``S`` array of the UTF-8 encodings of Python strings."""
    return np.array([s.encode() for s in strings], dtype=bytes)


def token_counts(strings: np.ndarray) -> np.ndarray:
    """Number of space-separated tokens of each string of an ``S`` array (int64)."""
    if strings.dtype.itemsize == 0:
        return np.zeros(len(strings), dtype=np.int64)
    matrix = strings.view(np.uint8).reshape(len(strings), strings.dtype.itemsize)
    return (matrix == SPACE).sum(axis=1, dtype=np.int64) + 1


def as_matrix(strings: np.ndarray) -> np.ndarray:
    """The (n, itemsize) uint8 view of an ``S`` array."""
    return np.ascontiguousarray(strings).view(np.uint8).reshape(len(strings), strings.dtype.itemsize)
