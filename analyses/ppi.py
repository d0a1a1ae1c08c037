"""Prediction-powered inference: what the humans would give on every cell, from a human measure on
some cells and a metric (or an automatic judge) on all of them (issue 45 item 1).

PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453), in the conventions of the authors'
implementation (``ppi_py``; run beside ours for the test fixtures, never copied). With n labelled
cells (human ``y`` and metric ``yhat``) and N unlabelled ones (metric ``yhat_u`` only):

* the mean (:func:`mean`): theta = lam mean(yhat_u) + mean(y - lam yhat); its standard error
  sqrt(var(lam yhat_u) / N + var(y - lam yhat) / n), variances with divisor n (numpy's ddof 0);
  the normal interval theta -/+ z_{1-alpha/2} se (undefined, NaN, when se = 0: labels that do not
  vary; ppi_py prints a zero-width interval there);
* lam estimated (``lam=None``): lam = cov(y, yhat) / ((1 + n/N) var(yhat, yhat_u)), the covariance
  over the labelled cells with divisor n, the variance over the n + N metric values pooled with
  divisor n + N - 1, clipped to [0, 1]; lam = 1 is plain PPI (Angelopoulos et al. 2023, Science),
  lam = 0 the classical estimate from the humans alone (mean(y), se sd(y)/sqrt(n) with divisor n);
* the effective number of human labels: n (classical width / PPI width)^2, the labels the
  classical interval would need for the PPI interval's width (its standard error falls as 1/sqrt n);
* the Bradley-Terry leaderboard (:func:`bradley_terry`): PPI++ for the logistic M-estimator
  (Boyeau et al. 2024, "AutoEval done right"): theta minimises
  lam/N sum_u l(x, yhat_u) - lam/n sum l(x, yhat) + 1/n sum l(x, y), l the logistic loss of a
  comparison's design row x (+1 for the first system, -1 for the second, the reference system's
  column dropped); Sigma = H^-1 (n/N V_u + V) H^-1 with H the Hessian over all n + N rows
  (divisor n + N), V_u = cov(lam g_hat_u), V = cov(g - lam g_hat) (divisor count - 1), se =
  sqrt(diag(Sigma) / n); lam = tr(H^-1 C H^-1) / (2 (1 + n/N) tr(H^-1 V_hat H^-1)) with
  C = (1/n)(G'Ghat + Ghat'G) of the centred gradients and V_hat the covariance of every predicted
  gradient (divisor n + N - 1), clipped to [0, 1]; estimated as the anchor does: a fit at lam = 1,
  lam at that fit, a refit, lam again at the refit, the final fit and its interval at that lam.

Every interval assumes the labelled cells are a uniform random sample of the cells.

Clustered cells (``clusters``: segments of one document, ``--resample-clusters``): the standard
errors are the cluster-robust (sandwich) ones, CR0 (no small-sample factor, as the divisor-n
variances above): theta - E theta is the sum over cells of psi_i = (r_i - mean r) / n on a
labelled cell (r = y - lam yhat) and lam (yhat_i - mean yhat_u) / N on an unlabelled one, and
se^2 = sum over clusters of (the cluster's sum of psi_i)^2, a labelled and an unlabelled cell of
one cluster summed together (they are not independent); the classical se likewise from the
labelled cells' (y_i - mean y) / n. With one cell per cluster this is the formula above, so every
cluster of one cell gives the unclustered numbers (computed by that formula, bit for bit). lam is
estimated as without clusters (any lam in [0, 1] gives a valid interval; this one is no longer
the variance-minimising one under dependence). The Bradley-Terry fit likewise: Sigma / n becomes
H^-1 M H^-1, M the sum over clusters of the outer products of the cluster's summed psi_i, now the
gradients' (g_i - lam g_hat_i centred, over n; lam g_hat_u,i centred, over N), CR0 (without the
count - 1 divisor of the unclustered covariances).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

#: What every output says of the intervals.
ASSUMPTION = "the intervals assume the human-labelled cells are a uniform random sample of the cells"
#: lam at or below this: the metric does not help (the estimate is the classical one, or nearly).
LAM_NEGLIGIBLE = 0.05


@dataclass(frozen=True)
class Estimate:
    """One prediction-powered estimate: ``estimate`` with its ``se`` and interval, the ``lam`` used,
    the classical estimate from the labelled cells alone with its interval, ``n`` labelled and
    ``N`` unlabelled cells, and ``effective_labels`` (NaN where a width is 0 or undefined)."""

    estimate: float
    se: float
    lower: float
    upper: float
    lam: float
    classical: float
    classical_se: float
    classical_lower: float
    classical_upper: float
    n: int
    N: int
    effective_labels: float

    @property
    def pvalue(self) -> float:
        """Two-sided normal p of estimate = 0 (NaN when the standard error is 0 or undefined)."""
        if not (self.se > 0) or math.isnan(self.estimate):
            return math.nan
        return float(2 * stats.norm.sf(abs(self.estimate) / self.se))


def lam_hat(y: npt.ArrayLike, yhat: npt.ArrayLike, yhat_u: npt.ArrayLike) -> float:
    """PPI++'s variance-minimising lam for a mean, clipped to [0, 1] (module docstring); 0 when the
    metric is constant (every lam then gives the same estimate and interval)."""
    y, yhat, yhat_u = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (y, yhat, yhat_u))
    n, N = y.size, yhat_u.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not var > 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / N) * var), 0.0, 1.0))


def mean(y: npt.ArrayLike, yhat: npt.ArrayLike, yhat_u: npt.ArrayLike, *, lam: float | None = None,
         alpha: float = 0.05, clusters: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> Estimate:
    """The PPI++ estimate of the mean of ``y`` over every cell (module docstring): ``y`` and ``yhat``
    on the n labelled cells, ``yhat_u`` on the N unlabelled ones; ``lam`` None: estimated.
    Undefined (NaN) with fewer than 2 labelled cells or no unlabelled one. ``clusters``: (the
    labelled cells' cluster labels, the unlabelled cells'): cluster-robust standard errors."""
    y, yhat, yhat_u = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (y, yhat, yhat_u))
    if y.size != yhat.size:
        raise ValueError(f"`y` and `yhat` must have the same length; got {y.size} and {yhat.size}.")
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha}.")
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"`lam` must be in [0, 1]; got {lam}.")
    n, N = y.size, yhat_u.size
    if n < 2 or N < 1:
        nan = math.nan
        return Estimate(nan, nan, nan, nan, nan if lam is None else float(lam), nan, nan, nan, nan, n, N, nan)
    used = lam_hat(y, yhat, yhat_u) if lam is None else float(lam)
    z = float(stats.norm.ppf(1 - alpha / 2))
    theta = float(used * yhat_u.mean() + (y - used * yhat).mean())
    classical = float(y.mean())
    codes = _cluster_codes(clusters, n, N)
    if codes is None:
        se = math.sqrt(float(np.var(used * yhat_u)) / N + float(np.var(y - used * yhat)) / n)
        classical_se = math.sqrt(float(np.var(y)) / n)
    else:
        r = y - used * yhat
        psi = np.concatenate([(r - r.mean()) / n, used * (yhat_u - yhat_u.mean()) / N])
        se = clustered_se(psi, codes)
        classical_se = clustered_se((y - classical) / n, codes[:n])
    lower, upper = _bounds(theta, se, z)
    classical_lower, classical_upper = _bounds(classical, classical_se, z)
    return Estimate(theta, se, lower, upper, used, classical, classical_se, classical_lower, classical_upper, n, N,
                    effective_labels(n, classical_se, se))


def _cluster_codes(clusters, n: int, N: int) -> np.ndarray | None:
    """The clusters of the n labelled then N unlabelled cells, numbered; None without clusters or
    with one cell per cluster (the unclustered formula is then the clustered one)."""
    if clusters is None:
        return None
    labelled, unlabelled = (list(c) for c in clusters)
    if len(labelled) != n or len(unlabelled) != N:
        raise ValueError(f"clusters: {len(labelled)} and {len(unlabelled)} labels for {n} labelled and {N} "
                         "unlabelled cells")
    number: dict = {}
    codes = np.array([number.setdefault(v, len(number)) for v in labelled + unlabelled], dtype=np.int64)
    return None if len(number) == n + N else codes


def clustered_se(psi: np.ndarray, codes: np.ndarray) -> float:
    """sqrt(sum over clusters of (sum of psi_i over the cluster)^2): the CR0 sandwich standard error
    of a sum of centred contributions ``psi`` whose clusters are ``codes``."""
    sums = np.bincount(codes, weights=psi)
    return math.sqrt(float(np.sum(sums * sums)))


def _bounds(theta: float, se: float, z: float) -> tuple[float, float]:
    """theta -/+ z se; undefined (NaN) when the standard error is 0 (labels and predictions that do
    not vary: a normal interval of width 0 would claim certainty the sample cannot give)."""
    if not se > 0:
        return math.nan, math.nan
    return theta - z * se, theta + z * se


def effective_labels(n: int, classical_se: float, se: float) -> float:
    """n (classical width / PPI width)^2: the human labels the classical interval would need for
    the PPI interval's width; NaN when either width is 0 or undefined."""
    if not (se > 0 and classical_se > 0):
        return math.nan
    return float(n * (classical_se / se) ** 2)


# --- Bradley-Terry: PPI++ for the logistic M-estimator --------------------------------------------------
@dataclass(frozen=True)
class BradleyTerry:
    """The PPI++ Bradley-Terry fit: per coefficient (the systems but the reference, whose score is
    0) the estimate, its se and interval, the classical fit's (human votes alone), lam (one for
    every coefficient), n labelled and N unlabelled comparisons, and each coefficient's effective
    number of human votes; ``converged`` False: no finite fit (NaN everywhere), also when a
    coefficient's variance is not finite and positive (quasi-separated votes: a system that never
    wins or never loses, whose likelihood has no finite maximum; Newton's iterate there is an
    artefact of where it stopped, not an estimate). The classical fit likewise: NaN where the human
    votes alone have no finite fit."""

    estimate: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    lam: float
    classical: np.ndarray
    classical_se: np.ndarray
    classical_lower: np.ndarray
    classical_upper: np.ndarray
    n: int
    N: int
    effective_labels: np.ndarray
    converged: bool
    #: Sigma / n of the PPI fit and of the classical one (d x d): the differences' variances
    covariance: np.ndarray | None = None
    classical_covariance: np.ndarray | None = None

    def difference(self, i: int | None, j: int | None, *, classical: bool = False) -> tuple[float, float]:
        """(theta_i - theta_j, its standard error) from the covariance; None: the reference (0)."""
        theta = self.classical if classical else self.estimate
        cov = self.classical_covariance if classical else self.covariance
        if not self.converged or cov is None:
            return math.nan, math.nan
        e = np.zeros(theta.size)
        if i is not None:
            e[i] += 1.0
        if j is not None:
            e[j] -= 1.0
        return float(e @ theta), float(math.sqrt(max(float(e @ cov @ e), 0.0)))


def design(first: npt.ArrayLike, second: npt.ArrayLike, n_systems: int, reference: int = 0) -> np.ndarray:
    """Bradley-Terry design rows of comparisons ``first[i]`` vs ``second[i]`` (system indices): +1 in
    the first system's column, -1 in the second's, the ``reference`` column dropped."""
    a, b = np.asarray(first, int).reshape(-1), np.asarray(second, int).reshape(-1)
    X = np.zeros((a.size, n_systems))
    rows = np.arange(a.size)
    X[rows, a] += 1.0
    X[rows, b] -= 1.0
    return np.delete(X, reference, axis=1)


def _expit(t):
    return np.exp(-np.logaddexp(0.0, -t))


def _fit(X, y, yhat, Xu, yhat_u, lam: float, start: np.ndarray) -> np.ndarray | None:
    """theta minimising the rectified logistic loss at ``lam`` (Newton's method with step halving;
    the loss is convex in theta for 0 <= lam <= 1 only through its total, so a step is kept only
    when it lowers the loss); None without a finite minimum."""
    n, N = X.shape[0], Xu.shape[0]

    def loss(t):
        def part(A, target):
            s = A @ t
            return float(np.sum(np.logaddexp(0.0, s) - target * s))
        return lam / N * part(Xu, yhat_u) - lam / n * part(X, yhat) + part(X, y) / n

    theta, current = start.copy(), loss(start)
    for _ in range(500):
        mu, mu_u = _expit(X @ theta), _expit(Xu @ theta)
        grad = lam / N * Xu.T @ (mu_u - yhat_u) - lam / n * X.T @ (mu - yhat) + X.T @ (mu - y) / n
        w, w_u = mu * (1 - mu), mu_u * (1 - mu_u)
        hess = lam / N * (Xu.T * w_u) @ Xu + (1 - lam) / n * (X.T * w) @ X
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            return None
        t = 1.0
        while t > 1e-12:
            trial = theta - t * step
            value = loss(trial)
            if value <= current:
                break
            t /= 2
        else:
            break
        moved = float(np.max(np.abs(trial - theta)))
        theta, current = trial, value
        if moved < 1e-12 or float(np.max(np.abs(grad))) < 1e-14:
            break
    if not np.all(np.isfinite(theta)) or float(np.max(np.abs(theta))) > 50:
        return None
    return theta


def _stats(theta, X, y, yhat, Xu, yhat_u, use_unlabelled: bool):
    n, N = X.shape[0], Xu.shape[0]
    mu, mu_u = _expit(X @ theta), _expit(Xu @ theta)
    if use_unlabelled:
        hess = ((Xu.T * (mu_u * (1 - mu_u))) @ Xu + (X.T * (mu * (1 - mu))) @ X) / (N + n)
    else:
        hess = (X.T * (mu * (1 - mu))) @ X / n
    g = X * (mu - y)[:, None]
    g_hat = X * (mu - yhat)[:, None]
    g_hat_u = Xu * (mu_u - yhat_u)[:, None] if use_unlabelled else np.zeros_like(Xu)
    return g, g_hat, g_hat_u, np.linalg.inv(hess)


def _lam_glm(g, g_hat, g_hat_u, inv_h) -> float:
    n, N = g.shape[0], g_hat_u.shape[0]
    gc, hc = g - g.mean(axis=0), g_hat - g_hat.mean(axis=0)
    C = (gc.T @ hc + hc.T @ gc) / n
    V = np.atleast_2d(np.cov(np.concatenate([g_hat, g_hat_u]).T))
    denom = 2 * (1 + n / N) * np.trace(inv_h @ V @ inv_h)
    if not denom > 0:
        return 0.0
    return float(np.clip(np.trace(inv_h @ C @ inv_h) / denom, 0.0, 1.0))


def _covariance(theta, lam, X, y, yhat, Xu, yhat_u):
    n, N = X.shape[0], Xu.shape[0]
    g, g_hat, g_hat_u, inv_h = _stats(theta, X, y, yhat, Xu, yhat_u, lam != 0)
    V_u = np.atleast_2d(np.cov((lam * g_hat_u).T))
    V = np.atleast_2d(np.cov((g - lam * g_hat).T))
    sigma = inv_h @ (n / N * V_u + V) @ inv_h
    return sigma / n


def _clustered_covariance(theta, lam, X, y, yhat, Xu, yhat_u, codes: np.ndarray) -> np.ndarray:
    """The cluster-robust (CR0) sandwich H^-1 M H^-1 of the fit ``theta`` at ``lam``: M = sum over
    clusters of S_c S_c', S_c the cluster's sum of psi_i = (r_i - mean r) / n on a labelled
    comparison (r = g - lam g_hat, the gradients of :func:`_stats`) and lam (g_hat_u,i - mean
    g_hat_u) / N on an unlabelled one (0 at lam = 0: the classical fit's labelled cells alone)."""
    n, N = X.shape[0], Xu.shape[0]
    g, g_hat, g_hat_u, inv_h = _stats(theta, X, y, yhat, Xu, yhat_u, lam != 0)
    r = g - lam * g_hat
    psi = np.concatenate([(r - r.mean(axis=0)) / n, lam * (g_hat_u - g_hat_u.mean(axis=0)) / N])
    sums = np.zeros((int(codes.max()) + 1, psi.shape[1]))
    np.add.at(sums, codes, psi)
    return inv_h @ (sums.T @ sums) @ inv_h


def bradley_terry(X: npt.ArrayLike, y: npt.ArrayLike, yhat: npt.ArrayLike, Xu: npt.ArrayLike,
                  yhat_u: npt.ArrayLike, *, lam: float | None = None, alpha: float = 0.05,
                  clusters: tuple[npt.ArrayLike, npt.ArrayLike] | None = None) -> BradleyTerry:
    """PPI++ Bradley-Terry coefficients (module docstring) from design rows ``X`` (:func:`design`) of
    the n comparisons with a human verdict ``y`` (1: the first system preferred, 0: the second) and
    the judge's ``yhat`` (in [0, 1]), and rows ``Xu`` of the N comparisons with the judge's
    ``yhat_u`` only; ``lam`` None: estimated. ``clusters``: (the labelled comparisons' cluster
    labels, the unlabelled ones'): the cluster-robust (CR0) sandwich (:func:`_clustered_covariance`;
    lam estimated as without clusters); one comparison per cluster: the unclustered formula."""
    X, Xu = np.asarray(X, np.float64), np.asarray(Xu, np.float64)
    y, yhat, yhat_u = (np.asarray(a, np.float64).reshape(-1) for a in (y, yhat, yhat_u))
    if lam is not None and not 0 <= lam <= 1:
        raise ValueError(f"`lam` must be in [0, 1]; got {lam}.")
    d, n, N = X.shape[1], X.shape[0], Xu.shape[0]
    z = float(stats.norm.ppf(1 - alpha / 2))
    nan = np.full(d, np.nan)
    failed = BradleyTerry(nan, nan, nan, nan, math.nan if lam is None else float(lam), nan, nan, nan, nan, n, N,
                          nan, False)
    if n < 2 or N < 1:
        return failed
    start = np.zeros(d)
    classical = _fit(X, y, yhat, Xu, yhat_u, 0.0, start)
    if classical is None:
        return failed
    if lam is None:
        first = _fit(X, y, yhat, Xu, yhat_u, 1.0, classical)
        if first is None:
            return failed
        lam1 = _lam_glm(*_stats(first, X, y, yhat, Xu, yhat_u, True))
        second = _fit(X, y, yhat, Xu, yhat_u, lam1, classical)
        if second is None:
            return failed
        used = _lam_glm(*_stats(second, X, y, yhat, Xu, yhat_u, True))
    else:
        used = float(lam)
    theta = _fit(X, y, yhat, Xu, yhat_u, used, classical)
    if theta is None:
        return failed
    codes = _cluster_codes(clusters, n, N)
    if codes is None:
        cov = _covariance(theta, used, X, y, yhat, Xu, yhat_u)
        ccov = _covariance(classical, 0.0, X, y, yhat, Xu, yhat_u)
    else:
        cov = _clustered_covariance(theta, used, X, y, yhat, Xu, yhat_u, codes)
        ccov = _clustered_covariance(classical, 0.0, X, y, yhat, Xu, yhat_u, codes)
    with np.errstate(invalid="ignore"):
        se, cse = np.sqrt(np.diag(cov)), np.sqrt(np.diag(ccov))
    if not (np.isfinite(se) & (se > 0)).all():
        return failed     # a direction without a finite maximum (a system that never wins, or never loses)
    if not (np.isfinite(cse) & (cse > 0)).all():          # the human votes alone: no classical fit
        classical, cse, ccov = nan, nan, None
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = np.where((se > 0) & (cse > 0), n * (cse / se) ** 2, np.nan)
    return BradleyTerry(theta, se, theta - z * se, theta + z * se, used, classical, cse, classical - z * cse,
                        classical + z * cse, n, N, eff, True, cov, ccov)
