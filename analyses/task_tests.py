"""The two task kinds of mt-metrics-eval's WMT24 task set (``tasks.WMT24``) and their tests.

**System-level soft pairwise accuracy** (``spa``; mt-metrics-eval ``corr_fcn='pce'``,
Thompson et al. 2024): :func:`.stats.soft_pairwise.soft_pairwise_accuracy` on the segment
cells. Its test between metrics a and b (mt-metrics-eval ``PermutationSigDiff`` with the pce
function, ``perm_test='scores'``): both metrics' cells standardised, each cell swapped between
them with probability 1/2 (perm-both), and SPA recomputed on both hybrids with the same inner
sign flips; delta_b = SPA(a'_b) - SPA(b'_b). SPA depends on a metric's scores only through the
signs of sums of its per-system differences, so standardising leaves the observed value
unchanged.

**Segment-level acc-eq with items grouped** (``acc-23[tie-calibrated]`` at the ``summary``
level; ``corr_fcn='KendallWithTiesOpt'``, ``avg_by='item'``, ``sample_rate=1``) and its
**test over pairs** (``perm_test='pairs'``, ``stats.PairwisePermutationSigDiff``): each
metric keeps its own threshold epsilon, calibrated once on the task's data; for every item j
(an input) and pair p of systems both rated there, metric m agrees on p when
sign_eps(x_i - x_k) = sign(z_i - z_k) (sign_eps = 0 within epsilon), so acc-eq(m) =
(1/J) sum_j (1/P_j) sum_p A_p(m) over the J items with P_j >= 1 pairs. A resample swaps, pair
by pair with probability 1/2, the two metrics' agreements (never their scores), so

    delta_b = sum_(j,p) s_bp w_p (A_p(a) - A_p(b)),   w_p = 1 / (J P_j),  s_bp = +-1,

the observed delta being the same sum with every s = +1 (= acc-eq(a) - acc-eq(b)).

Both tasks are computed on the cells where the human and every ranked metric are present (as
mt-metrics-eval's complete matrices), so a metric's value and its tests use the same cells.
"""

from __future__ import annotations

import numpy as np

from .stats import kendall_variants, soft_pairwise

#: The task kinds: their coefficient label (a task spec's COEFFICIENT) and level.
SPA = "spa"
ACC_EQ = "acc-23[tie-calibrated]"
#: The tests of a task: ``perm-both`` (cells swapped, the statistic recomputed) or ``pairs``.
TESTS = ("perm-both", "pairs")


def common_cells(metrics: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """Z with NaN wherever the human or any metric lacks the cell."""
    missing = np.isnan(Z)
    for X in metrics.values():
        missing |= np.isnan(X)
    return np.where(missing, np.nan, Z)


def spa_value(X: np.ndarray, Z: np.ndarray, signs: np.ndarray) -> float:
    """SPA of ``X`` against ``Z`` with the given inner ``signs`` (the inputs complete in both)."""
    return soft_pairwise.soft_pairwise_accuracy(X, Z, signs=signs).spa


def spa_inputs(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The systems and inputs SPA uses on the common cells ``Z`` (systems with a value; inputs
    where all of them have one)."""
    ok = ~np.isnan(Z)
    systems = np.flatnonzero(ok.any(axis=1))
    return systems, np.flatnonzero(ok[systems].all(axis=0))


def spa_pvalues_batched(S: np.ndarray, flipped: np.ndarray) -> np.ndarray:
    """(B, P) p-values of "system i better than k" for every pair (i < k, row-major) of each
    (B, N, M) matrix of ``S``: #{b' : sum_{j flipped} d_j <= 0} / K, ``flipped`` (K, M) 0/1
    (:func:`.stats.soft_pairwise.pairwise_permutation_pvalues`, batched)."""
    i, k = np.triu_indices(S.shape[1], 1)
    D = S[:, i, :] - S[:, k, :]  # (B, P, M)
    return (np.einsum("bpm,km->bpk", D, flipped) <= 0).mean(axis=-1)


def spa_deltas(Xs: np.ndarray, Ys: np.ndarray, Z: np.ndarray, mask: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """delta_b = SPA(X'_b) - SPA(Y'_b) for the swap masks ``mask`` (k, N, M) of the standardised
    ``Xs``, ``Ys`` on the common cells ``Z`` (its systems and inputs: :func:`spa_inputs`)."""
    systems, inputs = spa_inputs(Z)
    sub = np.ix_(systems, inputs)
    Xs, Ys, Zs = Xs[sub], Ys[sub], Z[sub]
    mask = mask[:, systems][:, :, inputs]
    flipped = (np.asarray(signs) < 0).astype(np.float64)
    i, k = np.triu_indices(Zs.shape[0], 1)
    p_h = soft_pairwise.pairwise_permutation_pvalues(Zs, signs)[i, k]
    out = np.empty(mask.shape[0])
    for start in range(0, mask.shape[0], 64):
        m = mask[start:start + 64]
        pa = spa_pvalues_batched(np.where(m, Ys, Xs), flipped)
        pb = spa_pvalues_batched(np.where(m, Xs, Ys), flipped)
        out[start:start + 64] = np.abs(p_h - pb).mean(axis=1) - np.abs(p_h - pa).mean(axis=1)
    return out


def pair_agreements(X: np.ndarray, Z: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per (item, pair of systems both rated there), item by item: the agreement A_p (1 or 0)
    of ``X`` with tie threshold ``epsilon``, and the weight w_p = 1 / (J P_j) (module docstring)."""
    agree, weight = [], []
    for j in range(Z.shape[1]):
        keep = ~np.isnan(Z[:, j]) & ~np.isnan(X[:, j])
        x, z = X[keep, j], Z[keep, j]
        if x.size < 2:
            continue
        a, b = np.triu_indices(x.size, 1)
        dx, dz = x[a] - x[b], z[a] - z[b]
        sx = np.where(np.abs(dx) <= epsilon, 0.0, np.sign(dx))
        agree.append((sx == np.sign(dz)).astype(np.float64))
        weight.append(np.full(a.size, 1.0 / a.size))
    if not agree:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(agree), np.concatenate(weight) / len(agree)


def calibrated_epsilon(X: np.ndarray, Z: np.ndarray) -> float:
    """The metric's acc-eq threshold at the item level (tie calibration on the task's data)."""
    return kendall_variants.calibrate(X, Z, "summary", "acc23").epsilon


def pairs_deltas(Aa: np.ndarray, Ab: np.ndarray, w: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """delta_b = sum_p s_bp w_p (A_p(a) - A_p(b)) for the 0/1 ``flips`` (k, P) (1: the pair's
    agreements swapped, s = -1)."""
    d = w * (Aa - Ab)
    return d.sum() - 2.0 * (flips.astype(np.float64) @ d)
