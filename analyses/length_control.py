"""The length-controlled win rate of AlpacaEval 2.0 (Dubois et al., 2024, "Length-Controlled
AlpacaEval"; alpaca_eval ``src/alpaca_eval/metrics/glm_winrate.py``).

A model m is compared with one baseline b on items i = 1..n; ``preference`` y_i in [0, 1] is
the judge's preference for m's output (1: m's, 0: the baseline's, 0.5: a tie; AlpacaEval's
1/2/1.5 codes, output_2 being m's, map to 0/1/0.5 as ``code - 1``, its 0 read as 1.5, a draw).

**AlpacaEval's GLMs** (:func:`alpaca_lc`, :data:`GLMS`), computed as its code computes them:

    logit P(m preferred on i) = phi * tanh(s_i) + psi * g_i + theta * not_gamed_i      (no intercept)

with s_i = (len(b's output) - len(m's output)) / sd (AlpacaEval's ``std_delta_len``: output_1
minus output_2 in characters over their sample standard deviation, ddof 1, over m's items), g_i
the instruction's difficulty (``instruction_difficulty``, a precomputed input) and not_gamed 1 on
m's items. The labels are soft (y_i), the fit is an L1-penalised logistic regression,

    minimise  C * sum_i w_i [-(y_i log s(x_i beta) + (1 - y_i) log(1 - s(x_i beta)))] + |beta|_1,

(liblinear's objective, as scikit-learn's ``LogisticRegressionCV(penalty="l1",
solver="liblinear", fit_intercept=False)`` on the items duplicated with labels 1 and 0 weighted
y and 1 - y), with C chosen among ``numpy.logspace(-4, 4, 10)`` by 5-fold ``GroupKFold``
cross-validation (each item one group; the fold of item r of N is (N - 1 - r) mod 5, the order
scikit-learn's GroupKFold gives groups of equal size) scored by the weighted soft log-loss
(the first C of the best mean score), then refitted on all items. ``length_controlled_v1`` adds
AlpacaEval's "gamed" baselines' items (``df_gamed.csv``: not_gamed 0, their own s and g) with
weight lambda / 2, lambda = 0.2, which pulls the length coefficient towards the one of
baselines prompted to be verbose or concise; ``length_controlled_noreg`` is the same model
without them, ``length_controlled_minimal`` has no difficulty term either. The
length-controlled win rate is the win rate the model would have with no length difference,

    LC = 100 * mean_i s(psi * g_i + theta),

over m's items. The L1 fit always has a finite minimum (for C finite), so it is defined
whenever the items are.

**The plain maximum-likelihood fit** (:func:`length_controlled_winrate`, the bootstrap of
:func:`bootstrap_interval`): the same soft-label likelihood with an intercept and no penalty,
delta_i = len(m's output) - len(b's output), and an optional difficulty. Its maximum is at
infinity exactly when some direction of the coefficients never lowers any item's likelihood
and raises one's (the items are separated, :func:`separated`, a linear program); then the fit is
undefined (NaN), never the optimiser's last step. A finite maximum at a large coefficient (the
verdicts of a gamed baseline, whose length explains them almost entirely) is found by Newton's
method, however large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: Newton steps before a fit is declared not converged.
MAX_STEPS = 500
#: Convergence: the largest gradient entry of the (per-item mean) log-likelihood.
TOLERANCE = 1e-10
#: The linear program's optimum above which the items are separated (a direction that raises some
#: item's likelihood without lowering any's, in a box of side 2 around 0).
SEPARATION_TOLERANCE = 1e-7


@dataclass(frozen=True)
class LengthControlled:
    """``lc_winrate`` and ``winrate`` (percent), the coefficients (``theta``, ``phi`` of the
    length term, ``psi`` of the difficulty, NaN when not in the model), ``n`` items, and whether
    the fit ``converged`` (if not, every estimate is NaN)."""

    lc_winrate: float
    winrate: float
    theta: float
    phi: float
    psi: float
    n: int
    converged: bool


def _logistic(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def fit_soft_logistic(X: npt.ArrayLike, y: npt.ArrayLike, ridge: float = 0.0) -> tuple[np.ndarray, bool]:
    """(beta, converged): the penalised maximum-likelihood logistic regression of the soft labels
    ``y`` in [0, 1] on the columns of ``X`` (no intercept added), by Newton's method with step
    halving. Not converged (beta NaN) when the likelihood has no finite maximum (``ridge`` 0 and
    the items :func:`separated`) or Newton's method does not reach it in :data:`MAX_STEPS`."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    n, p = X.shape
    beta = np.zeros(p)
    if ridge <= 0 and separated(X, y):
        return np.full(p, np.nan), False

    def objective(b):
        z = X @ b
        return (y * -np.logaddexp(0.0, -z) + (1 - y) * -np.logaddexp(0.0, z)).sum() - 0.5 * ridge * b @ b

    current = objective(beta)
    for _ in range(MAX_STEPS):
        mu = _logistic(X @ beta)
        grad = X.T @ (y - mu) - ridge * beta
        if np.abs(grad).max() / n < TOLERANCE:
            return beta, True
        hess = (X * (mu * (1 - mu))[:, None]).T @ X + ridge * np.eye(p)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-8:
            candidate = beta + t * step
            value = objective(candidate)
            if value >= current - 1e-12 * abs(current):
                break
            t /= 2
        beta, current = candidate, value
    return np.full(p, np.nan), False


def separated(X: npt.ArrayLike, y: npt.ArrayLike) -> bool:
    """Whether the soft-label logistic likelihood of ``y`` on ``X`` has no finite maximum: some
    direction d has x_i d >= 0 where y_i = 1, <= 0 where y_i = 0, = 0 where 0 < y_i < 1 (no item's
    likelihood falls along it) and x_i d != 0 for some item (one's rises: the likelihood grows
    towards its supremum without reaching it). The linear program maximises sum_i sign_i x_i d
    over those d in the box |d_j| <= 1 (scipy's HiGHS); separated when its optimum is positive."""
    from scipy.optimize import linprog

    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    ones, zeros, soft = y == 1, y == 0, (y > 0) & (y < 1)
    scale = np.abs(X).max() or 1.0
    Xs = X / scale
    sign = np.where(ones, 1.0, np.where(zeros, -1.0, 0.0))
    upper = -(sign[:, None] * Xs)[ones | zeros]            # sign_i x_i d >= 0
    result = linprog(-(sign @ Xs), A_ub=upper if upper.size else None,
                     b_ub=np.zeros(len(upper)) if upper.size else None,
                     A_eq=Xs[soft] if soft.any() else None, b_eq=np.zeros(int(soft.sum())) if soft.any() else None,
                     bounds=[(-1.0, 1.0)] * X.shape[1], method="highs")
    return bool(result.status == 0 and -result.fun > SEPARATION_TOLERANCE)


def length_controlled_winrate(preference: npt.ArrayLike, length_model: npt.ArrayLike,
                              length_baseline: npt.ArrayLike, difficulty: npt.ArrayLike | None = None, *,
                              ridge: float = 0.0) -> LengthControlled:
    """The length-controlled win rate of a model against one baseline (module docstring):
    ``preference`` per item in [0, 1] (1: the model's output preferred), the two outputs'
    lengths (characters), an optional per-item ``difficulty``. Items with an undefined
    preference are left out."""
    y = np.asarray(preference, np.float64).reshape(-1)
    lm, lb = (np.asarray(a, np.float64).reshape(-1) for a in (length_model, length_baseline))
    g = None if difficulty is None else np.asarray(difficulty, np.float64).reshape(-1)
    if not (y.size == lm.size == lb.size and (g is None or g.size == y.size)):
        raise ValueError("`preference`, the lengths and `difficulty` must have one entry per item.")
    if ((y < 0) | (y > 1)).any():
        raise ValueError("`preference` must lie in [0, 1] (1: the model's output preferred).")
    keep = ~np.isnan(y) & ~np.isnan(lm) & ~np.isnan(lb) & (np.ones_like(y, bool) if g is None else ~np.isnan(g))
    y, lm, lb = y[keep], lm[keep], lb[keep]
    g = None if g is None else g[keep]
    n = int(y.size)
    if n < 2:
        return LengthControlled(np.nan, 100 * float(y.mean()) if n else np.nan, np.nan, np.nan, np.nan, n, False)
    delta = lm - lb
    sd = delta.std(ddof=1)
    # no length difference at all: no length term (its coefficient is not identified)
    columns = [np.ones(n)] + ([np.tanh(delta / sd)] if sd > 0 else []) + ([] if g is None else [g])
    beta, converged = fit_soft_logistic(np.column_stack(columns), y, ridge)
    winrate = 100 * float(y.mean())
    if not converged:
        return LengthControlled(np.nan, winrate, np.nan, np.nan, np.nan, n, False)
    theta, phi = float(beta[0]), float(beta[1]) if sd > 0 else np.nan
    psi = float(beta[-1]) if g is not None else np.nan
    lc = 100 * float(_logistic(theta + (psi * g if g is not None else 0.0)).mean())
    return LengthControlled(lc, winrate, theta, phi, psi, n, True)


def bootstrap_interval(preference: npt.ArrayLike, length_model: npt.ArrayLike, length_baseline: npt.ArrayLike,
                       k: int, seed: int, alpha: float = 0.05) -> tuple[float, float, int]:
    """(lower, upper, n_valid): the 1 - ``alpha`` percentile interval of the length-controlled win
    rate over ``k`` bootstrap resamples of the items (drawn with replacement by
    ``numpy.random.default_rng(seed)``), over the resamples whose fit converged (NaN bounds when
    none did); the quantiles are numpy's default (linear) ones."""
    y = np.asarray(preference, np.float64).reshape(-1)
    lm, lb = (np.asarray(a, np.float64).reshape(-1) for a in (length_model, length_baseline))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, y.size, size=(k, y.size)) if y.size else np.zeros((k, 0), int)
    values = np.array([length_controlled_winrate(y[d], lm[d], lb[d]).lc_winrate for d in draws])
    valid = values[~np.isnan(values)]
    if not valid.size:
        return np.nan, np.nan, 0
    lower, upper = np.quantile(valid, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper), int(valid.size)


# --- AlpacaEval's GLMs, as its code computes them (module docstring) ---------------------------

#: AlpacaEval's GLMs: name -> (with the instruction difficulty, with the gamed baselines).
GLMS = {"length_controlled_v1": (True, True), "length_controlled_noreg": (True, False),
        "length_controlled_minimal": (False, False)}
#: The C values AlpacaEval's ``LogisticRegressionCV`` chooses among (scikit-learn's default Cs=10).
CS = np.logspace(-4, 4, 10)
#: GroupKFold's folds.
N_SPLITS = 5
#: Weight of the gamed baselines' items, divided by 2 (there are two of them).
GAMED_LAMBDA = 0.2
#: The L1 fit's stopping rule (the largest entry of F's minimum-norm subgradient, relative to C
#: times the total weight) and its steps.
L1_TOLERANCE, L1_MAX_STEPS = 1e-9, 200
#: Up to this many columns proximal Newton with coordinate descent; beyond, L-BFGS-B.
L1_COORDINATES = 12
#: AlpacaEval's log-loss clips the predictions to [eps, 1 - eps].
LOGLOSS_EPS = 1e-15


@dataclass(frozen=True)
class AlpacaLC:
    """AlpacaEval's numbers for one model: ``lc_winrate`` (its ``length_controlled_winrate``),
    ``win_rate`` and ``standard_error`` (100 * mean and sem of the preferences), ``discrete_win_rate``
    (each preference rounded: > 0.5 a win, < 0.5 a loss, 0.5 a draw), the fitted coefficients
    (``length`` of tanh(s), ``difficulty``, ``model`` of not_gamed; NaN when not in the GLM), the
    chosen ``C``, ``n`` items and the ``glm``."""

    lc_winrate: float
    win_rate: float
    standard_error: float
    discrete_win_rate: float
    length: float
    difficulty: float
    model: float
    C: float
    n: int
    glm: str


def _soft_loss(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """-(y log s(z) + (1 - y) log(1 - s(z))), stably."""
    return y * np.logaddexp(0.0, -z) + (1 - y) * np.logaddexp(0.0, z)


def l1_logistic(X: npt.ArrayLike, y: npt.ArrayLike, w: npt.ArrayLike, C: float) -> np.ndarray:
    """The minimiser of F(beta) = C * sum_i w_i soft_loss(x_i beta, y_i) + |beta|_1 (liblinear's L1
    logistic regression without intercept on the duplicated items, solved exactly rather than to
    liblinear's tolerance), by proximal Newton steps (each quadratic model minimised by coordinate
    descent, a backtracking line search on F) until the minimum-norm subgradient is below
    :data:`L1_TOLERANCE`. beta = 0 exactly when the optimality condition holds there
    (|C X'w(y - 1/2)|_inf <= 1)."""
    X, y, w = (np.asarray(a, np.float64) for a in (X, y, w))
    p = X.shape[1]
    beta = np.zeros(p)
    if np.abs(C * X.T @ (w * (0.5 - y))).max() <= 1.0:
        return beta
    if p > L1_COORDINATES:
        return _l1_logistic_lbfgs(X, y, w, C)

    def F(b):
        return C * float((w * _soft_loss(X @ b, y)).sum()) + float(np.abs(b).sum())

    current = F(beta)
    tolerance = L1_TOLERANCE * max(1.0, C * float(w.sum()))     # relative to the loss's scale
    for _ in range(L1_MAX_STEPS):
        mu = _logistic(X @ beta)
        grad = C * X.T @ (w * (mu - y))
        sub = np.where(beta != 0, grad + np.sign(beta), np.sign(grad) * np.maximum(np.abs(grad) - 1.0, 0.0))
        if np.abs(sub).max() <= tolerance:
            break
        H = C * (X * (w * mu * (1 - mu))[:, None]).T @ X
        u = beta.copy()                                      # the quadratic model's minimiser, coordinatewise
        for _sweep in range(1000):
            largest = 0.0
            for j in range(p):
                a = H[j, j]
                b = grad[j] + H[j] @ (u - beta) - a * (u[j] - beta[j])
                if a <= 0:
                    new = 0.0 if abs(b) <= 1 else u[j]
                else:
                    v = beta[j] - b / a
                    new = np.sign(v) * max(abs(v) - 1.0 / a, 0.0)
                largest = max(largest, abs(new - u[j]))
                u[j] = new
            if largest <= 1e-13 * (1.0 + np.abs(u).max()):
                break
        d = u - beta
        decrease = float(grad @ d) + float(np.abs(u).sum() - np.abs(beta).sum())
        if decrease >= -1e-15 * max(1.0, abs(current)):
            break                                           # no descent left at the machine's precision
        t = 1.0
        while t > 1e-12:
            candidate = beta + t * d
            value = F(candidate)
            if value <= current + 1e-4 * t * decrease:
                break
            t /= 2
        else:
            break
        beta, current = candidate, value
    return beta


def _l1_logistic_lbfgs(X: np.ndarray, y: np.ndarray, w: np.ndarray, C: float) -> np.ndarray:
    """:func:`l1_logistic` for many columns (the joint fit): L-BFGS-B on beta = u - v, u, v >= 0
    (smooth and convex), to a relative tolerance of 1e-13 on F."""
    from scipy.optimize import minimize

    p = X.shape[1]

    def f(uv):
        beta = uv[:p] - uv[p:]
        z = X @ beta
        g = C * X.T @ (w * (_logistic(z) - y))
        return C * float((w * _soft_loss(z, y)).sum()) + float(uv.sum()), np.concatenate([g + 1.0, 1.0 - g])

    res = minimize(f, np.zeros(2 * p), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (2 * p),
                   options={"maxiter": 20_000, "ftol": 1e-13, "gtol": 1e-8})
    return res.x[:p] - res.x[p:]


def group_folds(n: int, n_splits: int = N_SPLITS) -> np.ndarray:
    """The fold of each of n items, each its own group, as scikit-learn's ``GroupKFold`` (no
    shuffle) assigns groups of equal size: the last item to fold 0, the one before to fold 1, ..."""
    return (n - 1 - np.arange(n)) % n_splits


def choose_C(X: npt.ArrayLike, y: npt.ArrayLike, w: npt.ArrayLike, Cs: npt.ArrayLike = CS,
             n_splits: int = N_SPLITS) -> tuple[float, np.ndarray]:
    """(C, scores): the C of the best summed score over the folds of :func:`group_folds` (the
    first on a tie), and the scores (folds x Cs): minus the mean over the held-out items of w_i
    times the soft log-loss of the predictions clipped to [eps, 1 - eps] (AlpacaEval's
    ``logloss_continuous``)."""
    X, y, w = (np.asarray(a, np.float64) for a in (X, y, w))
    folds = group_folds(len(y), n_splits)
    scores = np.empty((n_splits, len(Cs)))
    for f in range(n_splits):
        train, test = folds != f, folds == f
        for j, C in enumerate(Cs):
            beta = l1_logistic(X[train], y[train], w[train], C)
            q = np.clip(_logistic(X[test] @ beta), LOGLOSS_EPS, 1 - LOGLOSS_EPS)
            ll = y[test] * np.log(q) + (1 - y[test]) * np.log(1 - q)
            scores[f, j] = float(np.mean(ll * w[test]))
    return float(np.asarray(Cs)[int(np.argmax(scores.sum(axis=0)))]), scores


def raw_winrates(preference: npt.ArrayLike) -> tuple[float, float, float]:
    """(win_rate, standard_error, discrete_win_rate) of preferences in [0, 1] (NaN left out), as
    AlpacaEval's ``get_winrate``: 100 * the mean, 100 * its standard error (ddof 1), and 100 * the
    mean of the rounded preferences (0.5 stays a draw)."""
    y = np.asarray(preference, np.float64).reshape(-1)
    y = y[~np.isnan(y)]
    if not y.size:
        return np.nan, np.nan, np.nan
    sem = float(y.std(ddof=1) / np.sqrt(y.size)) if y.size > 1 else np.nan
    discrete = np.where(y > 0.5, 1.0, np.where(y < 0.5, 0.0, 0.5))
    return 100 * float(y.mean()), 100 * sem, 100 * float(discrete.mean())


def _design(std_delta_len: np.ndarray, difficulty: np.ndarray | None, not_gamed: np.ndarray) -> np.ndarray:
    return np.column_stack([np.tanh(std_delta_len)] + ([] if difficulty is None else [difficulty]) + [not_gamed])


def alpaca_lc(preference: npt.ArrayLike, length_model: npt.ArrayLike, length_baseline: npt.ArrayLike,
              difficulty: npt.ArrayLike | None = None, gamed: dict | None = None, *,
              C: float | None = None) -> AlpacaLC:
    """AlpacaEval's length-controlled win rate of one model (module docstring): ``preference``
    per item in [0, 1] (1: the model's output preferred; NaN left out), the outputs' lengths in
    characters, ``difficulty`` per item (``length_controlled_noreg``), and ``gamed``: the gamed
    baselines' items, a dict of arrays ``preference`` (NaN left out), ``std_delta_len``,
    ``instruction_difficulty`` and optionally ``not_gamed_baseline`` (default 0) — the rows of
    AlpacaEval's ``df_gamed.csv``, in its order (``length_controlled_v1``; needs ``difficulty``). Neither:
    ``length_controlled_minimal``. ``C`` given: no cross-validation (the bootstrap's refits)."""
    y = np.asarray(preference, np.float64).reshape(-1)
    lm, lb = (np.asarray(a, np.float64).reshape(-1) for a in (length_model, length_baseline))
    g = None if difficulty is None else np.asarray(difficulty, np.float64).reshape(-1)
    if gamed is not None and g is None:
        raise ValueError("the gamed baselines' items need the instructions' difficulty")
    if not (y.size == lm.size == lb.size and (g is None or g.size == y.size)):
        raise ValueError("`preference`, the lengths and `difficulty` must have one entry per item.")
    if ((y < 0) | (y > 1)).any():
        raise ValueError("`preference` must lie in [0, 1] (1: the model's output preferred).")
    glm = "length_controlled_v1" if gamed is not None else (
        "length_controlled_noreg" if g is not None else "length_controlled_minimal")
    win, sem, discrete = raw_winrates(y)
    keep = ~np.isnan(y) & ~np.isnan(lm) & ~np.isnan(lb) & (True if g is None else ~np.isnan(g))
    y, lm, lb = y[keep], lm[keep], lb[keep]
    g = None if g is None else g[keep]
    n = int(y.size)
    undefined = AlpacaLC(np.nan, win, sem, discrete, np.nan, np.nan, np.nan, np.nan, n, glm)
    if n < 2:
        return undefined
    delta = lb - lm                                    # AlpacaEval's len(output_1) - len(output_2)
    sd = delta.std(ddof=1)
    s = delta / sd if sd > 0 else np.zeros(n)          # no length difference: the length term is 0
    X = _design(s, g, np.ones(n))
    w = np.ones(n)
    if gamed is not None:
        gy = np.asarray(gamed["preference"], np.float64)
        ok = ~np.isnan(gy)
        ng = np.asarray(gamed.get("not_gamed_baseline", np.zeros(gy.size)), np.float64)[ok]
        Xg = _design(np.asarray(gamed["std_delta_len"], np.float64)[ok],
                     np.asarray(gamed["instruction_difficulty"], np.float64)[ok], ng)
        # AlpacaEval's weights: 1 for a not-gamed row, lambda / 2 for a gamed baseline's
        X, y, w = np.vstack([Xg, X]), np.r_[gy[ok], y], np.r_[np.where(ng == 1, 1.0, GAMED_LAMBDA / 2), w]
    if C is None:
        if len(y) < N_SPLITS:
            return undefined
        C, _ = choose_C(X, y, w)
    beta = l1_logistic(X, y, w, C)
    phi, theta = float(beta[0]), float(beta[-1])
    psi = float(beta[1]) if g is not None else np.nan
    lc = 100 * float(_logistic(theta + (psi * g if g is not None else 0.0)).mean())
    return AlpacaLC(lc, win, sem, discrete, phi, psi, theta, float(C), n, glm)


def alpaca_bootstrap(preference, length_model, length_baseline, difficulty, gamed, C: float, k: int, seed: int,
                     alpha: float = 0.05) -> tuple[float, float, int]:
    """(lower, upper, n_valid): the 1 - ``alpha`` percentile interval of :func:`alpaca_lc` over ``k``
    bootstrap resamples of the model's items (``numpy.random.default_rng(seed)``; the gamed
    baselines' items kept as they are), each refitted at the ``C`` the cross-validation chose on
    all items."""
    y = np.asarray(preference, np.float64).reshape(-1)
    lm, lb = (np.asarray(a, np.float64).reshape(-1) for a in (length_model, length_baseline))
    g = None if difficulty is None else np.asarray(difficulty, np.float64).reshape(-1)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, y.size, size=(k, y.size)) if y.size else np.zeros((k, 0), int)
    values = np.array([alpaca_lc(y[d], lm[d], lb[d], None if g is None else g[d], gamed, C=C).lc_winrate
                       for d in draws])
    valid = values[~np.isnan(values)]
    if not valid.size:
        return np.nan, np.nan, 0
    lower, upper = np.quantile(valid, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper), int(valid.size)


def joint_difficulty(system: npt.ArrayLike, index: npt.ArrayLike, preference: npt.ArrayLike,
                     length_model: npt.ArrayLike, length_baseline: npt.ArrayLike) -> tuple[dict, float]:
    """({index: difficulty}, C): the instructions' difficulty by the joint fit AlpacaEval's
    ``notebooks/instruction_difficulty.ipynb`` describes, over every system's items against one
    baseline (``system`` a label per item, ``index`` the instruction's, the preference for the
    system in [0, 1], the two lengths): the L1 logistic regression (C by :func:`choose_C`, items in
    the order given) of

        C(system):tanh(s) + C(system) + C(index) + not_gamed - 1

    (each system its own length coefficient and term, each instruction its own term, the first
    instruction's 0 as patsy's treatment coding makes it; s the length difference, the baseline's
    minus the system's, over the system's standard deviation, ddof 1, without the notebook's 1e-4
    random jitter). The difficulty of an instruction is its term."""
    labels = np.asarray(system).reshape(-1)
    ix = np.asarray(index, np.int64).reshape(-1)
    y = np.asarray(preference, np.float64).reshape(-1)
    lm, lb = (np.asarray(a, np.float64).reshape(-1) for a in (length_model, length_baseline))
    systems, codes = np.unique(labels, return_inverse=True)
    instructions, where = np.unique(ix, return_inverse=True)
    n = y.size
    s = np.zeros(n)
    for k in range(systems.size):
        mine = codes == k
        delta = lb[mine] - lm[mine]
        sd = delta.std(ddof=1) if delta.size > 1 else 0.0
        s[mine] = delta / sd if sd > 0 else 0.0
    own = np.zeros((n, systems.size))
    own[np.arange(n), codes] = 1.0
    dummies = np.zeros((n, instructions.size))
    dummies[np.arange(n), where] = 1.0
    X = np.column_stack([own * np.tanh(s)[:, None], own, dummies[:, 1:], np.ones(n)])
    w = np.ones(n)
    C, _ = choose_C(X, y, w)
    beta = l1_logistic(X, y, w, C)
    terms = np.r_[0.0, beta[2 * systems.size:2 * systems.size + instructions.size - 1]]
    return dict(zip(instructions.tolist(), terms.tolist())), C
