"""Integer codes for integer keys, in linear time when the key space is small."""

from __future__ import annotations

import numpy as np

DENSE_MAX = 1 << 26  # key spaces up to this size are coded with a lookup table (linear time)


def dense_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for non-negative integer keys, in linear time when
    the largest key is below ``DENSE_MAX`` (a presence table instead of a sort)."""
    keys = np.asarray(keys, dtype=np.int64)
    if not len(keys) or int(keys.max()) >= DENSE_MAX:
        uniques, inverse = np.unique(keys, return_inverse=True)
        return uniques, inverse.ravel().astype(np.int64)
    present = np.zeros(int(keys.max()) + 1, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    return np.flatnonzero(present), rank[keys]
