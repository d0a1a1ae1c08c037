"""AlpacaEval 2.0, whole (issue 43 item 1): its released annotations.json ingested as it is, and
lc-winrate's numbers against AlpacaEval's own code.

tests/data/alpaca_lc/ holds a small made-up sample in AlpacaEval's layout (make_sample.py wrote
it: annotations.json, a JSON array of 3 models x 80 instructions against gpt4_1106_preview, with
continuous preferences, ties, AlpacaEval's old 0 draw; df_gamed.csv, two gamed baselines on the
same instructions; instruction_difficulty.csv) and expected.json: what AlpacaEval's own
``get_length_controlled_winrate`` (src/alpaca_eval/metrics/glm_winrate.py of tatsu-lab/alpaca_eval
at cd543a1, scikit-learn 1.9.1, its hf_hub_download patched to return the local df_gamed.csv)
printed on it (run_alpaca_eval.py), for its three GLMs, with liblinear's default tolerance (its
published numbers) and run to convergence (tol 1e-10)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.analyses import length_control as lc
from metaeval.errors import InputError, WarehouseError
from metaeval.ingest import preferences
from metaeval.runs import Warehouse

DATA = Path(__file__).resolve().parent / "data" / "alpaca_lc"
EXPECTED = json.loads((DATA / "expected.json").read_text())
BASELINE, JUDGE = "gpt4_1106_preview", "weighted_alpaca_eval_gpt4_turbo"
GLMS = {"length_controlled_v1": {"gamed": str(DATA / "df_gamed.csv")},
        "length_controlled_noreg": {"difficulty": str(DATA / "instruction_difficulty.csv")},
        "length_controlled_minimal": {}}


def _annotations() -> pd.DataFrame:
    return pd.DataFrame(json.loads((DATA / "annotations.json").read_text()))


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    db = tmp_path_factory.mktemp("alpaca") / "wh.duckdb"
    Store.create(db).close()
    with Warehouse(db) as wh:
        report = preferences.ingest(wh, "ae", DATA / "annotations.json")
        rows = {glm: wh.lc_winrate("ae", BASELINE, judge=JUDGE, k=50, **files) for glm, files in GLMS.items()}
    return db, report, rows


def test_the_json_array_is_read_and_continuous_preferences_kept_as_the_second_systems_probability(sample):
    db, report, _ = sample
    raw = _annotations()
    assert report.rows == len(raw) == 240
    with Store(db, read_only=True) as wh:
        stored = wh.sql("SELECT i.name AS input, sa.name AS a, sb.name AS b, p.winner, p.probability "
                        "FROM preferences p JOIN inputs i USING (input_id) "
                        "JOIN systems sa ON sa.system_id = p.system_a_id "
                        "JOIN systems sb ON sb.system_id = p.system_b_id")
        index = wh.sql("SELECT input, value FROM attributes WHERE attribute = 'instruction_index' AND system = ''")
    import hashlib

    raw["input"] = ["i-" + hashlib.sha256(t.encode()).hexdigest()[:16] for t in raw["instruction"]]
    stored["model"] = np.where(stored["a"] == BASELINE, stored["b"], stored["a"])
    merged = raw.merge(stored, left_on=["input", "generator_2"], right_on=["input", "model"])
    assert len(merged) == 240 and {"concise", BASELINE} <= set(merged["a"]) and "strong" in set(merged["b"])
    p = merged["preference"].astype(float).replace({0.0: 1.5})          # AlpacaEval's 0: a draw
    # P(stored second system preferred): preference - 1 when it is AlpacaEval's output_2 (the model),
    # 2 - preference when the model sorts first (concise < gpt4_1106_preview: the baseline is second)
    second = np.where(merged["b"] == merged["generator_2"], p - 1, 2 - p)
    np.testing.assert_allclose(merged["probability"], second, atol=1e-15)
    expected_winner = np.where(second > 0.5, "b", np.where(second < 0.5, "a", "tie"))
    assert (merged["winner"] == expected_winner).all() and (raw["preference"] == 0).any()
    places = {f"Instruction {i}:": str(i) for i in range(80)}
    first = raw.drop_duplicates("input").set_index("input")["instruction"]
    assert all(places[first[r.input].split(" ", 2)[0] + " " + first[r.input].split(" ", 2)[1]] == r.value
               for r in index.itertuples()) and len(index) == 80


@pytest.mark.parametrize("glm", list(GLMS))
def test_lc_winrate_is_alpaca_evals_own_number_on_the_sample(sample, glm):
    _, _, rows = sample
    got = rows[glm].set_index("system")
    assert set(got.index) == set(EXPECTED) and set(got["glm"]) == {glm}
    for model, theirs in EXPECTED.items():
        row = got.loc[model]
        # AlpacaEval's liblinear stops at its tolerance 1e-4: within 0.1 points of what it prints ...
        assert abs(row["lc_winrate"] - theirs[glm]) < 0.1, (model, row["lc_winrate"], theirs[glm])
        # ... and its fit run to convergence is ours (the exact minimum)
        assert row["lc_winrate"] == pytest.approx(theirs[glm + "_tol1e-10"], abs=1e-3)
        assert row["winrate"] == pytest.approx(theirs["win_rate"], abs=1e-9)
        assert row["standard_error"] == pytest.approx(theirs["standard_error"], abs=1e-9)
        assert row["discrete_winrate"] == pytest.approx(theirs["discrete_win_rate"], abs=1e-9)
        assert row["n_items"] == theirs["n_total"]
        assert row["lower"] <= row["lc_winrate"] <= row["upper"] or row["n_valid"] < 50


def test_every_output_names_the_variant(sample):
    _, _, rows = sample
    from metaeval.runs.votes.length_control import variant

    for glm, frame in rows.items():
        conventions = json.loads(frame["conventions"][0])
        assert conventions["glm"] == glm and conventions["variant"] == variant(glm)
        if glm != "length_controlled_v1":
            assert "not AlpacaEval 2.0's published LC" in variant(glm)


def test_the_cli_says_which_variant_it_computed(db):
    from tests.conftest import run_cli

    run_cli(db, "ingest", "preferences", DATA / "annotations.json", "--dataset", "ae")
    base = ["lc-winrate", "--dataset", "ae", "--baseline", BASELINE, "--judge", JUDGE, "--k", "50"]
    text = " ".join(run_cli(db, *base).output.split())
    assert "length_controlled_minimal" in text and "not AlpacaEval 2.0's published LC" in text
    text = " ".join(run_cli(db, *base, "--gamed", DATA / "df_gamed.csv").output.split())
    assert "length_controlled_v1" in text and "not AlpacaEval" not in text


# --- bad input: one line, nothing written --------------------------------------------------------
def _write_annotations(path: Path, records) -> Path:
    path.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    return path


def _record(**change):
    return {"instruction": "Say hi", "output_1": "hi", "generator_1": "gpt4", "output_2": "hello",
            "generator_2": "alpaca", "annotator": "j", "preference": 1.7, **change}


@pytest.mark.parametrize("value", [2.5, 0.99, -1, "2"])
def test_a_preference_outside_1_2_other_than_0_is_refused_naming_file_line_and_field(tmp_path, db, value):
    path = _write_annotations(tmp_path / "annotations.json",
                              [_record(), _record(instruction="Count", preference=value)])
    with Warehouse(db) as wh:
        if value == "2":       # a number written as a string is a number (CSV files give text)
            preferences.ingest(wh, "d", path)
            return
        with pytest.raises(InputError) as err:
            preferences.ingest(wh, "d", path)
        assert str(err.value).startswith(f"{path}:3: field 'preference': expected a number in [1, 2]")
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"][0] == 0


def test_null_preferences_are_left_out_and_counted(tmp_path, db):
    path = _write_annotations(tmp_path / "annotations.json",
                              [_record(), _record(instruction="Count", preference=None),
                               _record(instruction="Third", preference=0)])
    with Warehouse(db) as wh:
        report = preferences.ingest(wh, "d", path)
        stored = wh.sql("SELECT winner, probability FROM preferences ORDER BY probability")
    assert report.rows == 2 and "1 null preference(s) left out (line 3)" in report.contents
    # alpaca < gpt4: the stored second system is gpt4 (output_1): 2 - 1.7 = 0.3, a win of alpaca
    assert stored["winner"].tolist() == ["a", "tie"]
    assert stored["probability"].tolist() == pytest.approx([0.3, 0.5])


def test_a_broken_json_array_is_refused_naming_the_line(tmp_path, db):
    path = tmp_path / "annotations.json"
    path.write_text('[\n{"instruction": "a", "generator_1": "x", "generator_2": "y", "preference": 1},\n'
                    '{"instruction": "b", "generator_1": "x" "generator_2": "y"}\n]\n')
    with Warehouse(db) as wh, pytest.raises(InputError, match=r"annotations.json:3: malformed JSON"):
        preferences.ingest(wh, "d", path, judge="j")


def _gamed_variant(tmp_path, change) -> Path:
    frame = pd.read_csv(DATA / "df_gamed.csv")
    frame = change(frame)
    path = tmp_path / "df_gamed.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("change, where", [
    (lambda f: f.drop(columns=["std_delta_len"]), ": field 'std_delta_len': missing column"),
    (lambda f: f.assign(index=f["index"].where(f.index != 3, 900)), ":5: field 'index': index 900 is not an "
                                                                     "instruction of dataset 'ae'"),
    (lambda f: f.assign(preference=f["preference"].where(f.index != 0, 1.5)), ":2: field 'preference'"),
    (lambda f: f.assign(not_gamed_baseline="maybe"), ":2: field 'not_gamed_baseline'"),
])
def test_a_bad_gamed_file_is_refused_in_one_line_and_nothing_written(sample, tmp_path, change, where):
    from tests.conftest import run_cli

    db, _, _ = sample
    path = _gamed_variant(tmp_path, change)
    with Store(db, read_only=True) as wh:
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0]
    result = run_cli(db, "lc-winrate", "--dataset", "ae", "--baseline", BASELINE, "--judge", JUDGE, "--k", "50",
                     "--gamed", path, ok=False)
    out = result.output.strip()
    assert result.exit_code != 0 and len(out.splitlines()) == 1 and f"{path}{where}" in out, out
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == runs


def test_gamed_and_difficulty_together_and_items_without_an_index_are_refused(db, tmp_path):
    native = tmp_path / "native.csv"
    native.write_text("input,system_a,system_b,judge,order,winner\n"
                      + "".join(f"q{i},base,m,gpt4,ab,{'a' if i % 3 else 'b'}\n" for i in range(12)))
    with Warehouse(db) as wh:
        with pytest.raises(WarehouseError, match="give one of them"):
            wh.lc_winrate("ae", BASELINE, judge=JUDGE, gamed="a.csv", difficulty="b.csv", k=50)
        preferences.ingest(wh, "native", native)           # a native file: no instruction place stored
        with pytest.raises(InputError, match="index 0 is not an instruction of dataset 'native': no "
                                             "instruction_index is stored"):
            wh.lc_winrate("native", "base", judge="gpt4", gamed=str(DATA / "df_gamed.csv"), k=50)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0


# --- the L1 fit against scikit-learn (the test extra) --------------------------------------------
def _soft_data(seed=1, n=120):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.tanh(rng.normal(size=n)), rng.normal(size=n), np.ones(n)])
    y = np.clip(1 / (1 + np.exp(-(X @ np.array([1.2, -0.6, 0.3]) + rng.normal(size=n)))), 0, 1)
    y[:10] = 0.5
    w = np.where(np.arange(n) < 30, 0.1, 1.0)
    return X, y, w


@pytest.mark.parametrize("C", [0.01, 0.3, 2.78, 100.0])
def test_the_l1_fit_is_liblinears_run_to_convergence(C):
    linear = pytest.importorskip("sklearn.linear_model")
    X, y, w = _soft_data()
    ours = lc.l1_logistic(X, y, w, C)
    model = linear.LogisticRegression(penalty="l1", solver="liblinear", C=C, fit_intercept=False, tol=1e-12,
                                      max_iter=100_000, random_state=123)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # scikit-learn's notice that penalty= is deprecated
        model.fit(np.vstack([X, X]), np.r_[np.ones(len(y)), np.zeros(len(y))], sample_weight=np.r_[y * w, (1 - y) * w])
    np.testing.assert_allclose(ours, model.coef_[0], atol=1e-6)


def test_the_folds_are_group_kfolds():
    selection = pytest.importorskip("sklearn.model_selection")
    for n in (7, 80, 243):
        folds = lc.group_folds(n)
        groups = np.r_[np.arange(n), np.arange(n)]        # each item twice, as AlpacaEval duplicates it
        for f, (_, test) in enumerate(selection.GroupKFold(n_splits=5).split(groups, groups=groups)):
            assert set(np.unique(groups[test])) == set(np.flatnonzero(folds == f)), (n, f)


def test_the_chosen_C_and_the_scores_are_brute_force_ones():
    """choose_C against a loop written out: each fold's fit, its clipped weighted soft log-loss."""
    X, y, w = _soft_data(seed=5, n=60)
    C, scores = lc.choose_C(X, y, w)
    folds = (len(y) - 1 - np.arange(len(y))) % 5
    for j, c in enumerate(lc.CS):
        for f in range(5):
            beta = lc.l1_logistic(X[folds != f], y[folds != f], w[folds != f], c)
            q = np.clip(1 / (1 + np.exp(-(X[folds == f] @ beta))), 1e-15, 1 - 1e-15)
            yy, ww = y[folds == f], w[folds == f]
            assert scores[f, j] == pytest.approx(np.mean(ww * (yy * np.log(q) + (1 - yy) * np.log(1 - q))), abs=1e-12)
    assert C == lc.CS[int(np.argmax(scores.sum(axis=0)))]


# --- the maximum-likelihood fit's separation ---------------------------------------------------
def test_a_finite_optimum_at_a_large_coefficient_is_found_not_declared_separated():
    """gpt4_gamed-like verdicts: the length explains almost every verdict, one item goes the other
    way; the likelihood's maximum is finite, at a length coefficient in the hundreds."""
    d = np.r_[np.linspace(-3000, -10, 40), np.linspace(10, 3000, 40)]
    y = (d > 0).astype(float)
    y[np.argmin(np.abs(d - 12))] = 0.0          # one verdict against the length, near zero difference
    y[np.argmin(np.abs(d + 12))] = 1.0
    X = np.column_stack([np.ones_like(d), np.tanh(d / d.std(ddof=1))])
    assert not lc.separated(X, y)
    beta, ok = lc.fit_soft_logistic(X, y)
    assert ok and beta[1] > 50                  # far past a linear predictor of 20
    # the gradient is zero there (a maximum), and the profile likelihood is lower on either side
    mu = 1 / (1 + np.exp(-(X @ beta)))
    assert np.abs(X.T @ (y - mu)).max() < 1e-6
    loglik = lambda b: float((y * -np.logaddexp(0, -(X @ b)) + (1 - y) * -np.logaddexp(0, X @ b)).sum())
    assert loglik(beta) > max(loglik(beta * 0.8), loglik(beta * 1.25))


def test_separation_is_what_a_brute_force_search_of_directions_finds():
    rng = np.random.default_rng(2)
    for trial in range(30):
        n = int(rng.integers(3, 9))
        X = np.column_stack([np.ones(n), rng.normal(size=n)])
        y = rng.choice([0.0, 1.0, 0.5], size=n, p=[0.45, 0.45, 0.1])
        angles = np.linspace(0, 2 * np.pi, 20_001)
        D = np.column_stack([np.cos(angles), np.sin(angles)])
        Z = X @ D.T                                               # items x directions
        sign = np.where(y == 1, 1.0, np.where(y == 0, -1.0, 0.0))[:, None]
        feasible = ((sign * Z >= -1e-9) | (sign == 0)).all(axis=0) & (np.abs(Z[(y == 0.5)]) < 1e-3).all(axis=0)
        brute = bool((feasible & (np.abs(Z) > 1e-6).any(axis=0)).any())
        assert lc.separated(X, y) == brute, (trial, X, y)


# --- schema 8 -> 9 -------------------------------------------------------------------------------
def test_a_schema_8_warehouse_upgrades_keeping_every_row(db):
    from metaeval import schema
    from metaeval.connection import duckdb_connect
    from tests.conftest import run_cli

    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "alpaca.csv"
    run_cli(db, "ingest", "preferences", example, "--dataset", "alpaca", "--judge", "gpt4")
    run_cli(db, "lc-winrate", "--dataset", "alpaca", "--baseline", "baseline", "--judge", "gpt4", "--k", "50")
    new = ["glm", "gamed", "difficulty", "standard_error", "discrete_winrate", "difficulty_coefficient", "penalty_c"]
    with duckdb_connect(db) as con:   # as schema 8 had them: no probability, lc_winrates without the new columns
        prefs = con.execute("SELECT * EXCLUDE (probability, replicate) FROM preferences ORDER BY ALL").df()
        lcs = con.execute(f"SELECT * EXCLUDE ({', '.join(new)}) FROM lc_winrates ORDER BY result_id").df()
        con.execute("DROP VIEW preference_matrix")
        con.execute("DROP VIEW preference_means")       # (schema 12's)
        for view in [v for (v,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
                     if v == "latest_lc_winrates"]:
            con.execute(f"DROP VIEW {view}")
        # the table of schema 8 (no probability; and none of schema 12's replicate, which joined the key)
        con.execute("CREATE TABLE old AS SELECT * EXCLUDE (probability, replicate) FROM preferences")
        con.execute("DROP TABLE preferences")
        con.execute("ALTER TABLE old RENAME TO preferences")
        for c in new:
            con.execute(f"ALTER TABLE lc_winrates DROP COLUMN {c}")
        con.execute("UPDATE schema_info SET value = '8' WHERE key = 'version'")
    assert f"from schema 8 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db) as wh:
        after = wh.sql("SELECT * FROM preferences ORDER BY ALL")
        assert after["probability"].isna().all()
        assert (after["replicate"] == 0).all()
        assert after.drop(columns=["probability", "replicate"]).equals(prefs) and len(prefs) > 0
        rows = wh.sql("SELECT * FROM lc_winrates ORDER BY result_id")
        assert rows.drop(columns=new).equals(lcs) and len(lcs) > 0
        assert set(rows["glm"]) == {"maximum_likelihood"} and set(rows["gamed"]) == {""}
        assert len(wh.sql("SELECT * FROM latest_lc_winrates")) == len(rows)


def test_the_joint_difficulty_is_the_notebooks_fit_on_the_sample():
    """expected_joint.json: AlpacaEval's notebooks/instruction_difficulty.ipynb joint formula fitted by
    its fit_LogisticRegressionCV on the sample (run_joint_difficulty.py), liblinear at its default
    tolerance and run to convergence."""
    expected = json.loads((DATA / "expected_joint.json").read_text())
    raw = _annotations()
    parts = [p.reset_index(drop=True).reset_index(names="index") for _, p in raw.groupby("generator_2", sort=True)]
    df = pd.concat(parts, ignore_index=True)
    y = df["preference"].astype(float).replace({0.0: 1.5}) - 1
    ours, C = lc.joint_difficulty(df["generator_2"], df["index"], y, df["output_2"].str.len(),
                                  df["output_1"].str.len())
    for tol, theirs in expected.items():
        assert C == pytest.approx(theirs["C"])
        got = np.array([ours[int(i)] for i in theirs["difficulty"]])
        want = np.array(list(theirs["difficulty"].values()))
        np.testing.assert_allclose(got, want, atol=1e-4 if tol == "tol1e-10" else 2e-3)


def test_another_probability_for_a_stored_verdict_is_a_conflict_unless_replaced(tmp_path, db):
    from metaeval.errors import ConflictError

    first = _write_annotations(tmp_path / "first.json", [_record(preference=1.7)])
    second = _write_annotations(tmp_path / "second.json", [_record(preference=1.8)])     # same verdict, another p
    with Warehouse(db) as wh:
        preferences.ingest(wh, "d", first)
        assert preferences.ingest(wh, "d", first).changed is False
        with pytest.raises(ConflictError, match=r"second.json:2: .*probability 0.2.*, stored 0.3"):
            preferences.ingest(wh, "d", second)
        assert wh.sql("SELECT probability FROM preferences")["probability"].tolist() == pytest.approx([0.3])
        report = preferences.ingest(wh, "d", second, replace=True)
        assert report.replaced == 1
        assert wh.sql("SELECT probability FROM preferences")["probability"].tolist() == pytest.approx([0.2])
