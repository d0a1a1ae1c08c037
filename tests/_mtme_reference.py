"""Brute-force references for the MT meta-evaluation statistics, written from the papers'
definitions with plain loops over pairs (Deutsch, Foster & Freitag 2023; Thompson et al. 2024)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def counts(x, z, epsilon=0.0):
    """(con, dis, ties metric only, ties human only, ties both, n) over the pairs i < j of the
    non-NaN pairs; a metric tie is |x_i - x_j| <= epsilon."""
    pts = [(a, b) for a, b in zip(x, z) if not (math.isnan(a) or math.isnan(b))]
    con = dis = tm = th = tb = 0
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            dx, dz = pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]
            mt, ht = abs(dx) <= epsilon, dz == 0
            if mt and ht:
                tb += 1
            elif mt:
                tm += 1
            elif ht:
                th += 1
            elif (dx > 0) == (dz > 0):
                con += 1
            else:
                dis += 1
    return con, dis, tm, th, tb, len(pts)


def variant(x, z, name, epsilon=0.0):
    con, dis, tm, th, tb, n = counts(x, z, epsilon)
    P = n * (n - 1) // 2
    if P == 0:
        return math.nan
    if name == "a":
        return (con - dis) / P
    if name == "b":
        tx, tz = tm + tb, th + tb
        if tx == P or tz == P:
            return math.nan
        return (con - dis) / math.sqrt(P - tx) / math.sqrt(P - tz)
    if name == "23":
        return (con + tb - dis - tm - th) / P
    if name == "acc23":
        return (con + tb) / P
    raise ValueError(name)


def rows(X, Z, level):
    if level == "system":
        with np.errstate(invalid="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [(np.nanmean(X, axis=1), np.nanmean(Z, axis=1))]
    if level == "summary":
        return [(X[:, j], Z[:, j]) for j in range(X.shape[1])]
    return [(X.ravel(), Z.ravel())]


def level_variant(X, Z, level, name, epsilon=0.0):
    vals = [variant(x, z, name, epsilon) for x, z in rows(X, Z, level)]
    vals = [v for v in vals if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def calibrate(X, Z, level, name):
    """Every candidate epsilon ({0} and each pair's |x_i - x_j|) evaluated from scratch; the
    smallest one reaching the maximum (within 1e-12) and its value."""
    cands = {0.0}
    for x, z in rows(X, Z, level):
        keep = [i for i in range(len(x)) if not (math.isnan(x[i]) or math.isnan(z[i]))]
        for a in range(len(keep)):
            for b in range(a + 1, len(keep)):
                cands.add(abs(x[keep[a]] - x[keep[b]]))
    scored = [(e, level_variant(X, Z, level, name, e)) for e in sorted(cands)]
    scored = [(e, v) for e, v in scored if not math.isnan(v)]
    if not scored:
        return math.nan, math.nan
    best = max(v for _, v in scored)
    e = min(e for e, v in scored if v >= best - 1e-12)
    return dict(scored)[e], e


def spa(X, Z, signs):
    """1 - mean over system pairs i < k of |p_human - p_metric|, p = #{perm: permuted delta >=
    delta} / K, the permuted delta of signs e being sum_j e_j (s_ij - s_kj), in exact fractions."""
    def pvals(S):
        F = [[Fraction(v) for v in row] for row in S]
        out = {}
        for i in range(len(F)):
            for k in range(i + 1, len(F)):
                delta = sum(a - b for a, b in zip(F[i], F[k]))
                hits = sum(1 for e in signs if sum(int(s) * (a - b) for s, a, b in zip(e, F[i], F[k])) >= delta)
                out[i, k] = Fraction(hits, len(signs))
        return out
    ph, pm = pvals(Z), pvals(X)
    return float(1 - sum(abs(ph[p] - pm[p]) for p in ph) / len(ph))
