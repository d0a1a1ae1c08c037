"""Summary-level forms of every pair of a set of complete metrics (no NaN) for Kendall tau-b and
Spearman, from each matrix's comparison tables built once (``evaluate --all-pairs``,
:mod:`.permuted_sums`).

:func:`.batched._perm_pairs` builds, for one pair (X, Y) and the human Z, the three pair sums'
quadratic forms in the swap bits from float64 sign and tie tables of X, Y and Z -- all of them
again for every pair (at 40 metrics, 780 times Z's and 39 times each metric's). With complete
data the same numbers follow from int8 tables: each matrix's sign(u_i - u_k) and [u_i = u_k]
per input (:func:`kendall_tables`, once per matrix), and per pair only the cross tables of X and Y
(sign(y_i - x_k), [y_i = x_k]; X against Y is their transpose, negated for the signs). Every
entry is a small integer (|D| <= 4, sums below 4 N^2), so each array equals
:func:`.batched._perm_pairs`' exactly, whatever the dtype it is summed in
(``tests/test_permuted_sums.py`` compares them).

Spearman likewise (:func:`spearman_tables`, :func:`spearman_forms`): each matrix's
H(u_i - u_k) (1, 1/2, 0) per input once, per pair H(x_i - y_k) (H(y_i - x_k) is 1 minus its
transpose, exactly), the human's centred ranks once; then the operations of
:func:`.permuted_sums._spearman_forms` on the same values (halves and quarters: exact sums).
"""

from __future__ import annotations

import numpy as np

from . import batched


def kendall_tables(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A's values per input (M, N) and its sign(a_i - a_k) and [a_i = a_k] per input, (M, N, N) int8."""
    T = np.ascontiguousarray(A.T)
    return T, *_compare(T, T)


def _compare(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sign(u_i - w_k) and [u_i = w_k] per input, (M, N, N) int8 (finite values: the sign of
    their difference is that of their comparison)."""
    left, right = u[:, :, None], w[:, None, :]
    signs = (left > right).view(np.int8) - (left < right).view(np.int8)
    return signs, (left == right).view(np.int8)


def kendall_forms(x: tuple, y: tuple, z: tuple) -> dict:
    """The forms :func:`.permuted_sums._kendall_forms` gives of complete X, Y against Z (their
    :func:`kendall_tables`): A (M, N, 7 + 3N) = [linear coefficients | D of the three pair sums],
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


def spearman_tables(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A's values per input (M, N), H(a_i - a_k) (M, N, N) float64 and its sums over k."""
    T = np.ascontiguousarray(A.T)
    H = _step(T, T)
    return T, H, H.sum(axis=2)


def _step(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """H(u_i - w_k) = 1, 1/2, 0 for >, =, < per input, (M, N, N) float64."""
    left, right = u[:, :, None], w[:, None, :]
    count = (left > right).view(np.uint8) + (left >= right).view(np.uint8)
    return np.multiply(count, 0.5)


def spearman_forms(x: tuple, y: tuple, w: np.ndarray, tied: tuple) -> dict:
    """The forms :func:`.permuted_sums._spearman_forms` gives of complete X, Y (their
    :func:`spearman_tables`) with the human's centred ranks ``w`` (M, N) and the pair's
    tied values ``tied`` (:func:`.permuted_sums._tied_values`)."""
    (xv, cxx, sx), (yv, cyy, _) = x, y
    n = xv.shape[1]
    cxy = _step(xv, yv)
    cyx = np.subtract(1.0, cxy.transpose(0, 2, 1))
    s0, s1 = 0.5 + sx, 0.5 + cyx.sum(axis=2)
    G1 = cxy - cxx
    Q = w[:, :, None] * ((cyy - cyx) - G1)
    l = w * (s1 - s0) + np.einsum("mik,mi->mk", G1, w)
    c0 = (w * s0).sum(axis=1)
    B, alpha_x, alpha_y = tied
    l_y = l + Q.sum(axis=1) + Q.sum(axis=2)
    dtype = np.float32 if 2 * n**3 < 2**22 else np.float64
    A = np.empty((*l.shape, n + 2 + B.shape[2]), dtype)
    A[:, :, :n] = Q.transpose(0, 2, 1)
    A[:, :, n], A[:, :, n + 1], A[:, :, n + 2:] = l, l_y, B
    return {"A": A, "c0": c0, "cy": c0 + l.sum(axis=1) + Q.sum(axis=(1, 2)),
            "alpha_x": alpha_x, "alpha_y": alpha_y, "var_z": (w * w).sum(axis=1)}
