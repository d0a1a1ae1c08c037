"""Summary-level Kendall tau-b forms of every pair of a set of complete metrics (no NaN), from
each matrix's comparison tables built once (``evaluate --all-pairs``, :mod:`.permuted_sums`).

:func:`.batched._perm_pairs` builds, for one pair (X, Y) and the human Z, the three pair sums'
quadratic forms in the swap bits from float64 sign and tie tables of X, Y and Z -- all of them
again for every pair (at 40 metrics, 780 times Z's and 39 times each metric's). With complete
data the same numbers follow from int8 tables: each matrix's sign(u_i - u_k) and [u_i = u_k]
per input (:func:`tables`, once per matrix), and per pair only the cross tables of X and Y
(sign(y_i - x_k), [y_i = x_k]; X against Y is their transpose, negated for the signs). Every
entry is a small integer (|D| <= 4, sums below 4 N^2), so each array equals
:func:`.batched._perm_pairs`' exactly, whatever the dtype it is summed in
(``tests/test_permuted_sums.py`` compares them).
"""

from __future__ import annotations

import numpy as np

from . import batched


def tables(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A's values per input (M, N) and its sign(a_i - a_k) and [a_i = a_k] per input, (M, N, N) int8."""
    T = np.ascontiguousarray(A.T)
    return T, *_compare(T, T)


def _compare(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sign(u_i - w_k) and [u_i = w_k] per input, (M, N, N) int8 (finite values: the sign of
    their difference is that of their comparison)."""
    left, right = u[:, :, None], w[:, None, :]
    signs = (left > right).view(np.int8) - (left < right).view(np.int8)
    return signs, (left == right).view(np.int8)


def forms(x: tuple, y: tuple, z: tuple) -> dict:
    """The forms :func:`.permuted_sums._kendall_forms` gives of complete X, Y against Z (their
    :func:`tables`): A (M, N, 7 + 3N) = [linear coefficients | D of the three pair sums],
    the constants, the valid counts and which D are not zero."""
    (xv, sx, tx), (yv, sy, ty), (_, sz, tz) = x, y, z
    m, n = xv.shape
    s10, t10 = _compare(yv, xv)                       # sign(y_i - x_k), [y_i = x_k]
    s01, t01 = -s10.transpose(0, 2, 1), t10.transpose(0, 2, 1)
    A = np.empty((m, n, 7 + 3 * n), batched._exact_dtype(n))
    const_x, const_y = np.empty((m, 3)), np.empty((m, 3))
    nonzero = []
    for f, (F00, F01, F10, F11) in enumerate(((sx * sz, s01 * sz, s10 * sz, sy * sz), (tx, t01, t10, ty))):
        D = F11 - F10 - F01 + F00                     # int8, |D| <= 4
        diagonal = np.einsum("mii->mi", D).astype(np.int32)
        np.einsum("mii->mi", D)[...] = 0
        lin = ((F10 - F00).sum(axis=2, dtype=np.int32) + (F01 - F00).sum(axis=1, dtype=np.int32) + diagonal)
        row_sums = D.sum(axis=2, dtype=np.int32)
        const_x[:, f] = F00.sum(axis=(1, 2), dtype=np.int32)
        const_y[:, f] = const_x[:, f] + lin.sum(axis=1) + row_sums.sum(axis=1)
        A[:, :, f], A[:, :, 3 + f] = lin, row_sums
        A[:, :, 7 + f * n:7 + (f + 1) * n] = D
        nonzero.append(bool(D.any()))
    # the third sum (ties in Z among valid pairs) does not depend on the bits with complete data
    A[:, :, 2] = A[:, :, 5] = A[:, :, 6] = 0
    A[:, :, 7 + 2 * n:] = 0
    const_x[:, 2] = const_y[:, 2] = tz.sum(axis=(1, 2), dtype=np.int32)
    count = np.full(m, float(n))
    return {"A": A, "const_x": const_x, "const_y": const_y, "n_x": count, "n_y": count.copy(),
            "blocks": np.array([*nonzero, False])}
