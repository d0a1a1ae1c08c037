"""What ``metaeval ppi`` prints (:mod:`metaeval.runs.studies.ppi`): the caption, a table per estimand and
the notes (the uniform-sample assumption, small samples, a metric that does not help).
"""

from __future__ import annotations

#: Fewer labelled cells than this on a row: said (the interval is the large-sample normal one).
SMALL_N = 10


TITLES = {"mean": "Each system's mean", "difference": "Differences (system minus vs, paired on inputs)",
          "winrate": "Win rates against the baseline (verdict: a win rate of 1/2 rejected)",
          "bradley-terry": "Bradley-Terry scores (log-odds, vs the reference)",
          "bradley-terry-difference": "Differences of Bradley-Terry scores (system minus vs)"}


def _f(x, digits: int = 3) -> str:
    from metaeval.present.plain import number_text

    return number_text(x, digits, undefined="")


def shown(rows):
    """The printed table of one estimand's rows."""
    import pandas as pd

    from metaeval.analyses import conclusions

    def interval(lo, hi):
        return "" if lo is None or lo != lo else f"[{_f(lo)}, {_f(hi)}]"

    estimand = rows["estimand"].iloc[0]
    out = pd.DataFrame({"system": rows["system"]})
    if estimand != "mean":
        out["vs"] = rows["other"]
    out = out.assign(**{
        "estimate": rows["estimate"].map(_f),
        "interval": [interval(a, b) for a, b in zip(rows["lower"], rows["upper"])],
        "classical": [interval(a, b) for a, b in zip(rows["classical_lower"], rows["classical_upper"])],
        "lambda": rows["lam"].map(lambda x: _f(x, 2)), "n": rows["n_labelled"], "N": rows["n_unlabelled"],
        "eff. n": rows["effective_labels"].map(lambda x: _f(x, 1))})
    if estimand in ("difference", "winrate", "bradley-terry-difference"):
        out["p adj."] = [conclusions.p_text(p, latex=False) if p == p and p is not None else ""
                         for p in rows["p_adjusted"]]
        centre = 0.5 if estimand == "winrate" else 0.0
        sign = -1.0 if '"human_direction": "lower"' in str(rows["conventions"].iloc[0]) else 1.0
        out["verdict"] = [_verdict(s, None if d is None or d != d else sign * (d - centre))
                          for s, d in zip(rows["significant"], rows["estimate"])]
    if estimand in ("mean", "bradley-terry"):
        out["group"] = rows["cluster"].map(lambda c: "" if c is None or c != c else str(int(c)))
    return out.reset_index(drop=True)


def _verdict(significant, delta) -> str:
    import pandas as pd

    if significant is None or pd.isna(significant) or delta is None or pd.isna(delta):
        return "untested"
    return ("better" if delta > 0 else "worse") if significant else "-"


def caption(rows) -> str:
    r = rows.iloc[0]
    lam = "estimated (PPI++)" if r["lam_given"] is None or r["lam_given"] != r["lam_given"] else f"{r['lam_given']:g}"
    share = "" if r["labelled_share"] is None or r["labelled_share"] != r["labelled_share"] else \
        f"; the human labels kept on a uniform {100 * r['labelled_share']:g}% of the inputs (seed {r['label_seed']})"
    what = (f"{r['human']} predicted by {r['predictor']}" if r["estimand"] in ("mean", "difference")
            else f"human votes predicted by judge {r['predictor']}")
    return (f"Prediction-powered estimates of {what} on {r['dataset']}, lambda {lam}, "
            f"{100 * (1 - r['alpha']):g}% normal intervals{share}:")


def notes(rows) -> list[str]:
    """What every output says: the assumption, a metric that does not help, the groups' basis."""
    import json

    from metaeval.analyses import ppi as stat

    conventions = json.loads(rows.iloc[0]["conventions"])
    lines = [f"Note: {stat.ASSUMPTION}."]
    if conventions.get("resample_clusters"):
        lines.append(f"Standard errors cluster-robust over the {conventions['clusters']} clusters of inputs "
                     f"({conventions['resample_clusters']}): labelled and unlabelled cells of a cluster summed together.")
    lams = rows["lam"].dropna()
    if rows["lam_given"].isna().all() and len(lams) and (lams <= stat.LAM_NEGLIGIBLE).all():
        lines.append(f"The predictor does not help: lambda <= {stat.LAM_NEGLIGIBLE:g} on every row, so the estimates "
                     "are (nearly) the classical ones from the human labels alone.")
    elif rows["lam_given"].isna().all() and (low := int((lams <= stat.LAM_NEGLIGIBLE).sum())):
        lines.append(f"The predictor does not help on {low} of {len(lams)} rows (lambda <= "
                     f"{stat.LAM_NEGLIGIBLE:g}): those estimates are (nearly) the classical ones.")
    if (few := int((rows["n_labelled"] < SMALL_N).sum())):
        lines.append(f"{few} row(s) rest on fewer than {SMALL_N} human labels: a normal interval from so few is rough "
                     "(its coverage is the large-sample one).")
    if conventions.get("groups"):
        lines.append(conventions["groups"])
    if conventions.get("converged") is False:
        lines.append("No Bradley-Terry fit: the rectified loss has no finite minimum (votes that separate the "
                     "systems, a system winning or losing every comparison: the human ones, or the judge's at "
                     "lambda 1, PPI++'s first fit); every score is undefined.")
    if (rows["estimand"] != "bradley-terry").any() and rows["se"].eq(0).any():
        lines.append("An interval is left empty where the labels and predictions do not vary (standard error 0).")
    return lines


# --- the data ---------------------------------------------------------------------------------------
