"""The length-controlled win rate of AlpacaEval 2.0 (Dubois et al., 2024, "Length-Controlled
AlpacaEval"; alpaca_eval ``metrics/glm_winrate.py``, GLM ``length_controlled_v1``).

A model m is compared with one baseline b on items i = 1..n; ``preference`` y_i in [0, 1] is
the judge's preference for m's output (1: m's, 0: the baseline's, 0.5: a tie; AlpacaEval's
1/2/1.5 codes map to 0/1/0.5 as ``2 - code``). The GLM is a logistic regression with soft
labels and no intercept of its own:

    logit P(m preferred on i) = theta + phi * tanh(delta_i / sd(delta)) + psi * g_i

with delta_i = len(m's output) - len(b's output) in characters, sd the sample standard deviation
(ddof 1, as pandas' ``std``) over the items, g_i the item's difficulty (AlpacaEval reads a
precomputed per-instruction difficulty; here an optional input, left out when not given) and
theta the model's term (AlpacaEval's ``not_gamed_baseline``). The fit maximises

    sum_i y_i log s(x_i beta) + (1 - y_i) log(1 - s(x_i beta)) - (ridge / 2) |beta|^2

(s the logistic function; ridge 0: the plain maximum-likelihood fit, AlpacaEval's C = 100 L1
penalty and its regularisation towards "gamed" baselines are not reproduced: they need its
released data). The length-controlled win rate is the win rate the model would have with no
length difference:

    LC = 100 * mean_i s(theta + psi * g_i),

and the raw win rate is 100 * mean_i y_i. Without a difficulty term and without length
differences, LC equals the raw win rate (the intercept-only fit has s(theta) = mean y). A fit
that does not converge (all items preferred one way: the estimate runs to infinity) is
undefined (NaN), never the optimiser's last step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: Newton steps before a fit is declared not converged.
MAX_STEPS = 100
#: Convergence: the largest gradient entry of the (per-item mean) log-likelihood.
TOLERANCE = 1e-10
#: A linear predictor beyond this (s(20) = 1 - 2e-9; the gradient tolerance is met only near 23)
#: means the likelihood has no finite maximum (the items are separated): the fit is undefined.
SEPARATED = 20.0


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
    halving. Not converged (beta NaN) when the likelihood has no finite maximum (separation: a
    linear predictor beyond :data:`SEPARATED`)."""
    X, y = np.asarray(X, np.float64), np.asarray(y, np.float64)
    n, p = X.shape
    beta = np.zeros(p)

    def objective(b):
        z = X @ b
        return (y * -np.logaddexp(0.0, -z) + (1 - y) * -np.logaddexp(0.0, z)).sum() - 0.5 * ridge * b @ b

    current = objective(beta)
    for _ in range(MAX_STEPS):
        mu = _logistic(X @ beta)
        grad = X.T @ (y - mu) - ridge * beta
        if np.abs(X @ beta).max() > SEPARATED:
            break   # the maximum is at infinity (separation): the optimiser only creeps towards it
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
