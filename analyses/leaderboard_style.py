"""Bradley–Terry with style covariates: Chatbot Arena's "style control" (Li, Angelopoulos & Chiang,
"Does style matter? Disentangling style and substance in Chatbot Arena", LMSYS blog, Aug 2024;
FastChat ``rating_systems.py``: ``preprocess_for_style``, ``fit_contextual_bt``).

Features. Each vote compares the outputs of systems ``a`` and ``b`` for one input; a covariate
gives each output a number ``f`` (its length, its count of markdown headers, list items or bold
spans, or any numeric attribute). The vote's raw feature is, as the arena's::

    z = (f_a - f_b) / (f_a + f_b + 1)     length, headers, lists, bold (counts: the arena's ratio)
    z = f_a - f_b                          any other attribute (a plain difference)

and every feature is scaled by its root mean square over the votes (each vote weighs once), once,
on the observed votes: the bootstrap rounds keep the observed scale, as FastChat's keep its
standardisation. FastChat standardises ``(z - mean) / sd`` over its battles as shown (left,
right); the arena's left/right order is random, so its mean is near 0. A stored vote's order here
is the systems' names' (a vote's presentation order is kept apart), not random: centring would add
a term for "the system whose name sorts first". The root mean square is FastChat's standardisation
of the votes taken both ways round (each vote as (a, b) and as (b, a): mean exactly 0), and keeps
the model the same whichever way round a vote is written.

Markdown counts (:func:`markdown_counts`, FastChat ``add_markdown_info.py``'s rules), after the
fenced code blocks are removed: headers are lines starting with 1 to 6 ``#`` and a space; list
items lines starting (after spaces) with ``N.`` or ``-``, ``*``, ``+`` and a space; bold spans
``**...**`` or ``__...__`` within one line.

Model. With strengths ``theta`` (logits) and coefficients ``gamma``, one per covariate::

    P(a beats b) = sigma(theta_a - theta_b + z' gamma)

a tie half a win each way; maximum likelihood on the counted distinct (a, b, outcome, z) rows by a
damped Newton method (a step is halved until the log-likelihood does not decrease), strengths
centred (sum theta = 0; the coefficients are not affected by the centring). ``ridge`` > 0 adds
``-ridge/2 * (||theta||^2 + ||gamma||^2)``: FastChat's ``fit_contextual_bt`` penalises both.
The controlled strengths are read as the uncontrolled ones (:func:`metaeval.analyses.leaderboard.elo`);
a coefficient is in logits per unit of its scaled feature (the blog's table: length 0.249).
The estimate exists only if the strengths do without covariates
(:func:`metaeval.analyses.leaderboard.estimable`) and no combination of the features separates
the outcomes; where it does not, or Newton does not converge, the fit is NaN.

:func:`sandwich` gives the robust covariance ``H^+ J H^+`` of (theta, gamma).
"""

from __future__ import annotations

import math
import re

import numpy as np
from scipy.special import expit, log_expit

from metaeval.analyses import leaderboard as lb

#: The built-in covariates, in the arena's order; each the ratio feature of a count.
MARKDOWN = ("headers", "lists", "bold")
BUILT_IN = ("length", *MARKDOWN)

#: Rounds x distinct rows fitted at once (each array of the Newton step this many doubles).
BLOCK = 1 << 21

_CODE = re.compile(r"```[^`]*```")
_HEADER = re.compile(r"^#{1,6}\s", re.M)
_ORDERED = re.compile(r"^\s*\d+\.\s", re.M)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.M)
_BOLD = (re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__"))


def markdown_counts(text: str) -> dict[str, int]:
    """The text's markdown ``headers``, ``lists`` (list items) and ``bold`` spans, code blocks removed."""
    plain = _CODE.sub("", text)
    return {"headers": len(_HEADER.findall(plain)),
            "lists": len(_ORDERED.findall(plain)) + len(_UNORDERED.findall(plain)),
            "bold": sum(len(p.findall(plain)) for p in _BOLD)}


def raw_feature(f_a, f_b, ratio: bool) -> np.ndarray:
    """A vote's raw feature: ``(f_a - f_b) / (f_a + f_b + 1)`` (``ratio``) or ``f_a - f_b``."""
    f_a, f_b = np.asarray(f_a, dtype=float), np.asarray(f_b, dtype=float)
    return (f_a - f_b) / (f_a + f_b + 1) if ratio else f_a - f_b


def standardise(z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scaled features, scales) of ``z`` (rows x covariates): each column divided by its root mean
    square over the votes (row weights ``w``), the standard deviation of the votes taken both ways
    round; a scale of 0 (the outputs never differ) gives NaN features (nothing to estimate)."""
    z, w = np.asarray(z, dtype=float), np.asarray(w, dtype=float)
    scale = np.sqrt((w @ z ** 2) / w.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return z / np.where(scale > 0, scale, np.nan), scale


def _loglik(c: lb.Counted, Z, W, theta, gamma, ridge):
    d = theta[:, c.a] - theta[:, c.b] + gamma @ Z.T
    out = np.sum(W * (log_expit(-d) + c.y * d), axis=1)           # y log sigma(d) + (1 - y) log sigma(-d)
    out -= ridge / 2 * (np.sum(theta ** 2, axis=1) + np.sum(gamma ** 2, axis=1))
    out[~np.isfinite(out)] = -np.inf
    return out


def _newton_system(c: lb.Counted, Z, W, theta, gamma, ridge):
    """(gradient, information + centring) of the stacked (theta, gamma) per round."""
    R, S = theta.shape
    C = Z.shape[1]
    p = expit(theta[:, c.a] - theta[:, c.b] + gamma @ Z.T)
    residual, curvature = W * (c.y - p), W * p * (1 - p)
    rounds = np.arange(R)[:, None]
    ia, ib = (rounds * S + c.a).ravel(), (rounds * S + c.b).ravel()
    grad = np.empty((R, S + C))
    grad[:, :S] = (np.bincount(ia, residual.ravel(), R * S) - np.bincount(ib, residual.ravel(), R * S)).reshape(R, S)
    grad[:, S:] = residual @ Z - ridge * gamma
    grad[:, :S] -= ridge * theta
    info = np.zeros((R, S + C, S + C))
    tt = np.bincount((rounds * S * S + c.a * S + c.b).ravel(), -curvature.ravel(), R * S * S).reshape(R, S, S)
    tt += tt.transpose(0, 2, 1)
    tt[:, np.arange(S), np.arange(S)] = -tt.sum(axis=2)
    info[:, :S, :S] = tt + 1.0 / S                    # the centring: strengths sum to 0
    for j in range(C):
        cz = (curvature * Z[:, j]).ravel()
        info[:, :S, S + j] = (np.bincount(ia, cz, R * S) - np.bincount(ib, cz, R * S)).reshape(R, S)
        info[:, S + j, :S] = info[:, :S, S + j]
        info[:, S + j, S:] = (curvature * Z[:, j]) @ Z
    info[:, np.arange(S + C), np.arange(S + C)] += ridge
    return grad, info


def fit(c: lb.Counted, Z, weights: np.ndarray | None = None, *, ridge: float = 0.0, tol: float = 1e-10,
        max_iter: int = 100, start: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(centred strengths, coefficients) maximising the likelihood, one row per column of
    ``weights`` (rows x rounds; default the observed counts: one fit). ``Z``: the scaled features
    (rows x covariates) of the distinct rows. ``start``: the (strengths, coefficients) Newton
    starts from (default zeros; the observed fit for resampled rounds: fewer steps, the same
    maximum). NaN where undefined (see the module)."""
    Z = np.asarray(Z, dtype=float).reshape(len(c.w), -1)
    W = (c.w[:, None] if weights is None else np.asarray(weights, dtype=float)).T
    if W.shape[1] != len(c.w):
        raise ValueError("weights need one row per distinct vote row")
    if ridge < 0 or not math.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge}")
    R, S, C = len(W), c.n_systems, Z.shape[1]
    if R > 1 and R * len(c.w) > BLOCK:          # rounds in blocks: memory bounded, each round the same fit
        size = max(1, BLOCK // len(c.w))
        parts = [fit(c, Z, W[i:i + size].T, ridge=ridge, tol=tol, max_iter=max_iter, start=start)
                 for i in range(0, R, size)]
        return np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts])
    ok = np.isfinite(Z).all() & (np.ones(R, dtype=bool) if ridge > 0 else np.array([lb.estimable(c, w) for w in W]))
    theta, gamma = np.zeros((R, S)), np.zeros((R, C))
    if start is not None and np.isfinite(start[0]).all() and np.isfinite(start[1]).all():
        theta[:], gamma[:] = start[0] - np.mean(start[0]), start[1]
    last = np.full(R, np.inf)
    current = _loglik(c, Z, W, theta, gamma, ridge)
    for _ in range(max_iter if ok.any() else 0):
        idx = np.flatnonzero(ok & ~(last < tol))
        if not len(idx):
            break
        grad, info = _newton_system(c, Z, W[idx], theta[idx], gamma[idx], ridge)
        step = np.linalg.solve(info, grad[..., None])[..., 0]
        scale = np.ones(len(idx))
        for _half in range(60):
            th, ga = theta[idx] + scale[:, None] * step[:, :S], gamma[idx] + scale[:, None] * step[:, S:]
            th -= th.mean(axis=1, keepdims=True)
            new = _loglik(c, Z, W[idx], th, ga, ridge)
            worse = new < current[idx] - 1e-12 * np.abs(current[idx])
            if not worse.any():
                break
            scale[worse] /= 2
        theta[idx], gamma[idx], current[idx] = th, ga, new
        last[idx] = np.max(np.abs(scale[:, None] * step), axis=1)
    ok &= (last < tol) & np.isfinite(theta).all(axis=1) & np.isfinite(gamma).all(axis=1)
    theta[~ok], gamma[~ok] = np.nan, np.nan
    return (theta[0], gamma[0]) if weights is None else (theta, gamma)


def sandwich(c: lb.Counted, Z, theta: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """The robust covariance ``H^+ J H^+`` of the stacked (centred strengths, coefficients)."""
    Z = np.asarray(Z, dtype=float).reshape(len(c.w), -1)
    rows = np.arange(len(c.a))
    D = np.zeros((len(c.a), c.n_systems + Z.shape[1]))
    D[rows, c.a], D[rows, c.b], D[:, c.n_systems:] = 1.0, -1.0, Z
    p = expit(D @ np.concatenate([theta, gamma]))
    H = (D * (c.w * p * (1 - p))[:, None]).T @ D
    score = (c.y - p)[:, None] * D
    J = (score * c.w[:, None]).T @ score
    Hp = np.linalg.pinv(H)
    return Hp @ J @ Hp
