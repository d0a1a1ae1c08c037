"""Bradley–Terry with a tie parameter: the Rao–Kupper (1967) and Davidson (1970) models, fitted on
counted votes (:class:`metaeval.analyses.leaderboard.Counted`), batched over bootstrap rounds.

With strengths ``theta`` (logits) and ``d = theta_a - theta_b``:

Rao–Kupper (arena-hard-auto's tie model), ``eta = ln(theta_RK) > 0``::

    P(a wins) = sigma(d - eta),  P(b wins) = sigma(-d - eta),  P(tie) = 1 - P(a wins) - P(b wins)

(Rao & Kupper's ``pi_a / (pi_a + theta pi_b)`` with ``pi = e^theta``); the tie parameter reported is
``theta_RK = e^eta`` (> 1).

Davidson, ``nu > 0``::

    P(a wins) = e^{d/2} / Z,  P(b wins) = e^{-d/2} / Z,  P(tie) = nu / Z,  Z = e^{d/2} + e^{-d/2} + nu

(Davidson's ``pi_a / (pi_a + pi_b + nu sqrt(pi_a pi_b))``); the tie parameter reported is ``nu``.
In both, ``P(a wins | not a tie)`` grows with ``d``, and under Davidson it is exactly ``sigma(d)``:
the strengths are on the half-a-win model's logit scale.

Both log-likelihoods are concave in ``(theta, ln nu)`` / ``(theta, eta)``; they are maximised by a
damped Newton method (a step is halved until the likelihood does not decrease and ``eta`` stays
positive), strengths centred. The estimate exists when the votes admit one under the half-a-win
model (:func:`metaeval.analyses.leaderboard.estimable`) and there are both ties and decided votes;
otherwise (or without convergence) a round is undefined (NaN).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit

from metaeval.analyses import leaderboard as lb

TIE_MODELS = ("rao-kupper", "davidson")


def _initial_tau(model: str, tie_share: np.ndarray) -> np.ndarray:
    """The tie parameter fitting the tie share when every strength is equal."""
    t = np.clip(tie_share, 1e-6, 1 - 1e-6)
    return np.log((1 + t) / (1 - t)) if model == "rao-kupper" else np.log(2 * t / (1 - t))


def row_terms(model: str, d: np.ndarray, tau: np.ndarray, y: np.ndarray):
    """Per vote row: the log-likelihood ``l`` and its derivatives in ``d`` and the tie parameter
    ``tau`` (``eta`` for Rao–Kupper, ``ln nu`` for Davidson): (l, l_d, l_t, l_dd, l_dt, l_tt)."""
    tau = np.broadcast_to(tau, d.shape)
    win, loss, tie = y == lb.A_WINS, y == lb.B_WINS, y == lb.TIE
    if model == "davidson":
        m = np.maximum(np.maximum(d / 2, -d / 2), tau)
        ea, eb, et = np.exp(d / 2 - m), np.exp(-d / 2 - m), np.exp(tau - m)
        z = ea + eb + et
        pa, pb, pt = ea / z, eb / z, et / z
        logz = m + np.log(z)
        l = np.where(win, d / 2, np.where(loss, -d / 2, tau)) - logz
        xd = np.where(win, 0.5, np.where(loss, -0.5, 0.0))
        mean_d = (pa - pb) / 2
        l_d, l_t = xd - mean_d, tie - pt
        l_dd = -((pa + pb) / 4 - mean_d ** 2)
        l_dt = mean_d * pt
        l_tt = -pt * (1 - pt)
        return l, l_d, l_t, l_dd, l_dt, l_tt
    if model != "rao-kupper":
        raise ValueError(f"a tie model is one of {TIE_MODELS}; got {model!r}")
    u, v = d - tau, -d - tau
    p1, p2 = expit(u), expit(v)
    q1, q2 = p1 * (1 - p1), p2 * (1 - p2)
    r1, r2 = q1 * (1 - 2 * p1), q2 * (1 - 2 * p2)
    t = np.clip(1 - p1 - p2, 1e-300, None)
    td, tt = q2 - q1, q1 + q2
    tdd, tdt, ttt = -r1 - r2, r1 - r2, -r1 - r2
    l = np.where(win, log_expit(u), np.where(loss, log_expit(v), np.log(t)))
    l_d = np.where(win, 1 - p1, np.where(loss, -(1 - p2), td / t))
    l_t = np.where(win, -(1 - p1), np.where(loss, -(1 - p2), tt / t))
    l_dd = np.where(win, -q1, np.where(loss, -q2, tdd / t - (td / t) ** 2))
    l_dt = np.where(win, q1, np.where(loss, -q2, tdt / t - td * tt / t ** 2))
    l_tt = np.where(win, -q1, np.where(loss, -q2, ttt / t - (tt / t) ** 2))
    return l, l_d, l_t, l_dd, l_dt, l_tt


def _loglik(model, c, W, theta, tau):
    d = theta[:, c.a] - theta[:, c.b]
    bad = (tau <= 0) if model == "rao-kupper" else np.zeros(len(tau), bool)
    out = np.sum(W * row_terms(model, d, tau[:, None], c.y)[0], axis=1)
    out[bad | ~np.isfinite(out)] = -np.inf
    return out


def _newton_system(model, c, W, theta, tau):
    """(gradient, information + centring) of the stacked parameters (theta, tau) per round."""
    R, S = theta.shape
    d = theta[:, c.a] - theta[:, c.b]
    _, l_d, l_t, l_dd, l_dt, l_tt = row_terms(model, d, tau[:, None], c.y)
    n = S + 1
    rounds = np.arange(R)[:, None]
    base = rounds * n
    grad = np.zeros((R, n))
    grad[:, :S] = (np.bincount((base + c.a).ravel(), (W * l_d).ravel(), R * n)
                   - np.bincount((base + c.b).ravel(), (W * l_d).ravel(), R * n)).reshape(R, n)[:, :S]
    grad[:, S] = np.sum(W * l_t, axis=1)
    base2 = rounds * n * n
    hdd, hdt = W * l_dd, W * l_dt
    flat = np.concatenate([(base2 + c.a * n + c.a).ravel(), (base2 + c.b * n + c.b).ravel(),
                           (base2 + c.a * n + c.b).ravel(), (base2 + c.b * n + c.a).ravel(),
                           (base2 + c.a * n + S).ravel(), (base2 + c.b * n + S).ravel(),
                           (base2 + S * n + c.a).ravel(), (base2 + S * n + c.b).ravel()])
    vals = np.concatenate([hdd.ravel(), hdd.ravel(), -hdd.ravel(), -hdd.ravel(),
                           hdt.ravel(), -hdt.ravel(), hdt.ravel(), -hdt.ravel()])
    hess = np.bincount(flat, vals, R * n * n).reshape(R, n, n)
    hess[:, S, S] = np.sum(W * l_tt, axis=1)
    info = -hess
    info[:, :S, :S] += 1.0 / S                        # the centring: strengths sum to 0
    return grad, info


def fit(c: lb.Counted, model: str, weights: np.ndarray | None = None, *, tol: float = 1e-10,
        max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(centred strengths, tie parameter ``tau``) maximising the ``model`` likelihood, one row per
    column of ``weights`` (rows x rounds; default the observed counts: one fit). ``tau`` is
    ``eta = ln theta_RK`` (Rao–Kupper) or ``ln nu`` (Davidson); NaN where undefined."""
    if model not in TIE_MODELS:
        raise ValueError(f"a tie model is one of {TIE_MODELS}; got {model!r}")
    W = (c.w[:, None] if weights is None else np.asarray(weights, dtype=float)).T
    if W.shape[1] != len(c.w):
        raise ValueError("weights need one row per distinct vote row")
    R, S = len(W), c.n_systems
    ties = np.sum(W * (c.y == lb.TIE), axis=1)
    total = W.sum(axis=1)
    ok = np.array([lb.estimable(c, w) for w in W]) & (ties > 0) & (ties < total)
    theta = np.zeros((R, S))
    tau = _initial_tau(model, ties / np.maximum(total, 1))
    last = np.full(R, np.inf)
    current = _loglik(model, c, W, theta, tau)
    for _ in range(max_iter if ok.any() else 0):
        idx = np.flatnonzero(ok & ~(last < tol))
        if not len(idx):
            break
        grad, info = _newton_system(model, c, W[idx], theta[idx], tau[idx])
        step = np.linalg.solve(info, grad[..., None])[..., 0]
        scale = np.ones(len(idx))
        for _half in range(60):
            th, ta = theta[idx] + scale[:, None] * step[:, :S], tau[idx] + scale * step[:, S]
            th -= th.mean(axis=1, keepdims=True)
            new = _loglik(model, c, W[idx], th, ta)
            worse = new < current[idx] - 1e-12 * np.abs(current[idx])
            if not worse.any():
                break
            scale[worse] /= 2
        theta[idx], tau[idx], current[idx] = th, ta, new
        last[idx] = np.max(np.abs(scale[:, None] * step), axis=1)
    ok &= (last < tol) & np.isfinite(theta).all(axis=1) & np.isfinite(tau)
    theta[~ok], tau[~ok] = np.nan, np.nan
    return (theta[0], tau[0]) if weights is None else (theta, tau)


def tie_parameter(model: str, tau):
    """The model's own tie parameter: Rao–Kupper's ``theta = e^eta``, Davidson's ``nu = e^tau``."""
    return np.exp(tau)


def sandwich(c: lb.Counted, model: str, theta: np.ndarray, tau: float) -> np.ndarray:
    """The robust covariance of the centred strengths (the theta block of ``H^+ J H^+`` over the
    stacked parameters (theta, tau))."""
    S = c.n_systems
    d = theta[c.a] - theta[c.b]
    _, l_d, l_t, *_ = row_terms(model, d, np.asarray(tau), c.y)
    grad, info = _newton_system(model, c, c.w[None, :], theta[None, :], np.array([tau]))
    H = info[0]
    H[:S, :S] -= 1.0 / S
    rows = np.arange(len(c.a))
    score = np.zeros((len(c.a), S + 1))
    score[rows, c.a], score[rows, c.b], score[:, S] = l_d, -l_d, l_t
    J = (score * c.w[:, None]).T @ score
    Hp = np.linalg.pinv(H)
    return (Hp @ J @ Hp)[:S, :S]
