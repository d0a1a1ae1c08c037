"""Permutation tests' resampled deltas from sums linear in the swap masks, every pair of a set
of metrics at once (``evaluate --all-pairs``).

A permutation resample swaps cells of X and Y (bits a, :func:`.resampling.permutation_masks`);
X' = where(a, Y, X), Y' = where(a, X, Y) = X' of the bits 1 - a. All pairs share the masks (the
same seed), and what a level's coefficient needs of X' is, per system or per input, a few sums
that are linear (or quadratic) in the bits given the pair:

- system level: sum_j x'_ij = sum_j x_ij + S_Y - S_X with S_X = sum_j a_ij x_ij, one product of
  the masks with each metric (K products for K(K-1)/2 pairs). Pearson takes the means as they
  are; Spearman and Kendall only depend on the order of the means, so a resample whose means are
  not separated by more than :data:`TIE_GAP` (relative) -- where the rounding of the linear form
  could differ from summing the permuted cells -- is computed again cell by cell
  (:func:`.batched._permuted_system_means` ``exact``): every rank, hence every coefficient, is
  the cell-by-cell path's, bit for bit.
- summary level, per input and pair, a matrix A of the pair such that bits @ A gives the sums:
  Pearson: sum x', sum x'^2 and sum x'u (u the human's unit deviations; values centred on the
  input's mean of X and Y, which keeps the variance's cancellation small), r = sum x'u /
  sqrt(sum x'^2 - (sum x')^2 / n); Spearman: sum_i w_i R'_i (w the human's centred ranks) as the
  quadratic form of the rank tables (:func:`_spearman_forms`) and the tie counts of X'; Kendall
  tau-b: the quadratic forms of :func:`.batched._perm_pairs` (:data:`KENDALL_SUMMARY`).
  The A of :data:`PAIR_CHUNK` pairs are stacked side by side: one product per chunk and batch
  of resamples. Y' takes the same products (bits 1 - a). For a set of pairs, Spearman's and
  Kendall's forms come from :mod:`.pair_forms` (each matrix's comparison tables built once),
  byte for byte those of :func:`_spearman_forms` and :func:`_kendall_forms`.

The rank sums are exact (halves and quarters below 2^24): Spearman's and Kendall's r round only
in their last operations, Pearson's differs from the two-pass deviations of
:func:`.correlation.corr_columns` by ~1e-16; the deltas equal the cell-by-cell ones to ~1e-15
(``tests/test_permuted_sums.py`` asserts 1e-12 and identical p-values; ``bench/bench_allpairs.py``
compares the stored rows). Used when the data are complete (no NaN), there are at least 3
systems and, for Pearson at the summary level, no column of X' can be constant (its linear
variance could then be rounding instead of 0); otherwise :func:`pairs_evaluator` returns None
and :mod:`.batched` computes each pair's resamples.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable

import numpy as np

from . import _engine, batched, pair_forms
from .correlation import corr, kendall_tau, pearson_against, system_means
from .reductions import summary_mean
from .validation import Coefficient

#: Relative gap below which two linearly summed system means may be tied or ordered otherwise
#: by the cell-by-cell sums (their rounding differs by ~1e-15 relative): such resamples are
#: computed again cell by cell.
TIE_GAP = 1e-9
#: Pairs whose forms are stacked into one product (bounds the forms' and products' memory).
PAIR_CHUNK = 16
#: Pairs computed together at most (one :func:`pairs_evaluator`: bounds the memory of all their
#: forms; 100 metrics' 4950 pairs at once peaked at 1.9 GB; 40 metrics' 780 summary Kendall
#: forms at once, 0.96 GB).
PAIR_GROUP = 16 * PAIR_CHUNK
#: Cells (inputs x resamples x columns) of an exact chunk's product computed at once (a block
#: of inputs: its temporaries stay in the CPU's cache, :func:`_chunk_deltas`).
BLOCK_CELLS = 2**16
#: The same for summary Kendall: its kernel's many operations on small (inputs, c, p) planes
#: cost more in call overhead than its larger product (~4 MB of float32) loses in cache:
#: 2^20 cells took 0.7-0.8 of the CPU of 2^16 (one input a block at 40 metrics; the bits
#: do not depend on the block: exact sums, elementwise operations).
KENDALL_BLOCK_CELLS = 2**20

#: Whether summary-level Kendall tau-b is computed here. Its stacked products measured slower
#: than :mod:`.batched`'s per-pair matmul while they were einsums over every input at once;
#: by blocks of inputs on one BLAS thread (:func:`_chunk_deltas`) they take 0.7 of its CPU
#: (40 metrics' tests: 11.2 vs 16 CPU-s), the same bits (exact integer sums).
KENDALL_SUMMARY = True

Evaluate = Callable[[np.ndarray], np.ndarray]


def evaluator(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient) -> Evaluate | None:
    """``evaluate(mask)`` -> delta_b = r(X'_b, Z) - r(Y'_b, Z), as
    :func:`.batched.permutation_evaluator` (X, Y standardised by the caller); None where this
    module does not apply (see the module docstring)."""
    found = pairs_evaluator([X, Y], Z, level, coefficient)
    return None if found is None else (lambda mask: found[0](mask)[0])


def pairs_evaluator(metrics: list[np.ndarray], Z: np.ndarray, level: str, coefficient: Coefficient,
                    pairs: list[tuple[int, int]] | None = None) -> tuple[Evaluate, int] | None:
    """``(evaluate, bytes)``: ``evaluate(mask)`` -> (P, c), the resampled deltas of every pair
    i < j of ``metrics`` (standardised; itertools.combinations order), or of ``pairs`` in their
    order, for a batch of c masks, and the bytes of temporaries per resample; None where this
    module does not apply. A pair's deltas do not depend on the other pairs computed with it
    nor on c (every sum runs over one pair's cells in one order: ``tests/test_permuted_sums.py``)."""
    n, m = Z.shape
    if coefficient.whole_level or coefficient.ties_variant or level not in ("system", "summary") or n < 3:
        return None
    if coefficient.aggregate != "mean" or coefficient.human_aggregate != "mean":
        # a median is not linear in the swap masks: the cell-by-cell path
        return None
    if len(metrics) < 2 or np.isnan(Z).any() or any(np.isnan(X).any() for X in metrics):
        return None
    pairs = list(itertools.combinations(range(len(metrics)), 2)) if pairs is None else list(pairs)
    if level == "system" and coefficient.name in ("pearson", "spearman", "kendall"):
        return _system(metrics, Z, coefficient, pairs), 8 * (len(metrics) + 4) * n * m + 64 * n * n
    forms = {"pearson": _pearson_forms, "spearman": _spearman_forms, "kendall": _kendall_forms}.get(coefficient.name)
    kendall_off = coefficient.name == "kendall" and (not KENDALL_SUMMARY or coefficient.variant != "b")
    if level != "summary" or forms is None or kendall_off:
        return None
    used = sorted({i for pair in pairs for i in pair})
    if coefficient.name == "kendall":   # each matrix's comparison tables once, not once per pair
        made, human = {i: pair_forms.kendall_tables(metrics[i]) for i in used}, pair_forms.kendall_tables(Z)
        found = [pair_forms.kendall_forms(made[i], made[j], human) for i, j in pairs]
    elif coefficient.name == "spearman":
        made, w = {i: pair_forms.spearman_tables(metrics[i]) for i in used}, (batched.corr_ranks(Z) - (n + 1) / 2).T
        found = [pair_forms.spearman_forms(made[i], made[j], w, _tied_values(metrics[i], metrics[j])) for i, j in pairs]
    else:
        found = [forms(metrics[i], metrics[j], Z) for i, j in pairs]
    if any(f is None for f in found):
        return None
    # chunks of pairs of like width (Spearman's: the tied values V of the pair; Kendall's: the
    # quadratic blocks that are not zero), so that a chunk of pairs without ties carries no tie
    # columns; a pair's deltas do not depend on its chunk
    order = sorted(range(len(pairs)), key=lambda q: _width(found[q]))
    chunks = []
    for start in range(0, len(pairs), PAIR_CHUNK):
        chunks.append(_stacked([found[q] for q in order[start:start + PAIR_CHUNK]], n))
        for q in order[start:start + PAIR_CHUNK]:
            found[q] = None   # (each pair's forms held once: stacked)
    width = max(c["A"].shape[2] for c in chunks)
    kernel = {"pearson": _pearson_r, "spearman": _spearman_r, "kendall": _kendall_r}[coefficient.name]
    back = np.argsort(order)

    def evaluate(mask: np.ndarray) -> np.ndarray:
        full = np.broadcast_to(mask, (mask.shape[0], n, m))
        bits = np.ascontiguousarray(full.transpose(2, 0, 1))  # (M, c, N) bool
        converted: dict = {}   # the bits in a form's dtype, converted once per batch (not per chunk)

        def as_dtype(dtype) -> np.ndarray:
            if dtype not in converted:
                converted[dtype] = bits.astype(dtype)
            return converted[dtype]

        return np.concatenate([_chunk_deltas(chunk, as_dtype, kernel) for chunk in chunks])[back]

    return evaluate, 8 * m * (n + 2 * width) + 48 * m * PAIR_CHUNK


def _chunk_deltas(chunk: dict, as_dtype: Callable[..., np.ndarray], kernel) -> np.ndarray:
    """(p, c): the deltas of a chunk's pairs from the products bits @ A of each input
    (``as_dtype(A.dtype)``: the bits (M, c, N) in A's dtype).

    Pearson: einsum over every input at once (float64: the order of its sums is einsum's, the
    same whatever the threads). The exact forms (Spearman's quarters, Kendall's integers) take
    BLAS' product on one thread (:func:`._engine.one_blas_thread`; exact sums: the same bits
    as einsum's) a block of inputs at a time, the block's temporaries within
    :data:`BLOCK_CELLS` (the CPU's cache; 40 metrics' summary Spearman allocated and read
    ~60 MB products per chunk and batch; :data:`KENDALL_BLOCK_CELLS` for Kendall; at least
    one input a block), each block's product into one reused buffer. Each block's r go to (p, c, M) arrays, the layout
    :func:`.reductions.summary_mean` sums in (no transposed copy of the whole)."""
    A = chunk["A"]
    bits = as_dtype(A.dtype)
    m, c = bits.shape[:2]
    rx, ry = np.empty((chunk["p"], c, m)), np.empty((chunk["p"], c, m))
    step = max(1, (KENDALL_BLOCK_CELLS if kernel is _kendall_r else BLOCK_CELLS) // (c * A.shape[2]))
    if kernel is _pearson_r:   # the product at once (einsum's rounding as it was), r by blocks
        P = np.einsum("mcn,mnk->mck", bits, A).reshape(m, c, chunk["p"], -1)  # (M, c, p, width)
        for start in range(0, m, step):
            block = slice(start, start + step)
            x, y = kernel(_inputs(chunk, block), P[block], bits[block])
            rx[:, :, block], ry[:, :, block] = x.transpose(2, 1, 0), y.transpose(2, 1, 0)
        return summary_mean(rx) - summary_mean(ry)
    product = np.empty((min(step, m), c, A.shape[2]), A.dtype)   # each block's, reused
    with _engine.one_blas_thread():
        for start in range(0, m, step):
            block = slice(start, start + step)
            b = bits[block]
            P = np.matmul(b, A[block], out=product[:b.shape[0]]).reshape(b.shape[0], c, chunk["p"], -1)
            x, y = kernel(_inputs(chunk, block), P, b)
            rx[:, :, block], ry[:, :, block] = x.transpose(2, 1, 0), y.transpose(2, 1, 0)
    return summary_mean(rx) - summary_mean(ry)


def _inputs(chunk: dict, block: slice) -> dict:
    """The forms of a chunk for a block of inputs (every array's first axis: the inputs)."""
    return {key: value[block] if isinstance(value, np.ndarray) and key != "blocks" else value
            for key, value in chunk.items()}


def _width(form: dict) -> tuple:
    """What a pair's chunk is chosen by: its columns, and Kendall's quadratic blocks that are not zero."""
    return form["A"].shape[2], tuple(form["blocks"]) if "blocks" in form else ()


def _column_ranges(forms: list[dict], n: int) -> tuple[list[tuple[int, int]], np.ndarray | None]:
    """The columns of the forms' A that a chunk keeps, as ranges, and Kendall's blocks kept: all
    but the quadratic blocks (N columns each, after the 7 linear ones) that are zero for every
    pair of the chunk (no ties in X' or in Z: their sums are constant). Other forms: all."""
    if "blocks" not in forms[0]:
        return [(0, max(f["A"].shape[2] for f in forms))], None
    keep = np.logical_or.reduce([f["blocks"] for f in forms])
    # complete data: the third sum's coefficients and the valid count's are zero (left out)
    linear = [(0, 2), (3, 5)] if not any(f["A"][:, :, [2, 5, 6]].any() for f in forms) else [(0, 7)]
    return linear + [(7 + f * n, 7 + (f + 1) * n) for f in range(3) if keep[f]], keep


def _stacked(forms: list[dict], n: int) -> dict:
    """The forms of a chunk's pairs side by side (Kendall's without the chunk's zero blocks,
    :func:`_column_ranges`): A (M, N, p * width), the others (M, p, ...), zero-padded to the
    chunk's widest; written into arrays allocated once."""
    ranges, keep = _column_ranges(forms, n)
    width = sum(stop - start for start, stop in ranges)
    out = {"p": len(forms)}
    for key in forms[0]:
        parts = [f[key] for f in forms]
        if key == "blocks":
            out[key], out["linear"] = keep, ranges[0][1]   # Kendall's linear columns kept: 2 (of 3) + 2, or 7
        elif key == "A":
            m, rows = parts[0].shape[:2]
            A = out[key] = np.zeros((m, rows, len(parts) * width), parts[0].dtype)
            for q, a in enumerate(parts):
                at = q * width
                for start, stop in ranges:
                    stop = min(stop, a.shape[2])
                    A[:, :, at:at + stop - start] = a[:, :, start:stop]
                    at += stop - start
        elif parts[0].ndim == 2:   # (M, V): padded
            stack = out[key] = np.zeros((parts[0].shape[0], len(parts), max(a.shape[1] for a in parts)), parts[0].dtype)
            for q, a in enumerate(parts):
                stack[:, q, :a.shape[1]] = a
        else:
            out[key] = np.stack(parts, axis=1)   # (M, p)
    return out


def _system(metrics: list[np.ndarray], Z: np.ndarray, coefficient: Coefficient, pairs: list) -> Evaluate:
    """System level: each metric's masked row sums once (K products), every pair's permuted
    means from them; for the rank coefficients near ties computed again cell by cell."""
    n, m = Z.shape
    zm = system_means(Z)
    stack = np.stack(metrics)  # (K, N, M)
    rows = stack.sum(axis=2)  # (K, N)
    ranked = _ranked_system(zm, coefficient) if coefficient.name != "pearson" else None

    def evaluate(mask: np.ndarray) -> np.ndarray:
        c = mask.shape[0]
        if mask.shape[2] == 1:
            S = mask[None, :, :, 0] * rows[:, None, :]
        else:
            full = np.broadcast_to(mask, (c, n, m)).view(np.uint8)
            S = np.einsum("bij,kij->kbi", full, stack)  # (K, c, N)
        out = np.empty((len(pairs), c))
        # Kendall's exact counts on one BLAS thread (the same bits on any), entered once a batch
        with _engine.one_blas_thread() if coefficient.name == "kendall" else contextlib.nullcontext():
            for p, (i, j) in enumerate(pairs):
                out[p] = pair(S, mask, i, j)
        return out

    def pair(S: np.ndarray, mask: np.ndarray, i: int, j: int) -> np.ndarray:
        d = S[j] - S[i]
        xm, ym = (rows[i] + d) / m, (rows[j] - d) / m
        if coefficient.name != "pearson" and (close := _near_ties(xm) | _near_ties(ym)).any():
            xm[close], ym[close] = batched._permuted_system_means(metrics[i], metrics[j], mask[close], exact=True)
        return ranked(xm) - ranked(ym) if ranked else corr(xm, zm, coefficient) - corr(ym, zm, coefficient)

    return evaluate


def _ranked_system(zm: np.ndarray, coefficient: Coefficient) -> Callable[[np.ndarray], np.ndarray] | None:
    """``r(means)`` (c, N) -> (c,) of Spearman or Kendall tau-b from the comparisons
    gt_ik = [m_i > m_k] of each resample's means (no NaN): the average ranks
    less_i + (ties_i + 1) / 2, then :func:`.correlation.corr`'s Pearson (what its Spearman computes
    on scipy's ranks), or S = 2 sum gt * sign(z_i - z_k) and 2 sum gt untied ordered pairs for
    :func:`.correlation.kendall_tau`: exact counts, the same numbers as :func:`.correlation.corr`."""
    import scipy.stats

    n = zm.shape[0]
    if coefficient.name == "spearman":
        rz = scipy.stats.rankdata(zm)
        count = np.uint8 if n <= 256 else np.int64   # counts below n: exact in uint8 (faster to sum)
        against = pearson_against(rz)   # the human's side once (the ranks' deviations are safe)

        def spearman(m: np.ndarray) -> np.ndarray:
            if against is not None and np.isfinite(m).all():   # sorted: the same average ranks
                return against(scipy.stats.rankdata(m, axis=1))
            gt = (m[:, :, None] > m[:, None, :]).view(np.uint8)
            less, greater = (gt.sum(axis=a, dtype=count).astype(np.float64) for a in (2, 1))
            ranks = less + (n - less - greater + 1) / 2
            return corr(ranks, np.broadcast_to(rz, ranks.shape), batched.PEARSON)

        return spearman
    if coefficient.name != "kendall" or coefficient.variant != "b":
        return None
    # sign(z_i - z_k) and ones: S / 2 and the untied ordered pairs / 2 in one product
    sz = np.stack([np.sign(zm[:, None] - zm[None, :]).ravel(), np.ones(n * n)], axis=1).astype(np.float32)
    untied_z = float(n * n - (zm[:, None] == zm[None, :]).sum())

    def kendall(m: np.ndarray) -> np.ndarray:
        gt = (m[:, :, None] > m[:, None, :]).reshape(m.shape[0], -1)
        sums = (gt.astype(np.float32) @ sz).astype(np.float64)   # exact counts (the caller: one BLAS thread)
        return kendall_tau(2 * sums[:, 0], np.full(m.shape[0], float(n)), 2 * sums[:, 1],
                           np.full(m.shape[0], untied_z), "b")

    return kendall


def _near_ties(m: np.ndarray) -> np.ndarray:
    """(c,) which rows of means (c, N) have two values within TIE_GAP of each other (relative to
    the row's largest magnitude), or a value that is not finite."""
    s = np.sort(m, axis=1)
    scale = np.maximum(np.abs(s[:, :1]), np.abs(s[:, -1:]))
    with np.errstate(invalid="ignore"):
        close = (np.diff(s, axis=1) <= TIE_GAP * scale).any(axis=1)
    return close | ~np.isfinite(s).all(axis=1)


def _may_be_constant(X: np.ndarray, Y: np.ndarray) -> bool:
    """Whether some swap could make a column of X' (or Y') constant: a value v (x_0j or y_0j)
    such that every system has x_ij = v or y_ij = v."""
    return any(bool(((X == v) | (Y == v)).all(axis=0).any()) for v in (X[0], Y[0]))


def _unit_columns(Z: np.ndarray) -> np.ndarray:
    """Each column's deviations from its mean over their norm (NaN for a constant column)."""
    dev = Z - Z.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = dev / np.sqrt((dev * dev).sum(axis=0))
    return np.where(Z.min(axis=0) == Z.max(axis=0), np.nan, u)


def _pearson_forms(X: np.ndarray, Y: np.ndarray, Z: np.ndarray) -> dict | None:
    """Summary Pearson of a pair, per input: A (M, N, 3) = [y - x, y^2 - x^2, (y - x) u] and
    the sums at a = 0 for X' and Y' (M, 3), the values centred on the input's mean of X and Y;
    None when a column of X' could be constant."""
    if _may_be_constant(X, Y):
        return None
    centre = (X.mean(axis=0) + Y.mean(axis=0)) / 2
    x, y, u = X - centre, Y - centre, _unit_columns(Z)
    A = np.stack([y - x, y * y - x * x, (y - x) * u], axis=-1).transpose(1, 0, 2)
    return {"A": np.ascontiguousarray(A),
            "base_x": np.stack([x.sum(axis=0), (x * x).sum(axis=0), (x * u).sum(axis=0)], axis=-1),
            "base_y": np.stack([y.sum(axis=0), (y * y).sum(axis=0), (y * u).sum(axis=0)], axis=-1)}


def _pearson_r(chunk: dict, P: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, c, p) per-input r of X' and Y': sum x'u / sqrt(sum x'^2 - (sum x')^2 / n)."""
    n = bits.shape[2]
    out = []
    for base, add in ((chunk["base_x"][:, None], np.add), (chunk["base_y"][:, None], np.subtract)):
        # each sum's plane on its own (contiguous), the operations in place: the same operations
        s0, s1, s2 = (add(base[..., f], P[..., f]) for f in range(3))
        with np.errstate(invalid="ignore", divide="ignore"):
            np.multiply(s0, s0, out=s0)
            np.divide(s0, n, out=s0)
            np.subtract(s1, s0, out=s1)
            np.sqrt(s1, out=s1)
            np.divide(s2, s1, out=s2)
            out.append(np.clip(s2, -1.0, 1.0, out=s2))
    return out[0], out[1]


def _spearman_forms(X: np.ndarray, Y: np.ndarray, Z: np.ndarray) -> dict:
    """Summary Spearman of a pair, per input: sum_i w_i R'_i (w the human's centred ranks) is a
    quadratic form c0 + l'a + a'Qa of the bits (the ranks of :func:`.batched._rank_tables`,
    R'_i = (1 - a_i)(s0_i + (G1 a)_i) + a_i (s1_i + (G2 a)_i): Q = diag(w)(G2 - G1)); Y' is X'
    of the bits 1 - a: cy - l_y'a + a'Qa. The variance of the ranks is (n^3 - n - sum_v (t_v^3 -
    t_v)) / 12, t_v the cells of X' equal to v, linear in the bits: alpha_v + B_v'a.

    A (M, N, N + 2 + V) = [Q' | l | l_y | B] over the V values seen twice or more among an
    input's X and Y cells (zero-padded); c0, cy (M,); alpha_x, alpha_y (M, V); var_z (M,) =
    sum w^2. Every sum is exact (quarters below 2^24 in float32)."""
    n, m = X.shape
    w = (batched.corr_ranks(Z) - (n + 1) / 2).T  # (M, N)
    G, sums = batched._rank_tables(X, Y)
    G1, G2 = (np.asarray(G[..., part], dtype=np.float64).transpose(0, 2, 1) for part in (slice(0, n), slice(n, 2 * n)))
    Q = w[:, :, None] * (G2 - G1)
    l = w * (sums[:, 1] - sums[:, 0]) + np.einsum("mik,mi->mk", G1, w)
    c0 = (w * sums[:, 0]).sum(axis=1)
    B, alpha_x, alpha_y = _tied_values(X, Y)
    l_y = l + Q.sum(axis=1) + Q.sum(axis=2)
    A = np.concatenate([Q.transpose(0, 2, 1), l[..., None], l_y[..., None], B], axis=2)
    dtype = np.float32 if 2 * n**3 < 2**22 else np.float64
    return {"A": np.ascontiguousarray(A, dtype=dtype), "c0": c0, "cy": c0 + l.sum(axis=1) + Q.sum(axis=(1, 2)),
            "alpha_x": alpha_x, "alpha_y": alpha_y, "var_z": (w * w).sum(axis=1)}


def _tied_values(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per input j, the values v_q (q < V, ascending) seen twice or more among X[:, j] and
    Y[:, j] (no NaN): B (M, N, V) = [y_ij = v_q] - [x_ij = v_q], alpha_x, alpha_y (M, V) the
    counts of v_q in X[:, j] and Y[:, j]; zero-padded to the widest input (V >= 1). All inputs
    at once (sorted columns; the equalities of np.unique's)."""
    n, m = X.shape
    S = np.sort(np.concatenate([X, Y]), axis=0)  # (2N, M)
    first = np.ones(S.shape, dtype=bool)
    first[1:] = S[1:] != S[:-1]   # a run of equal values starts
    tied = first.copy()
    tied[:-1] &= ~first[1:]       # ... and has a second value: a tied value
    tied[-1] = False
    rank = np.cumsum(tied, axis=0) - 1   # its q in the column
    V = max(1, int(tied.sum(axis=0).max()))
    values = np.full((m, V), np.nan)   # NaN: equal to nothing (the data have no NaN)
    rows, cols = np.nonzero(tied)
    values[cols, rank[rows, cols]] = S[rows, cols]
    ex, ey = X.T[:, :, None] == values[:, None, :], Y.T[:, :, None] == values[:, None, :]  # (M, N, V)
    return ey.astype(float) - ex, ex.sum(axis=1).astype(float), ey.sum(axis=1).astype(float)


def _spearman_r(chunk: dict, P: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, c, p) per-input Spearman r of X' and Y' from the forms of :func:`_spearman_forms`."""
    n = bits.shape[2]
    quad = np.einsum("mcpn,mcn->mcp", P[..., :n], bits).astype(np.float64)
    tied = bool(chunk["alpha_x"].any() or chunk["alpha_y"].any())   # else every t_v is 0: no ties
    t = P[..., n + 2:].copy() if tied else None   # (a strided plane: its contiguous copy is faster to add to)
    var_z = chunk["var_z"][:, None]
    out = []
    for num, alpha, sign in ((chunk["c0"][:, None] + P[..., n] + quad, chunk["alpha_x"], 1),
                             (chunk["cy"][:, None] - P[..., n + 1] + quad, chunk["alpha_y"], -1)):
        ties = 0.0
        if tied:   # counts below 2n, sum_v t_v^3 <= (2n)^3: exact in P's dtype (see _spearman_forms)
            # alpha + t, alpha - t (the latter in place of t: the x side's sums are taken)
            tv = np.add(alpha[:, None].astype(t.dtype), t) if sign > 0 else np.subtract(
                alpha[:, None].astype(t.dtype), t, out=t)
            cubes = np.multiply(tv, tv)   # tv * tv * tv - tv in place: the same operations
            np.multiply(cubes, tv, out=cubes)
            np.subtract(cubes, tv, out=cubes)   # summed over v by one BLAS product with ones (exact)
            ties = (cubes.reshape(-1, cubes.shape[-1]) @ np.ones(cubes.shape[-1], t.dtype)).reshape(
                cubes.shape[:-1]).astype(np.float64)
        var_x = (n**3 - n - ties) / 12
        # clip(num / sqrt(var_x var_z)), NaN where a variance is 0: in place (num is new), the same operations
        scale = np.multiply(var_x, var_z)
        with np.errstate(invalid="ignore", divide="ignore"):
            np.sqrt(scale, out=scale)
            np.divide(num, scale, out=num)
        np.clip(num, -1.0, 1.0, out=num)
        num[~np.broadcast_to((var_x > 0) & (var_z > 0), num.shape)] = np.nan
        out.append(num)
    return out[0], out[1]


def _kendall_forms(X: np.ndarray, Y: np.ndarray, Z: np.ndarray) -> dict:
    """Summary Kendall tau-b of a pair: the quadratic forms of :func:`.batched._perm_pairs`,
    A (M, N, 7 + 3N) = [its linear coefficients | D of the three pair sums]."""
    pairs = batched._perm_pairs(X, Y, Z)
    dtype = batched._exact_dtype(X.shape[0])
    A = np.concatenate([pairs.coef, *(pairs.D[f] for f in range(3))], axis=2)
    return {"A": np.ascontiguousarray(A, dtype=dtype), "const_x": pairs.const_x, "const_y": pairs.const_y,
            "n_x": pairs.n_x, "n_y": pairs.n_y, "blocks": np.array(pairs.nonzero)}


def _kendall_r(chunk: dict, P: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, c, p) per-input tau-b of X' and Y' from the forms of :func:`_kendall_forms`."""
    n = bits.shape[2]
    # each sum's plane on its own (contiguous): l (3), D1 (3), the valid count's change (1);
    # without the zero columns (:func:`_column_ranges`) l and D1 of the first two sums: the
    # others 0.0 (x + 0.0 and x - 0.0 are x for these sums, never -0.0), their planes (M, 1, p)
    if chunk["linear"] == 7:
        lin = [P[..., f].astype(np.float64) for f in range(7)]
    else:
        lin = [P[..., f].astype(np.float64) for f in range(2)] + [0.0]
        lin += [P[..., f].astype(np.float64) for f in (2, 3)] + [0.0, 0.0]
    quad = [0.0, 0.0, 0.0]
    at = 7 if chunk["linear"] == 7 else 4
    for f in np.flatnonzero(chunk["blocks"]):   # the blocks kept (:func:`_column_ranges`)
        quad[f] = np.einsum("mcpn,mcn->mcp", P[..., at:at + n], bits).astype(np.float64)
        at += n
    out = []
    for side, sign in (("x", 1), ("y", -1)):
        const = chunk["const_" + side][:, None]
        if sign > 0:
            count = chunk["n_x"][:, None] + lin[6]
            sums = [const[..., f] + lin[f] + quad[f] for f in range(3)]
        else:
            count = chunk["n_y"][:, None] - lin[6]
            sums = [const[..., f] - lin[f] - 2 * lin[3 + f] + quad[f] for f in range(3)]
        total = count * count
        out.append(_tau_b(sums[0], np.subtract(total, sums[1], out=sums[1]), np.subtract(total, sums[2], out=sums[2])))
    return out[0], out[1]


def _tau_b(s: np.ndarray, untied_x: np.ndarray, untied_z: np.ndarray) -> np.ndarray:
    """:func:`.correlation.kendall_tau`'s tau-b (the same operations, in the same order) in
    place of the new arrays ``s``, ``untied_x`` and ``untied_z`` (all of one shape)."""
    undefined = (untied_x == 0) | (untied_z == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(s, 2, out=s)   # s / 2 / sqrt(untied_x / 2) / sqrt(untied_z / 2)
        for untied in (untied_x, untied_z):
            np.divide(untied, 2, out=untied)
            np.sqrt(untied, out=untied)
            np.divide(s, untied, out=s)
    np.clip(s, -1.0, 1.0, out=s)
    s[undefined] = np.nan
    return s
