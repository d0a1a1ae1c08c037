"""metaeval categories (issue 26 item 4): per-category correlations and the ablation drop,
checked against scipy on a small synthetic dataset; degenerate categories give NULL."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import WarehouseError
from metaeval.runs import Warehouse
from tests.conftest import run_cli

SYSTEMS, INPUTS = 6, 5


def _values(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    entity = rng.integers(0, 4, size=(SYSTEMS, INPUTS)).astype(float)
    predicate = rng.integers(0, 3, size=(SYSTEMS, INPUTS)).astype(float)
    noise = rng.normal(size=(SYSTEMS, INPUTS))
    return {
        "human.entity": entity, "human.predicate": predicate, "human.constant": np.full((SYSTEMS, INPUTS), 2.0),
        "human.overall": entity + predicate + 0.5 * noise,
        "human.no_entity": predicate + 0.5 * noise, "human.no_predicate": entity + 0.5 * noise,
        "m1": entity + 0.3 * rng.normal(size=(SYSTEMS, INPUTS)),
        "m2": predicate + entity * 0.2 + rng.normal(size=(SYSTEMS, INPUTS)),
    }


@pytest.fixture
def warehouse(db, tmp_path):
    values = _values(3)
    lines = ["system,input,measure,value"]
    for name, v in values.items():
        lines += [f"s{i},d{j},{name},{float(v[i, j])!r}" for i in range(SYSTEMS) for j in range(INPUTS)]
    table = tmp_path / "t.csv"
    table.write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", table, "--dataset", "frank", "--human", "human.*")
    return db, values


def _r(x: np.ndarray, z: np.ndarray, level: str, coefficient: str) -> float:
    """An independent computation: scipy on system means (system) or on every cell (global)."""
    if level == "system":
        x, z = x.mean(axis=1), z.mean(axis=1)
    else:
        x, z = x.ravel(), z.ravel()
    f = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[coefficient]
    return float(f(x, z)[0])


def test_drop_is_the_difference_of_two_scipy_correlations(warehouse):
    db, values = warehouse
    with Warehouse(db) as wh:
        rows = wh.categories("frank", "human.overall",
                             {"entity": "human.entity", "predicate": "human.predicate"},
                             {"entity": "human.no_entity", "predicate": "human.no_predicate"},
                             levels=["system", "global"], coefficients=["pearson", "kendall"])
    assert len(rows) == 2 * 2 * 2 * 2
    for r in rows.itertuples():
        x = values[r.metric]
        overall = _r(x, values["human.overall"], r.level, r.coefficient)
        ablated = _r(x, values[r.ablated_measure], r.level, r.coefficient)
        assert r.overall_correlation == pytest.approx(overall, abs=1e-12)
        assert r.ablated_correlation == pytest.approx(ablated, abs=1e-12)
        assert r.correlation_drop == pytest.approx(overall - ablated, abs=1e-12)
        assert r.category_correlation == pytest.approx(_r(x, values[r.category_measure], r.level, r.coefficient),
                                                       abs=1e-12)
        conventions = json.loads(r.conventions)
        assert conventions["level"] == r.level and "drop" in conventions
    # m1 follows the entity errors: ignoring them costs it more than ignoring the predicate errors
    system = rows[(rows["metric"] == "m1") & (rows["level"] == "system") & (rows["coefficient"] == "pearson")]
    drops = dict(zip(system["category"], system["correlation_drop"]))
    assert drops["entity"] > drops["predicate"]


def test_a_constant_category_is_undefined_not_a_number(warehouse):
    db, _ = warehouse
    with Warehouse(db) as wh:
        rows = wh.categories("frank", "human.overall", ["const=human.constant"], ["const=human.constant"],
                             metrics=["m1"], levels=["system"], coefficients=["pearson"])
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["category_correlation"] is None or np.isnan(row["category_correlation"])
    assert row["ablated_correlation"] is None or np.isnan(row["ablated_correlation"])
    assert row["correlation_drop"] is None or np.isnan(row["correlation_drop"])
    assert np.isfinite(row["overall_correlation"])


def test_stored_rows_are_reused_and_refusals_are_one_line(warehouse):
    db, _ = warehouse
    args = ["categories", "--dataset", "frank", "--human", "human.overall", "--level", "system",
            "--coefficient", "spearman", "--category", "entity=human.entity", "--ablation", "entity=human.no_entity"]
    first = run_cli(db, *args)
    assert "computed 2 of 2" in first.output and "drop" in first.output
    again = run_cli(db, *args, "--format", "json")
    assert "up to date" in again.stderr
    rows = json.loads(again.stdout)
    assert {r["category"] for r in rows} == {"entity"} and all(r["conventions"]["drop"] for r in rows)
    for bad, message in ((["--category", "entity"], "expected CATEGORY=MEASURE"),
                         (["--category", "x=m1"], "has no human judgment 'm1'"),
                         (["--ablation", "x=human.overall"], "is the overall judgment itself")):
        result = run_cli(db, *args[:-4], *bad, ok=False)
        assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    with Warehouse(db) as wh, pytest.raises(WarehouseError, match="at least one"):
        wh.categories("frank", "human.overall")


def test_latex_and_figure(warehouse, tmp_path):
    db, _ = warehouse
    out = tmp_path / "drops.png"
    result = run_cli(db, "categories", "--dataset", "frank", "--human", "human.overall", "--level", "system",
                     "--coefficient", "pearson", "--category", "entity=human.entity", "--ablation",
                     "entity=human.no_entity", "--ablation", "predicate=human.no_predicate", "--format", "latex",
                     "--out", out)
    assert r"\toprule" in result.stdout and r"\caption{Error categories" in result.stdout
    assert out.stat().st_size > 1000
    refused = run_cli(db, "categories", "--dataset", "frank", "--human", "human.overall", "--category",
                      "entity=human.entity", "--out", tmp_path / "x.png", ok=False)
    assert refused.exit_code != 0 and "one --level and one --coefficient" in refused.output


def test_figure_legend_and_title():
    import pandas as pd

    from metaeval.present import figures

    rows = pd.DataFrame({"metric": ["a", "a", "b", "b"], "category": ["entity", "predicate"] * 2,
                         "correlation_drop": [0.2, -0.1, np.nan, 0.05], "level": "system", "coefficient": "pearson",
                         "human": "h"})
    fig = figures.category_drops(rows, "Drop when a category is ignored")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["entity", "predicate"]
    assert any(t.get_text().strip() == "n/a" for t in ax.texts)        # undefined: marked, not drawn as 0
    assert "ignored" in fig._suptitle.get_text()
    import matplotlib.pyplot as plt

    plt.close(fig)
