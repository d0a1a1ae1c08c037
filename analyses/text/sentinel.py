"""Sentinel metrics: baselines that see one side of a translation only (Perrella et al., ACL 2024,
"Guardians of the machine translation meta-evaluation: sentinel metrics fall in!").

The paper's sentinels (SENTINEL-CAND, -SRC, -REF) are XLM-RoBERTa regressors trained on earlier
years' human scores from the candidate alone, the source alone or the reference alone. A metric
that cannot see the translation-source relation should rank low; when a sentinel ranks high, the
meta-evaluation rewards something other than translation quality (SRC and REF give every
system of a segment the same score, so they live on segment-level groupings that compare
different segments, and on ties that tie calibration turns into agreement).

**These are lightweight stand-ins, not the paper's models**: no neural encoder and no earlier
year; a linear least-squares model (:mod:`.regression`, with an intercept) on a handful of
surface features of the one text, each cell scored **cross-fitted** by a model trained on the
cells of the other inputs only (leave-input-out), so no human score of its input trains the
model that scores it. They check the same thing at a lower strength: a meta-evaluation in which even these rank
among the metrics is suspect.

The features of a text t (:data:`FEATURES`, in order): log(1 + characters), log(1 + whitespace
tokens), mean token length in characters (0 without tokens), and the shares among the characters
of punctuation (neither alphanumeric nor space), digits and non-ASCII characters, the share of
upper-case among the letters (0 without letters), and the distinct character trigrams over all
of them (1 under three characters).
"""

from __future__ import annotations

import math

import numpy as np

#: the sentinels: the side of the translation each sees
SIDES = {"sentinel-cand": "candidate", "sentinel-src": "source", "sentinel-ref": "reference"}
FEATURES = ("log-chars", "log-tokens", "mean-token-length", "punctuation-share", "digit-share", "non-ascii-share",
            "uppercase-share", "distinct-char-trigrams")


def text_features(text: str) -> list[float]:
    """The :data:`FEATURES` of one text (module docstring)."""
    n = len(text)
    tokens = text.split()
    letters = [c for c in text if c.isalpha()]
    trigrams = [text[i:i + 3] for i in range(n - 2)]
    share = (lambda k: k / n) if n else (lambda k: 0.0)
    return [math.log1p(n), math.log1p(len(tokens)),
            sum(map(len, tokens)) / len(tokens) if tokens else 0.0,
            share(sum(1 for c in text if not c.isalnum() and not c.isspace())),
            share(sum(1 for c in text if c.isdigit())),
            share(sum(1 for c in text if ord(c) > 127)),
            sum(1 for c in letters if c.isupper()) / len(letters) if letters else 0.0,
            len(set(trigrams)) / len(trigrams) if trigrams else 1.0]


def feature_matrix(texts) -> np.ndarray:
    """cells x :data:`FEATURES`; a row of NaN where the text is None (that side is missing)."""
    return np.array([text_features(t) if t is not None else [np.nan] * len(FEATURES) for t in texts], dtype=float)


def sentinel_name(sentinel: str, human: str) -> str:
    """``sentinel-cand[human=mqm]``: the sentinel and the human it predicts."""
    if sentinel not in SIDES:
        raise ValueError(f"unknown sentinel {sentinel!r}; one of {', '.join(SIDES)}")
    return f"{sentinel}[human={human}]"


def leave_input_out(X: np.ndarray, y: np.ndarray, inputs) -> np.ndarray:
    """Each cell's prediction by the least-squares fit (:func:`.regression.fit`, intercept first)
    on the cells of the other inputs: one fit per input, so the cells of an input share their
    model exactly (a source or reference sentinel gives them one score). NaN where the cell's
    features are not all finite or its fold does not determine the model."""
    from .regression import fit

    X, y, inputs = np.asarray(X, dtype=float), np.asarray(y, dtype=float), np.asarray(inputs)
    out = np.full(len(y), np.nan)
    finite = np.isfinite(X).all(axis=1)
    for value in dict.fromkeys(inputs.tolist()):
        here = inputs == value
        model = fit(X[~here], y[~here])
        if model.defined:
            rows = here & finite
            out[rows] = model.coefficients[0] + X[rows] @ model.coefficients[1:]
    return out
