"""The regression over the model-free features (Louis & Nenkova 2013, §4.2.4).

"A linear regression metric combining all of these features ... For a particular input and
system-summary combination, the training set consisted only of examples which included neither
the same input nor the same system." So each cell ``(s, i)`` with its features ``x`` is scored by

    y_hat(s, i) = b_0 + sum_j b_j x_j,   b = argmin_b  sum_{(s', i'): s' != s, i' != i} (y(s', i') - b_0 - b . x(s', i'))^2

ordinary least squares on the training cells: those with every feature
finite and a human score ``y``, sharing neither the system nor the input of the scored cell
(leave-input-and-system-out). A cell without a human score is still scored (its features suffice);
it is never a training row. A fold whose training design has fewer rows than terms, or is rank
deficient (the coefficients not determined), scores its cell NaN: never the minimum-norm guess.

:func:`fit` is the same least squares on every cell: the model the paper carried to TAC 2009
("trained on all of the 2008 data"), whose coefficients the score command records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the features combined, in the paper's order of Table 2 (names of modelfree.FEATURES and JS)
FEATURE_BASES = ("js", "js-smoothed", "topic-coverage.input", "kl.summary-input", "cosine.input",
                 "topic-fraction.input", "cosine-topic.input", "kl.input-summary", "logprob-multinomial.input",
                 "logprob-unigram.input")
INTERCEPT = "(intercept)"


def regression_name(human: str, stem: bool, stop: bool, cutoff: float, predictors=(), trained_on: str | None = None) -> str:
    """``regression.input[stem,stop,cutoff=10,human=H]``: its settings and the human it predicts;
    with ``predictors`` other than the ten features (:data:`FEATURE_BASES`), ``predictors=a+b``;
    with coefficients fitted on another dataset, ``trained-on=D``."""
    flags = [f for f, on in (("stem", stem), ("stop", stop)) if on]
    extra = [f"predictors={'+'.join(predictors)}"] if predictors and tuple(predictors) != FEATURE_BASES else []
    extra += [f"trained-on={trained_on}"] if trained_on is not None else []
    return f"regression.input[{','.join([*flags, f'cutoff={cutoff:g}', f'human={human}', *extra])}]"


def apply(coefficients, X: np.ndarray) -> np.ndarray:
    """b_0 + sum_j b_j x_j of each row of ``X`` (NaN where a feature is not finite): the fit of
    another dataset applied (Louis & Nenkova 2013, §4.3.3: the TAC 2008 model scored on TAC 2009)."""
    b = np.asarray(coefficients, dtype=float)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] + 1 != b.size or not np.isfinite(b).all():
        raise ValueError(f"need {X.shape[-1] + 1} finite coefficients (intercept first); got {b.size}")
    ok = np.isfinite(X).all(axis=1)
    return np.where(ok, b[0] + np.where(ok[:, None], X, 0.0) @ b[1:], np.nan)


@dataclass(frozen=True)
class Fit:
    """A least-squares fit: ``coefficients`` (intercept first; NaN when undetermined) on ``n`` rows."""

    coefficients: np.ndarray
    n: int

    @property
    def defined(self) -> bool:
        return bool(np.isfinite(self.coefficients).all())


def fit(X: np.ndarray, y: np.ndarray) -> Fit:
    """OLS of ``y`` on ``X`` with an intercept, over the rows where ``y`` and every feature are
    finite; NaN coefficients when those rows do not determine them (too few, or rank deficient)."""
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(y) & np.isfinite(X).all(axis=1)
    design = np.column_stack([np.ones(int(ok.sum())), X[ok]])
    p = design.shape[1]
    if design.shape[0] < p:
        return Fit(np.full(p, np.nan), int(ok.sum()))
    coefficients, _, rank, _ = np.linalg.lstsq(design, y[ok], rcond=None)
    if rank < p:
        return Fit(np.full(p, np.nan), int(ok.sum()))
    return Fit(coefficients, int(ok.sum()))


def training_rows(systems: np.ndarray, inputs: np.ndarray, row: int) -> np.ndarray:
    """The rows that may train the model scoring ``row``: neither its system nor its input."""
    systems, inputs = np.asarray(systems), np.asarray(inputs)
    return (systems != systems[row]) & (inputs != inputs[row])


@dataclass(frozen=True)
class Scored:
    """Per cell: the prediction (NaN: features not all finite, or its fold undetermined), the
    fold's coefficients (cells x terms) and its number of training rows."""

    predictions: np.ndarray
    coefficients: np.ndarray
    n_train: np.ndarray


def leave_input_and_system_out(X: np.ndarray, y: np.ndarray, systems, inputs) -> Scored:
    """Each cell scored by the fit on the cells of other systems and other inputs only.

    The same least squares as :func:`fit` on each fold's rows, computed by downdating: with the
    features standardised over the training cells (predictions do not change; coefficients are
    mapped back), a fold's normal equations are the whole sums less its system's and its input's
    (plus its own cell, taken out twice), solved at once for every cell; a fold whose matrix is
    ill-conditioned (eigenvalue ratio below 1e-6) is fitted by ``lstsq`` on its rows instead."""
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    systems, inputs = np.asarray(systems), np.asarray(inputs)
    n, p = X.shape[0], X.shape[1] + 1
    predictions, coefficients = np.full(n, np.nan), np.full((n, p), np.nan)
    features_ok = np.isfinite(X).all(axis=1)
    ok = features_ok & np.isfinite(y)
    mean = X[ok].mean(axis=0) if ok.any() else np.zeros(p - 1)
    sd = X[ok].std(axis=0) if ok.any() else np.ones(p - 1)
    sd = np.where(sd > 0, sd, 1.0)
    D = np.column_stack([np.ones(n), np.where(features_ok[:, None], (X - mean) / sd, 0.0)])
    Dk, yk = D * ok[:, None], np.where(ok, y, 0.0)
    outer, cross = Dk[:, :, None] * Dk[:, None, :], Dk * yk[:, None]
    s_code, i_code = np.unique(systems, return_inverse=True)[1].ravel(), np.unique(inputs, return_inverse=True)[1].ravel()

    def by(code, values):
        out = np.zeros((code.max() + 1, *values.shape[1:]))
        np.add.at(out, code, values)
        return out

    G = outer.sum(axis=0) - by(s_code, outer)[s_code] - by(i_code, outer)[i_code] + outer
    h = cross.sum(axis=0) - by(s_code, cross)[s_code] - by(i_code, cross)[i_code] + cross
    n_train = (ok.sum() - by(s_code, ok.astype(float))[s_code] - by(i_code, ok.astype(float))[i_code] + ok).astype(int)
    rows = np.flatnonzero(features_ok & (n_train >= p))
    b = np.full((n, p), np.nan)
    if rows.size:
        eig = np.linalg.eigvalsh(G[rows])
        good = eig[:, 0] > 1e-6 * eig[:, -1]
        b[rows[good]] = np.linalg.solve(G[rows[good]], h[rows[good]][..., None])[..., 0]
        for row in rows[~good]:
            train = training_rows(systems, inputs, row) & ok
            b[row] = fit(D[train][:, 1:], y[train]).coefficients
    defined = np.isfinite(b).all(axis=1)
    predictions[defined] = np.einsum("ij,ij->i", D[defined], b[defined])
    coefficients[defined, 1:] = b[defined, 1:] / sd
    coefficients[defined, 0] = b[defined, 0] - coefficients[defined, 1:] @ mean
    return Scored(predictions, coefficients, np.where(features_ok, n_train, 0))
