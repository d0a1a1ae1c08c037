"""Systems ranked from pairwise votes: Bradley–Terry on counted outcomes, at arena scale.

Votes. A vote compares systems ``a`` and ``b``: ``a`` wins, ``b`` wins, or a tie. As Chatbot
Arena's leaderboard code does (FastChat ``rating_systems.py``: ``preprocess_for_bt``), the votes
are collapsed to their *distinct* rows ``(a, b, outcome)`` with a count ``w_r`` (1.6 M battles are
about 22 k rows), and everything below is a sum over those rows.

Model (ties as half a win each way, the default). With strengths ``theta`` on the logit scale,
``P(a beats b) = sigma(theta_a - theta_b)`` and a row's outcome ``y_r`` is 1 (a wins), 0 (b wins)
or 1/2 (a tie), so the log-likelihood is::

    l(theta) = sum_r w_r [y_r log sigma(d_r) + (1 - y_r) log sigma(-d_r)],  d_r = theta_a - theta_b

maximised by Newton's method on the counts (no prior unless ``ridge`` > 0, which adds
``-ridge/2 * ||theta||^2``). Strengths are identified up to a constant: they are centred
(``sum theta = 0``) and the scale is moved afterwards (:func:`elo`). The maximum-likelihood
estimate exists only when the graph "i beat j at least once" (a tie counts both ways) is strongly
connected (Ford 1957; Hunter 2004): otherwise a system's strength is infinite and the fit is
*undefined* (NaN), never a number read off a stopped optimiser.

Scale: the Elo-style numbers the arena prints are ``1000 + 400 / ln(10) * theta`` (FastChat's
``scale_and_offset``: ratings on base 10 with ``alpha = ln 10``), optionally shifted so that a
named anchor system has a named rating.

Intervals. :func:`bootstrap` draws the counts of the distinct rows from a multinomial with the
observed shares (FastChat's ``compute_bootstrap_bt``), seeded, and fits every round at once
(batched Newton); a round whose resampled votes admit no estimate is undefined and left out
(``n_valid`` says how many remain). :func:`sandwich` gives the closed-form robust ("sandwich")
covariance ``H^-1 J H^-1`` of the centred strengths, ``H`` the observed information and ``J`` the
sum over votes of the outer products of each vote's score (arena-rank's default since 2025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

A_WINS, TIE, B_WINS = 1.0, 0.5, 0.0
ELO_PER_LOGIT = 400 / math.log(10)
ELO_CENTRE = 1000.0


def expit(x) -> np.ndarray:
    """``scipy.special.expit`` bit for bit, ``1 / (1 + exp(-x))`` with the C library's ``exp``,
    without importing ``scipy.special`` (0.3 s of CPU at every start of ``metaeval leaderboard``).
    numpy's real ``exp`` is its own AVX-512 code, which differs from the C library's in the last
    bit (2% of normal draws); its complex ``exp`` calls the C library's ``cexp``, which for a zero
    imaginary part returns ``exp`` of the real part, except above 709 (glibc scales those:
    ``exp(709) * exp(x - 709)``), which go one by one through :func:`math.exp`.
    ``tests/test_leaderboard_cpu.py`` checks the equality against scipy."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1)
    out = expit_into(flat, np.empty(flat.shape, dtype=complex), np.empty(flat.shape))
    return out.reshape(x.shape) if x.ndim else out[0]


def expit_into(x: np.ndarray, z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`expit` of ``x`` into ``out`` (both float, one shape), ``z`` a complex array of
    that shape to work in: the same operations on the same numbers, without allocating (the
    Newton steps of :func:`fit` call it on every round at every step)."""
    np.negative(x, out=z.real)
    z.imag[...] = 0.0
    with np.errstate(all="ignore"):
        np.exp(z, out=z)
    np.copyto(out, z.real)
    big = x < -_CEXP_SCALES
    if big.any():
        out[big] = [_exp(v) for v in -x[big]]
    np.add(out, 1.0, out=out)
    np.divide(1.0, out, out=out)
    return out


#: Above this argument glibc's ``cexp`` computes ``exp`` as a product of two (709 and more).
_CEXP_SCALES = 700.0


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def one_blas_thread():
    """A context in which BLAS and LAPACK (OpenBLAS, MKL) run on one thread: the leaderboard's
    linear algebra is many small systems (a stacked S x S Newton solve per round, S the systems),
    on which a second thread costs far more CPU than it saves (150 systems: 70 times the CPU of
    one thread for the same 500 solves, issue 47); the same numbers (one thread or two, LAPACK's
    solves agree to the last bits: tests/test_leaderboard_cpu.py checks 1e-9 Elo). threadpoolctl
    sets the libraries' own thread counts while in the context and restores them after."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


@dataclass(frozen=True)
class Counted:
    """The distinct vote rows: systems ``a``, ``b`` (indices), outcome ``y`` (1, 1/2, 0) and the
    number of votes ``w`` of each; ``n_systems``."""

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    w: np.ndarray
    n_systems: int

    @property
    def n_votes(self) -> int:
        return int(self.w.sum())


def count(a, b, outcome, n_systems: int) -> Counted:
    """Collapse votes (``outcome`` 1: a wins, 0: b wins, 0.5: tie) to their distinct rows."""
    a, b, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64), np.asarray(outcome, dtype=float)
    if not (a.shape == b.shape == y.shape and a.ndim == 1 and len(a)):
        raise ValueError("a, b and outcome need one value per vote, and at least one vote")
    if a.min() < 0 or b.min() < 0 or max(a.max(), b.max()) >= n_systems or np.any(a == b):
        raise ValueError(f"systems are indices 0..{n_systems - 1}, and a vote compares two different systems")
    if not np.all(np.isin(y, (A_WINS, TIE, B_WINS))):
        raise ValueError("an outcome is 1 (a wins), 0 (b wins) or 0.5 (a tie)")
    rows, w = np.unique(np.column_stack([a, b, (2 * y).astype(np.int64)]), axis=0, return_counts=True)
    return Counted(a=rows[:, 0], b=rows[:, 1], y=rows[:, 2] / 2.0, w=w.astype(float), n_systems=n_systems)


def estimable(c: Counted, w: np.ndarray | None = None) -> bool:
    """Whether the maximum-likelihood strengths exist: "beat at least once" strongly connected
    (every system reaches system 0 and is reached from it; numpy, without scipy.sparse's import)."""
    w = c.w if w is None else w
    keep = w > 0
    src = np.concatenate([c.a[keep & (c.y > 0)], c.b[keep & (c.y < 1)]])    # winner -> loser (a tie: both)
    dst = np.concatenate([c.b[keep & (c.y > 0)], c.a[keep & (c.y < 1)]])
    beat = np.zeros((c.n_systems, c.n_systems), dtype=bool)
    beat[src, dst] = True
    return _reaches_all(beat) and _reaches_all(beat.T)


def _estimable_rounds(c: Counted, W: np.ndarray) -> np.ndarray:
    """:func:`estimable` of each round (a row of ``W``: rounds x rows), once per distinct set of
    the rows a round draws (which alone decides it: most rounds of many votes draw every row)."""
    seen: dict[bytes, bool] = {}
    out = np.empty(len(W), dtype=bool)
    for r, w in enumerate(W):
        drawn = (w > 0).tobytes()
        if drawn not in seen:
            seen[drawn] = estimable(c, w)
        out[r] = seen[drawn]
    return out


def _reaches_all(adjacency: np.ndarray) -> bool:
    """Whether every node is reached from node 0 along the edges (breadth first, by rows)."""
    seen = np.zeros(len(adjacency), dtype=bool)
    seen[0] = True
    frontier = seen.copy()
    while frontier.any():
        new = adjacency[frontier].any(axis=0) & ~seen
        seen |= new
        frontier = new
    return bool(seen.all())


def components(c: Counted, w: np.ndarray | None = None) -> np.ndarray:
    """Per system, its connected group of the comparison graph (systems joined when a vote compares
    them, whatever its outcome): 0, 1, ..., numbered by their first system. Votes of different
    groups never meet: the likelihood does not depend on the groups' relative strengths, so only
    ratings within a group are identified (and a prior would decide the rest)."""
    w = c.w if w is None else w
    keep = w > 0
    met = np.zeros((c.n_systems, c.n_systems), dtype=bool)
    met[c.a[keep], c.b[keep]] = met[c.b[keep], c.a[keep]] = True
    group = np.full(c.n_systems, -1)
    for start in range(c.n_systems):
        if group[start] >= 0:
            continue
        seen = np.zeros(c.n_systems, dtype=bool)
        seen[start] = True
        frontier = seen.copy()
        while frontier.any():
            new = met[frontier].any(axis=0) & ~seen
            seen |= new
            frontier = new
        group[seen] = group.max() + 1
    return group


def restricted(c: Counted, systems: np.ndarray) -> tuple[Counted, np.ndarray]:
    """The votes among ``systems`` (indices, sorted) as their own :class:`Counted` (systems
    renumbered in that order), and the indices of their rows in ``c``."""
    systems = np.asarray(systems)
    new = np.full(c.n_systems, -1)
    new[systems] = np.arange(len(systems))
    rows = np.flatnonzero((new[c.a] >= 0) & (new[c.b] >= 0))
    return Counted(a=new[c.a[rows]], b=new[c.b[rows]], y=c.y[rows], w=c.w[rows], n_systems=len(systems)), rows


def fit(c: Counted, weights: np.ndarray | None = None, *, ridge: float = 0.0, tol: float = 1e-10,
        max_iter: int = 100, start: np.ndarray | None = None) -> np.ndarray:
    """Centred strengths (logits) maximising the likelihood, one row per column of ``weights``
    (``weights``: rows x rounds counts, default the observed counts: one fit). A round whose
    votes admit no estimate (and ``ridge`` = 0), or whose Newton steps did not fall below ``tol``
    within ``max_iter``, is NaN. Newton's steps start at 0, or at ``start`` (centred strengths:
    a bootstrap round starts at the observed fit, two steps fewer)."""
    W = (c.w[:, None] if weights is None else np.asarray(weights, dtype=float)).T      # rounds x rows
    if W.shape[1] != len(c.w):
        raise ValueError("weights need one row per distinct vote row")
    if ridge < 0 or not math.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge}")
    S, R = c.n_systems, len(W)
    ok = np.ones(R, dtype=bool) if ridge > 0 else _estimable_rounds(c, W)
    W = np.ascontiguousarray(W)
    theta = np.zeros((R, S)) if start is None else np.tile(np.asarray(start, dtype=float), (R, 1))
    centre = np.ones((S, S)) / S
    last = np.full(R, np.inf)                       # each round's last Newton step
    terms = _NewtonTerms(c, W, ridge)
    for _ in range(max_iter if ok.any() else 0):
        grad, info = terms.at(theta)
        if ok.all():                                # (the same numbers as the masked copies below)
            np.add(info, centre, out=info)
            step = np.linalg.solve(info, grad[..., None])[..., 0]
            theta += step
        else:
            step = np.linalg.solve(info[ok] + centre, grad[ok][..., None])[..., 0]
            theta[ok] += step
        theta -= theta.mean(axis=1, keepdims=True)
        last[ok] = np.max(np.abs(step), axis=1)
        if np.max(last[ok]) < tol:
            break
    # a round that did not converge in max_iter steps (or overflowed) is undefined, never a number
    ok &= (last < tol) & np.isfinite(theta).all(axis=1)
    theta[~ok] = np.nan
    return theta[0] if weights is None else theta


class _NewtonTerms:
    """The gradient and the information of every round at its strengths (:meth:`at`), in arrays
    made once for all the steps: a million votes among 150 systems are 33 500 distinct rows, 100
    rounds of them 27 MB an array, which allocated anew at every operation of every step cost as
    much CPU as the arithmetic (the pages' faults). ``P(a beats b)`` is computed once per pair of
    systems and round (a pair's three outcome rows share it). Every sum is the one of the
    straightforward form (``np.add.at``'s, added in the same order, by ``bincount``: a round's
    gradient bins get each row's residual at a, then its negative at b; its information bins
    each row's curvature), round by round (a round's bins are its own: the same additions in
    the same order as one ``bincount`` over every round), so the strengths are the same to the
    last bit."""

    def __init__(self, c: Counted, W: np.ndarray, ridge: float):
        S, (R, n) = c.n_systems, W.shape
        self.c, self.W, self.ridge, self.S, self.R = c, W, ridge, S, R
        pairs, self.row_pair = np.unique(c.a * S + c.b, return_inverse=True)
        self.pa, self.pb = pairs // S, pairs % S
        self.ends = np.concatenate([c.a, c.b])          # a round's gradient bins
        self.pair = c.a * S + c.b                       # a round's information bins
        self.signed = np.empty(2 * n)
        P = len(pairs)
        self.d, self.pp, self.z = np.empty(P), np.empty(P), np.empty(P, dtype=complex)
        self.p, self.residual, self.curvature = np.empty(n), np.empty(n), np.empty(n)
        self.grad, self.info = np.empty((R, S)), np.empty((R, S, S))

    def at(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(gradient rounds x S, information rounds x S x S, its diagonal plus ``ridge``)."""
        c, S, n = self.c, self.S, len(self.c.w)
        p, residual, curvature, grad, info = self.p, self.residual, self.curvature, self.grad, self.info
        if self.ridge:
            grad = -self.ridge * theta
        for r in range(self.R):
            W, t = self.W[r], theta[r]
            np.subtract(t[self.pa], t[self.pb], out=self.d)
            np.take(expit_into(self.d, self.z, self.pp), self.row_pair, out=p)
            np.multiply(W, np.subtract(c.y, p, out=residual), out=residual)                 # W * (y - p)
            np.multiply(np.multiply(W, p, out=curvature), np.subtract(1, p, out=p), out=curvature)  # W * p * (1 - p)
            np.negative(curvature, out=curvature)
            if self.ridge:
                np.add.at(grad[r], c.a, residual)
                np.add.at(grad[r], c.b, -residual)
            else:
                self.signed[:n] = residual
                np.negative(residual, out=self.signed[n:])
                grad[r] = np.bincount(self.ends, self.signed, S)
            info[r] = np.bincount(self.pair, curvature, S * S).reshape(S, S)
        info += info.transpose(0, 2, 1)
        info[:, np.arange(S), np.arange(S)] = -info.sum(axis=2) + self.ridge
        return grad, info


def elo(theta, anchor: int | None = None, anchor_rating: float = ELO_CENTRE) -> np.ndarray:
    """The arena's scale: ``1000 + 400/ln(10) * theta``, or shifted so that system ``anchor`` is at
    ``anchor_rating``."""
    r = ELO_CENTRE + ELO_PER_LOGIT * np.asarray(theta, dtype=float)
    if anchor is not None:
        r = r - r[..., [anchor]] + anchor_rating
    return r


def bootstrap_counts(c: Counted, k: int, seed: int) -> np.ndarray:
    """``k`` multinomial resamples of the distinct rows' counts (rows x k), the same for every
    judge given the same rows and seed."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(c.n_votes, c.w / c.w.sum(), size=k).T.astype(float)


@dataclass(frozen=True)
class Bootstrap:
    """Per system: the ``lower``/``upper`` percentile bounds (of what was resampled: strengths or
    Elo ratings), the share of valid rounds in which it is first (a round in which ``m`` systems
    share the highest rating exactly credits each of them ``1/m``: the shares sum to 1), and
    ``n_valid`` rounds."""

    samples: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    first: np.ndarray
    n_valid: int


def bootstrap(c: Counted, *, k: int = 1000, seed: int = 0, alpha: float = 0.05, ridge: float = 0.0,
              transform=None) -> Bootstrap:
    """Percentile intervals over ``k`` multinomial rounds (see the module docstring)."""
    samples = fit(c, bootstrap_counts(c, k, seed), ridge=ridge)
    return summarise(samples if transform is None else transform(samples), alpha)


def summarise(samples: np.ndarray, alpha: float) -> Bootstrap:
    """The percentile bounds and first-place shares of the rounds' ``samples`` (rounds x systems;
    a round with a NaN is undefined and left out; ``m`` systems tied exactly at a round's top
    have ``1/m`` of it each, never the first of them by name)."""
    valid = samples[~np.isnan(samples).any(axis=1)]
    if len(valid) == 0:
        nan = np.full(samples.shape[1], np.nan)
        return Bootstrap(samples, nan, nan, nan, 0)
    lower, upper = np.percentile(valid, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    top = valid == valid.max(axis=1, keepdims=True)
    first = (top / top.sum(axis=1, keepdims=True)).sum(axis=0) / len(valid)
    return Bootstrap(samples, lower, upper, first, len(valid))


def sandwich(c: Counted, theta: np.ndarray) -> np.ndarray:
    """The robust covariance ``H^+ J H^+`` of the centred strengths at ``theta`` (``H^+`` the
    pseudo-inverse of the information, whose null space is the constant direction)."""
    p = expit(theta[c.a] - theta[c.b])
    D = np.zeros((len(c.a), c.n_systems))
    D[np.arange(len(c.a)), c.a], D[np.arange(len(c.a)), c.b] = 1.0, -1.0
    H = (D * (c.w * p * (1 - p))[:, None]).T @ D
    score = (c.y - p)[:, None] * D                                  # one vote's score, per distinct row
    J = (score * c.w[:, None]).T @ score
    Hp = np.linalg.pinv(H)
    return Hp @ J @ Hp
