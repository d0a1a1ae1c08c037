"""Writes tests/anchors/ppi_py.json: small seeded data and the numbers the authors' implementation of
PPI++ (aangelopoulos/ppi_py, PyPI ``ppi-python`` 0.2.3) prints for them. Not a test and not
imported by the package: run it in a venv outside the repository that has ppi_py::

    python3 -m venv /tmp/ppi-venv && /tmp/ppi-venv/bin/pip install ppi-python
    /tmp/ppi-venv/bin/python tests/anchors/ppi_py_fixtures.py

tests/test_ppi.py compares ours with these numbers (means, differences, win rates to 1e-6;
Bradley-Terry to 1e-4 relative). Values are rounded to 4 decimals before ppi_py sees them, so the
JSON holds exactly the data both sides read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from ppi_py import ppi_logistic_ci, ppi_mean_ci, ppi_mean_pointestimate

ALPHA = 0.1
LAMS = (None, 1.0, 0.0, 0.4)


def r4(a):
    return np.round(np.asarray(a, float), 4)


def mean_case(y, yhat, yhat_u):
    out = {}
    for lam in LAMS:
        lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA, lam=lam)
        est = ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
        out[str(lam)] = {"estimate": float(np.squeeze(est)), "lower": float(np.squeeze(lo)),
                         "upper": float(np.squeeze(hi))}
    return out


def bt_case(X, y, yhat, Xu, yhat_u):
    out = {}
    for lam in LAMS:
        lo, hi = ppi_logistic_ci(X, y, yhat, Xu, yhat_u, alpha=ALPHA, lam=lam)
        out[str(lam)] = {"lower": lo.tolist(), "upper": hi.tolist(), "estimate": ((lo + hi) / 2).tolist()}
    return out


def main() -> None:
    rng = np.random.default_rng(45)
    fixtures = {"alpha": ALPHA, "ppi_py": "ppi-python 0.2.3 (github aangelopoulos/ppi_py bd90caa)"}

    # 1. a mean: 40 labelled, 300 unlabelled, an informative metric
    t = rng.normal(size=340)
    y, yhat = r4(t[:40] + rng.normal(0, 0.6, 40)), r4(t + rng.normal(0, 0.5, 340))
    fixtures["mean"] = {"y": y.tolist(), "yhat": yhat[:40].tolist(), "yhat_u": yhat[40:].tolist(),
                        "results": mean_case(y, yhat[:40], yhat[40:])}

    # 2. cells of a small dataset: 3 systems x 40 inputs, the metric on every cell, the human measure
    #    on inputs 0-11 (and S1's input 12); each system's mean and each pair's paired difference
    systems, inputs = ["S0", "S1", "S2"], [f"d{j:02d}" for j in range(40)]
    q = np.array([0.0, 0.4, -0.3])
    latent = q[:, None] + rng.normal(0, 1, 40)[None, :] + rng.normal(0, 0.5, (3, 40))
    Z = r4(3 + latent + rng.normal(0, 0.5, (3, 40)))
    X = r4(0.3 + 0.1 * latent + rng.normal(0, 0.05, (3, 40)))
    labelled = np.zeros((3, 40), bool)
    labelled[:, :12] = True
    labelled[1, 12] = True
    cells = [{"system": s, "input": inputs[j], "metric": float(X[i, j]),
              "human": float(Z[i, j]) if labelled[i, j] else None} for i, s in enumerate(systems) for j in range(40)]
    means = {s: mean_case(Z[i, labelled[i]], X[i, labelled[i]], X[i, ~labelled[i]]) for i, s in enumerate(systems)}
    diffs = {}
    for a in range(3):
        for b in range(a + 1, 3):
            lab = labelled[a] & labelled[b]
            diffs[f"{systems[a]}-{systems[b]}"] = mean_case(Z[a, lab] - Z[b, lab], X[a, lab] - X[b, lab],
                                                            X[a, ~lab] - X[b, ~lab])
    fixtures["cells"] = {"rows": cells, "means": means, "differences": diffs}

    # 3. pairwise votes: 4 systems, each of B, C, D against A and B against C on 60 inputs; the judge
    #    on every item (one verdict, ties allowed), one human vote (no tie) on inputs 0-19
    names = ["A", "B", "C", "D"]
    skill = np.array([0.0, 0.5, -0.4, 0.9])
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2)]
    votes, items = [], []
    for j in range(60):
        for a, b in pairs:
            p = 1 / (1 + np.exp(-(skill[b] - skill[a])))
            human = float(rng.random() < p)                      # 1: b preferred
            u = rng.random()
            judged = human if u < 0.7 else (0.5 if u < 0.8 else 1 - human)
            item = {"input": f"q{j:02d}", "a": names[a], "b": names[b], "judged": judged,
                    "human": human if j < 20 else None}
            items.append(item)
            votes.append({"input": item["input"], "system_a": names[a], "system_b": names[b], "judge": "robot",
                          "order": "ab", "winner": {1.0: "b", 0.0: "a", 0.5: "tie"}[judged], "kind": "automatic"})
            if j < 20:
                votes.append({"input": item["input"], "system_a": names[a], "system_b": names[b], "judge": "ann-1",
                              "order": "ab", "winner": "b" if human == 1 else "a", "kind": "human"})
    winrates = {}
    for s in ("B", "C", "D"):
        mine = [it for it in items if it["a"] == "A" and it["b"] == s]
        lab = [it for it in mine if it["human"] is not None]
        unl = [it for it in mine if it["human"] is None]
        winrates[s] = mean_case(np.array([it["human"] for it in lab]), np.array([it["judged"] for it in lab]),
                                np.array([it["judged"] for it in unl]))
    index = {s: i for i, s in enumerate(names)}

    def design(rows):
        D = np.zeros((len(rows), 4))
        for r, it in enumerate(rows):
            D[r, index[it["b"]]] += 1
            D[r, index[it["a"]]] -= 1
        return D[:, 1:]

    lab = [it for it in items if it["human"] is not None]
    unl = [it for it in items if it["human"] is None]
    bt = bt_case(design(lab), np.array([it["human"] for it in lab]), np.array([it["judged"] for it in lab]),
                 design(unl), np.array([it["judged"] for it in unl]))
    fixtures["votes"] = {"rows": votes, "baseline": "A", "winrates": winrates, "bradley_terry": bt}

    path = Path(__file__).with_name("ppi_py.json")
    path.write_text(json.dumps(fixtures, indent=1) + "\n")
    print(json.dumps({k: v.get("results", v.get("means")) for k, v in fixtures.items() if isinstance(v, dict)},
                     indent=1)[:2000])


if __name__ == "__main__":
    main()
