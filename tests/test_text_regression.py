"""Louis & Nenkova's (2013, §4.2.4) regression over the model-free features, scored
leave-input-and-system-out: the folds never share the scored cell's input or system, and each
fold's fit is numpy.linalg.lstsq on exactly its training rows (issue 33 item 5)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.analyses.text import regression
from tests.conftest import run_cli


def _grid(n_systems=5, n_inputs=6, p=3, seed=0, missing=0.1):
    rng = np.random.default_rng(seed)
    systems = np.repeat([f"s{k}" for k in range(n_systems)], n_inputs)
    inputs = np.tile([f"i{k}" for k in range(n_inputs)], n_systems)
    X = rng.normal(size=(len(systems), p))
    y = X @ rng.normal(size=p) + 0.5 + rng.normal(scale=0.3, size=len(systems))
    y[rng.random(len(y)) < missing] = np.nan
    X[rng.random(len(y)) < missing / 2, 0] = np.nan
    return X, y, systems, inputs


def test_no_training_row_shares_the_input_or_the_system():
    X, y, systems, inputs = _grid()
    for row in range(len(systems)):
        train = regression.training_rows(systems, inputs, row)
        assert not (systems[train] == systems[row]).any() and not (inputs[train] == inputs[row]).any()
        # every other cell of another system and another input is one
        assert train.sum() == sum(1 for s, i in zip(systems, inputs) if s != systems[row] and i != inputs[row])


def test_each_fold_is_lstsq_on_its_own_rows():
    X, y, systems, inputs = _grid()
    scored = regression.leave_input_and_system_out(X, y, systems, inputs)
    for row in range(len(y)):
        if not np.isfinite(X[row]).all():
            assert np.isnan(scored.predictions[row])
            continue
        rows = [r for r in range(len(y)) if systems[r] != systems[row] and inputs[r] != inputs[row]
                and np.isfinite(y[r]) and np.isfinite(X[r]).all()]
        design = np.array([[1.0, *X[r]] for r in rows])
        b = np.linalg.lstsq(design, y[rows], rcond=None)[0]
        assert scored.n_train[row] == len(rows)
        np.testing.assert_allclose(scored.coefficients[row], b, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(scored.predictions[row], b[0] + X[row] @ b[1:], rtol=1e-10, atol=1e-12)
    # a cell without a human score is scored all the same
    assert np.isfinite(scored.predictions[np.isnan(y) & np.isfinite(X).all(axis=1)]).all()


def test_an_exact_linear_target_is_recovered_and_undetermined_folds_are_nan():
    X, _, systems, inputs = _grid(missing=0)
    y = 2.0 - X @ np.array([1.0, 0.5, -3.0])
    scored = regression.leave_input_and_system_out(X, y, systems, inputs)
    np.testing.assert_allclose(scored.predictions, y, atol=1e-9)
    np.testing.assert_allclose(regression.fit(X, y).coefficients, [2.0, -1.0, -0.5, 3.0], atol=1e-9)
    collinear = np.column_stack([X[:, 0], 2 * X[:, 0]])
    assert np.isnan(regression.leave_input_and_system_out(collinear, y, systems, inputs).predictions).all()
    small = regression.leave_input_and_system_out(X[:4], y[:4], systems[:4], inputs[:4])   # one system: no rows
    assert np.isnan(small.predictions).all() and (small.n_train == 0).all()


def test_score_regression_stores_predictions_and_records_coefficients(db, tmp_path):
    _texts_dataset(db, tmp_path, "toy", 3)
    refused = run_cli(db, "score", "toy", "--metric", "regression", ok=False)
    assert refused.exit_code != 0 and "--human" in refused.output and "Traceback" not in refused.output
    refused = run_cli(db, "score", "toy", "--metric", "regression", "--human", "nosuch", ok=False)
    assert "not a human measure" in refused.output
    result = run_cli(db, "score", "toy", "--metric", "regression", "--human", "pyramid", "--no-input-stem",
                     "--no-input-stop", "--topic-cutoff", "2")
    assert "scored 1 measure(s)" in result.output
    name = "regression.input[cutoff=2,human=pyramid]"
    run_cli(db, "score", "toy", "--metric", "kl", "--metric", "cosine", "--metric", "topic", "--metric", "probability",
            "--metric", "js", "--js-n", "1", "--js-target", "document", "--no-input-stem", "--no-input-stop",
            "--topic-cutoff", "2")
    run_cli(db, "score", "toy", "--metric", "js", "--js-n", "1", "--js-target", "document", "--js-smoothing")
    with Store(db, read_only=True) as wh:
        options = json.loads(wh.sql("SELECT options FROM ingests WHERE options LIKE '%regression%' "
                                    "AND options LIKE '%coefficients%'")["options"][0])["regression"]
        frame = wh.sql("SELECT system, input, measure, value FROM cells WHERE dataset = 'toy'")
        direction = wh.sql("SELECT direction FROM measures WHERE name = ?", [name])["direction"][0]
    assert direction == "higher" and options["human"] == "pyramid" and len(options["features"]) == 10
    assert options["terms"] == ["(intercept)", *options["features"]]
    assert options["protocol"] == "leave-input-and-system-out" and options["folds"] == 30
    wide = frame.pivot_table(index=["system", "input"], columns="measure", values="value")
    X, y = wide[options["features"]].to_numpy(), wide["pyramid"].to_numpy()
    whole = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    np.testing.assert_allclose(options["coefficients"], whole, rtol=1e-6, atol=1e-9)
    systems, inputs = (wide.index.get_level_values(k).to_numpy() for k in ("system", "input"))
    train = (systems != "s2") & (inputs != "i4")
    b = np.linalg.lstsq(np.column_stack([np.ones(train.sum()), X[train]]), y[train], rcond=None)[0]
    row = np.flatnonzero((systems == "s2") & (inputs == "i4"))[0]
    np.testing.assert_allclose(wide[name].to_numpy()[row], b[0] + X[row] @ b[1:], rtol=1e-6)


def test_an_ill_conditioned_fold_is_lstsq_on_its_rows():
    """Nearly collinear features (the downdated normal equations' fallback path) still give each
    fold's lstsq."""
    X, y, systems, inputs = _grid(missing=0, seed=2)
    X[:, 1] = X[:, 0] + 1e-4 * np.random.default_rng(1).normal(size=len(y))
    scored = regression.leave_input_and_system_out(X, y, systems, inputs)
    for row in (0, 7, 29):
        train = regression.training_rows(systems, inputs, row)
        b = np.linalg.lstsq(np.column_stack([np.ones(train.sum()), X[train]]), y[train], rcond=None)[0]
        np.testing.assert_allclose(scored.predictions[row], b[0] + X[row] @ b[1:], rtol=1e-6)
        np.testing.assert_allclose(scored.coefficients[row], b, rtol=1e-5, atol=1e-6)


def _texts_dataset(db, tmp_path, name, seed, scale=1.0):
    """A dataset with texts, documents, a human 'pyramid' and a stored metric 'r2' (ROUGE-2's
    stand-in): 5 systems x 6 inputs."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(40)]
    docs = {f"i{k}": " ".join(rng.choice(words, 60)) for k in range(6)}
    lines, cells = [], []
    for s in range(5):
        for i, doc in docs.items():
            summary = " ".join(rng.choice(doc.split(), 8 + 2 * s)) + " " + " ".join(rng.choice(words, 3))
            lines.append(json.dumps({"instance_id": i, "summarizer_id": f"s{s}", "summary": {"text": [summary]},
                                     "references": [{"text": ["x y"]}], "documents": [{"text": [doc]}]}))
            q = scale * (s + rng.random())
            cells.append({"system": f"s{s}", "input": i, "measure": "pyramid", "value": q, "kind": "human"})
            cells.append({"system": f"s{s}", "input": i, "measure": "r2", "value": q + rng.normal(scale=0.5)})
    (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    pd.DataFrame(cells).to_csv(tmp_path / f"{name}.csv", index=False)
    run_cli(db, "ingest", "summaries", tmp_path / f"{name}.jsonl", "--dataset", name)
    run_cli(db, "ingest", "table", tmp_path / f"{name}.csv", "--dataset", name)


def test_a_stored_metric_beside_js_and_the_fit_applied_to_another_dataset(db, tmp_path):
    """Louis & Nenkova §4.3: JS + ROUGE-2 predicting pyramid, trained on one year and tested on
    the next: the recorded coefficients are lstsq's on [1, js, r2] of the training cells, and the
    other dataset's predictions b_0 + b . x of its own js and r2."""
    _texts_dataset(db, tmp_path, "tac08", 3)
    _texts_dataset(db, tmp_path, "tac09", 4, scale=2.0)
    setting = ["--human", "pyramid", "--predictor", "js", "--predictor", "r2"]
    run_cli(db, "score", "tac08", "--metric", "regression", *setting)
    run_cli(db, "score", "tac09", "--metric", "regression", *setting, "--trained-on", "tac08")
    for d in ("tac08", "tac09"):   # the JS feature itself, stored for the check
        run_cli(db, "score", d, "--metric", "js", "--js-n", "1", "--js-target", "document", "--js-stem", "--js-stop")
    with Store(db, read_only=True) as wh:
        frame = wh.sql("SELECT dataset, system, input, measure, value FROM cells")
        recorded = [json.loads(o)["regression"] for o in
                    wh.sql("SELECT options FROM ingests WHERE options LIKE '%\"regression\"%' ORDER BY ingest_id")
                    ["options"]]
    js = "js-1.input[stem,stop]"
    assert [r["features"] for r in recorded] == [[js, "r2"]] * 2
    name = "regression.input[stem,stop,cutoff=10,human=pyramid,predictors=js+r2]"
    wide = {d: f.pivot_table(index=["system", "input"], columns="measure", values="value")
            for d, f in frame.groupby("dataset")}
    train = wide["tac08"]
    X = np.column_stack([np.ones(len(train)), train[js], train["r2"]])
    b = np.linalg.lstsq(X, train["pyramid"].to_numpy(), rcond=None)[0]
    np.testing.assert_allclose(recorded[0]["coefficients"], b, rtol=1e-9)
    systems, inputs = (train.index.get_level_values(k).to_numpy() for k in ("system", "input"))
    fold = (systems != "s1") & (inputs != "i2")                            # one cell left out, by hand
    bf = np.linalg.lstsq(X[fold], train["pyramid"].to_numpy()[fold], rcond=None)[0]
    row = np.flatnonzero((systems == "s1") & (inputs == "i2"))[0]
    np.testing.assert_allclose(train[name].to_numpy()[row], X[row] @ bf, rtol=1e-9)
    test = wide["tac09"]
    applied = "regression.input[stem,stop,cutoff=10,human=pyramid,predictors=js+r2,trained-on=tac08]"
    np.testing.assert_allclose(test[applied], b[0] + b[1] * test[js] + b[2] * test["r2"], rtol=1e-9)
    assert recorded[1]["trained_on"] == "tac08" and recorded[1]["coefficients"] == recorded[0]["coefficients"]


def test_regression_settings_refused_in_one_line(db, tmp_path):
    from tests.conftest import digest

    _texts_dataset(db, tmp_path, "tac08", 3)
    _texts_dataset(db, tmp_path, "tac09", 4)
    before = digest(db)
    for args, words in ((["--trained-on", "tac09"], "--trained-on 'tac09' has no regression of pyramid on"),
                        (["--trained-on", "tac08"], "is the dataset scored"),
                        (["--predictor", "nope"], "--predictor 'nope': neither a model-free feature"),
                        (["--predictor", "pyramid"], "--predictor 'pyramid' is the regression's target")):
        out = run_cli(db, "score", "tac08", "--metric", "regression", "--human", "pyramid", *args, ok=False)
        assert out.exit_code != 0 and words in out.output and len(out.output.strip().splitlines()) == 1, out.output
    out = run_cli(db, "score", "tac08", "--metric", "js", "--predictor", "r2", ok=False)
    assert "add the metric regression" in out.output and len(out.output.strip().splitlines()) == 1
    assert digest(db) == before
