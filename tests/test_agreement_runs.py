"""``metaeval agreement`` over the warehouse: persisted rows equal the pure functions,
incremental, human-free, honest about missing documents."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import Store, WarehouseError
from metaeval.analyses import agreement
from metaeval.present import agreement_plots
from metaeval.runs.agreement import score_ranges as agreement_runs
from tests.conftest import run_cli as _cli
from tests.conftest import write_jsonl

METRICS = ["rouge-1.recall", "rouge-2.recall", "bertscore.recall", "js-2"]
VOLATILE = ["result_id", "run_id"]


def _agreement(db, dataset, metrics, *extra):
    return _cli(db, "agreement", "--dataset", dataset, *[a for m in metrics for a in ("--metric", m)], *extra)


def _oriented(wh, dataset, metrics):
    """The metrics' matrices, higher is better, and the input labels."""
    m = wh.matrix(dataset, metrics)
    directions = wh.measures(dataset).set_index("measure")["direction"]
    return {name: (-m[name] if directions[name] == "lower" else m[name]) for name in metrics}, list(m.inputs)


def test_realsumm_rows_equal_pure_functions(warehouse_copy):
    out = _agreement(warehouse_copy, "realsumm", METRICS, "--significant-only").output
    assert "no source documents" in out and "only ease of summarisation" in out
    with Store(warehouse_copy, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_score_range_agreement WHERE dataset = 'realsumm'")
        scores, inputs = _oriented(wh, "realsumm", METRICS)
        props = wh.sql("SELECT * FROM latest_input_properties WHERE dataset = 'realsumm'")
        by_property = wh.sql("SELECT * FROM latest_property_agreement WHERE dataset = 'realsumm'")
        runs = wh.sql("SELECT * FROM analysis_runs")
    # shape and ranges
    assert len(rows) == 6 * len(agreement.BINS)
    assert set(rows["bin"]) == set(agreement.BINS) and (rows["metric_a"] < rows["metric_b"]).all()
    assert rows["tau"].between(-1, 1).all() and rows["disagreement"].between(0, 1).all()
    assert (rows["n_tau"] + rows["n_undefined"] + rows["n_nonsignificant"] == 100).all()
    assert (rows[["n_systems", "n_inputs"]] == [24, 100]).all().all()
    assert (rows["consensus"] == json.dumps(sorted(METRICS))).all()
    conventions = json.loads(rows["conventions"].iloc[0])
    assert conventions["significant_only"] is True and "Bhandari" in conventions["reference"]
    # persisted = pure function on the same matrices
    expected = agreement.score_range_agreement({m: scores[m] for m in sorted(METRICS)}, significant_only=True)
    merged = rows.merge(expected, on=["metric_a", "metric_b", "bin"], suffixes=("", "_pure"))
    assert len(merged) == len(rows)
    for column in agreement.ROW_FIELDS[1:]:
        np.testing.assert_allclose(merged[column].astype(float), merged[f"{column}_pure"].astype(float),
                                   rtol=1e-12, atol=0, equal_nan=True, err_msg=column)
    # cumulative L+M+T has the most pairs, T is in both settings
    pairs = rows.pivot_table(index=["metric_a", "metric_b"], columns="bin", values="pairs")
    assert (pairs["L+M+T"] == pairs[["L", "M", "T"]].sum(axis=1)).all()
    # properties: ease only (no documents), and tau against it
    assert set(props["property"]) == {"ease"} and len(props) == 100
    stack = np.stack([scores[m] for m in METRICS])
    ease = dict(zip(inputs, agreement.ease_of_summarization(stack)))
    assert all(props.set_index("input")["value"][i] == pytest.approx(v) for i, v in ease.items())
    assert set(by_property["property"]) == {"ease"} and len(by_property) == 6
    r = by_property[(by_property.metric_a == "bertscore.recall") & (by_property.metric_b == "js-2")].iloc[0]
    positions = agreement.range_positions(agreement.consensus_scores(stack))
    k = agreement.kendall_per_input(scores["bertscore.recall"], scores["js-2"], agreement.in_bin(positions, "L+M+T"))
    pure = agreement.property_agreement(k.tau, k.pvalue, [ease[i] for i in inputs],
                                        significant_only=True)
    assert (r.n_used, r.pearson, r.spearman) == (pure.n_inputs, pytest.approx(pure.pearson), pytest.approx(pure.spearman))
    # provenance: one run per step, human-free parameters
    assert list(runs["command"]) == ["agreement", "agreement-properties", "agreement-by-property"]
    params = json.loads(runs["parameters"].iloc[0])
    assert "human" not in params and params["significant_only"] is True and params["normalisation"] == "input"


def test_repeat_computes_nothing_and_a_new_metric_changes_the_consensus(warehouse_copy):
    _agreement(warehouse_copy, "realsumm", METRICS[:3])
    again = _agreement(warehouse_copy, "realsumm", METRICS[:3]).output
    assert "nothing computed" in again
    with Store(warehouse_copy, read_only=True) as wh:
        assert len(wh.sql("SELECT * FROM analysis_runs")) == 3
        first = wh.sql("SELECT * FROM score_range_agreement").drop(columns=VOLATILE)
    # a fourth metric changes every pair's consensus: new rows under the new consensus, old ones kept
    out = _agreement(warehouse_copy, "realsumm", METRICS).output
    assert "score_range_agreement: 30 results, run" in out and "computed 30" in out
    with Store(warehouse_copy, read_only=True) as wh:
        latest = wh.sql("SELECT consensus, count(*) AS n FROM latest_score_range_agreement GROUP BY consensus")
        assert sorted(latest["n"]) == [15, 30]
    # going back to the three metrics (or to another alpha and back) finds everything stored
    assert "nothing computed" in _agreement(warehouse_copy, "realsumm", METRICS[:3]).output
    _agreement(warehouse_copy, "realsumm", METRICS[:3], "--alpha", "0.1")
    assert "nothing computed" in _agreement(warehouse_copy, "realsumm", METRICS[:3]).output
    # --force recomputes identical numbers
    _agreement(warehouse_copy, "realsumm", METRICS[:3], "--force")
    with Store(warehouse_copy, read_only=True) as wh:
        forced = wh.sql("SELECT * FROM latest_score_range_agreement WHERE consensus = ? AND alpha = 0.05",
                        [json.dumps(sorted(METRICS[:3]))]).drop(columns=VOLATILE)
    key = ["metric_a", "metric_b", "bin"]
    pd.testing.assert_frame_equal(forced.sort_values(key).reset_index(drop=True),
                                  first.sort_values(key).reset_index(drop=True))


def test_results_export_and_errors(warehouse_copy, tmp_path):
    _agreement(warehouse_copy, "realsumm", METRICS[:2], "--normalisation", "dataset")
    shown = _cli(warehouse_copy, "results", "score_range_agreement", "--dataset", "realsumm").output
    assert "L+M+T" in shown and "dataset" in shown
    out = tmp_path / "props.csv"
    _cli(warehouse_copy, "export", "input_properties", "--format", "csv", "--out", out, "--latest")
    assert len(pd.read_csv(out)) == 100
    result = _cli(warehouse_copy, "agreement", "--dataset", "realsumm", "--metric", "js-2", ok=False)
    assert result.exit_code != 0 and "at least two metrics" in result.output
    result = _cli(warehouse_copy, "agreement", "--dataset", "realsumm", "--metric", "nope*", ok=False)
    assert "matches no automatic measure" in result.output


def test_text_properties_with_documents(db):
    """A small dataset with source documents: abstractiveness and coverage are stored and equal
    the pure functions on the warehouse's tokens."""
    rng = np.random.default_rng(0)
    document = {"0": ["the cat sat on the mat .", "a dog barked loudly ."],
                "1": ["markets fell sharply on monday .", "investors were worried ."]}
    reference = {"0": ["the cat sat on a mat ."], "1": ["stocks dropped as investors worried ."]}
    lines, cells = [], []
    for s in range(5):
        for i in ("0", "1"):
            lines.append({"instance_id": i, "summarizer_id": f"s{s}", "summarizer_type": "peer",
                          "summary": {"text": document[i][:1]}, "references": [{"summarizer_id": "ref", "text": reference[i]}],
                          "documents": [{"text": document[i]}]})
            cells += [{"system": f"s{s}", "input": i, "measure": m, "value": float(rng.random())} for m in ("m1", "m2", "m3")]
    summaries = write_jsonl(db.parent / "summaries.jsonl", lines)
    table = db.parent / "scores.csv"
    pd.DataFrame(cells).to_csv(table, index=False)
    _cli(db, "ingest", "table", table, "--dataset", "toy")
    _cli(db, "ingest", "summaries", summaries, "--dataset", "toy")
    out = _cli(db, "agreement", "--dataset", "toy").output
    assert "note:" not in out
    with Store(db, read_only=True) as wh:
        props = wh.sql("SELECT input, property, value FROM latest_input_properties WHERE property <> 'ease'")
        by_property = wh.sql("SELECT DISTINCT property FROM latest_property_agreement")
    value = props.set_index(["input", "property"])["value"]
    tokens = lambda sentences: agreement_runs.normalize_words("\n".join(sentences))
    assert value[("0", "coverage")] == pytest.approx(agreement.coverage(tokens(document["0"]), tokens(reference["0"])))
    assert value[("1", "abstractiveness")] == pytest.approx(3 / 5)   # stocks, dropped, as: not in the document
    assert set(by_property["property"]) == {"ease", "abstractiveness", "coverage"}
    assert "nothing computed" in _cli(db, "agreement", "--dataset", "toy").output


def test_plotting_data(warehouse_copy):
    _agreement(warehouse_copy, "realsumm", METRICS)
    with Store(warehouse_copy, read_only=True) as wh:
        scope = agreement_runs.resolve(wh, "realsumm", METRICS)
        rows = agreement_runs.latest_rows(wh, scope)
        table = agreement.tau_matrix(rows)
        series = agreement_runs.tau_vs_property(wh, scope, "js-2", "rouge-2.recall", "ease", window=10)
        with pytest.raises(WarehouseError, match=r"run `wh\.agreement\(dataset='realsumm', metrics=\[.*\]\)` first"):
            agreement_runs.tau_vs_property(wh, scope, "js-2", "rouge-2.recall", "coverage")
    assert table.shape == (3 * 3, 3)
    assert series["value"].is_monotonic_increasing and len(series) <= 100
    assert series["tau_avg"].iloc[9] == pytest.approx(series["tau"].iloc[:10].mean())
    # figures: one grey line per pair, then the mean over pairs
    fig = agreement_plots.tau_by_bin(rows)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 6 + 1 + 1                      # pairs, mean, the zero line
    np.testing.assert_allclose(lines[6].get_ydata(),
                               rows.groupby("bin")["tau"].mean().reindex(list(agreement.NON_CUMULATIVE)))
    assert agreement_plots.disagreement_by_bin(rows).axes[0].get_lines()[-1].get_linestyle() == "--"
    assert len(agreement_plots.tau_vs_property(series, "ease").axes[0].collections[0].get_offsets()) == len(series)


def _fake_rows(metrics, tau=lambda a, b, bin: 0.1, **setting):
    """score_range_agreement rows of one setting for every pair of ``metrics`` (sorted) and bin."""
    base = {"dataset": "d", "consensus": json.dumps(sorted(metrics)), "normalisation": "input", "alpha": 0.05,
            "significant_only": False, **setting}
    return pd.DataFrame([{**base, "metric_a": a, "metric_b": b, "bin": bin, "tau": tau(a, b, bin)}
                         for i, a in enumerate(sorted(metrics)) for b in sorted(metrics)[i + 1:]
                         for bin in agreement.BINS])


def _cell_texts(fig):
    ax = fig.axes[0]
    rows, cols = [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.get_xticklabels()]
    return pd.DataFrame(np.array([t.get_text() for t in ax.texts]).reshape(len(rows), len(cols)), rows, cols)


def test_tau_heatmap_cells_and_settings():
    """The heatmap's cells: one row per pair and the mean over pairs (NaN skipped, "n/a" drawn);
    beyond MAX_HEATMAP_PAIRS pairs one row per metric; rows of several settings are refused."""
    taus = {("a", "b"): [0.1, -0.2, 0.3, 0.6, 0.5], ("a", "c"): [0.3, np.nan, 0.1, 0.7, 0.4],
            ("b", "c"): [-0.5, 0.0, 0.2, 0.2, 0.1]}
    rows = _fake_rows("abc", lambda a, b, bin: taus[(a, b)][agreement.BINS.index(bin)])
    cells = agreement_plots.tau_heatmap_table(rows)
    assert list(cells.columns) == ["L", "M", "T", "L+M+T", "M+T"] == list(agreement_plots.HEATMAP_BINS)
    assert list(cells.index) == ["a vs b", "a vs c", "b vs c", "mean over 3 pairs"]
    np.testing.assert_allclose(cells.loc["mean over 3 pairs"], [-0.1 / 3, -0.1, 0.2, 0.5, 1 / 3])
    shown = _cell_texts(agreement_plots.tau_heatmap(rows, "title"))
    assert shown.loc["a vs c", "M"] == "n/a" and shown.loc["b vs c", "L"] == "-0.50"
    assert list(shown.loc["mean over 3 pairs"]) == ["-0.03", "-0.10", "0.20", "0.50", "0.33"]
    # many metrics: one row per metric (the mean over its pairs), then all pairs
    metrics = [f"m{i:02d}" for i in range(11)]
    rows = _fake_rows(metrics, lambda a, b, bin: (int(a[1:]) + int(b[1:])) / 100)
    assert len(rows) // 5 == 55 > agreement_plots.MAX_HEATMAP_PAIRS
    cells = agreement_plots.tau_heatmap_table(rows)
    assert len(cells) == 12 and cells.index[0] == "m00 (mean of 10 pairs)"
    assert cells.loc["m00 (mean of 10 pairs)", "T"] == pytest.approx(sum(range(1, 11)) / 1000)
    assert cells.loc["mean over 55 pairs", "L"] == pytest.approx(0.1)
    assert len(agreement_plots.tau_heatmap(rows).axes[0].texts) == 12 * 5
    # never a mix of settings, never a key twice
    one = _fake_rows("abc")
    for other in (dict(alpha=0.1), dict(significant_only=True), dict(normalisation="dataset")):
        with pytest.raises(ValueError, match="mix settings"):
            agreement_plots.tau_heatmap(pd.concat([one, _fake_rows("abc", **other)]))
    with pytest.raises(ValueError, match="mix settings"):
        agreement_plots.tau_heatmap(pd.concat([one, _fake_rows("abcd")]))          # another consensus
    with pytest.raises(ValueError, match="several rows"):
        agreement_plots.tau_heatmap(pd.concat([one, one]))


def test_tau_vs_property_pairs_figure():
    series = {("a", "b"): agreement.property_series(np.linspace(-0.2, 0.8, 20), np.arange(20.0), window=5),
              ("a", "c"): agreement.property_series([np.nan] * 4, np.arange(4.0))}
    stored = pd.DataFrame({"dataset": "d", "consensus": '["a", "b", "c"]', "alpha": 0.05, "significant_only": False,
                           "property": "coverage", "metric_a": "a", "metric_b": ["b", "c"], "n_used": [20, 0],
                           "pearson": [0.97, np.nan], "spearman": [1.0, np.nan]})
    fig = agreement_plots.tau_vs_property_pairs(series, "coverage", stored, "setting")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2 and panels[0].get_title() == "a vs b\nPearson 0.97, Spearman 1.00, n = 20"
    assert panels[1].get_title().endswith("Pearson n/a, Spearman n/a, n = 0")
    assert len(panels[0].collections[0].get_offsets()) == 20 and panels[0].get_xlabel() == "coverage"
    np.testing.assert_allclose(panels[0].get_lines()[0].get_ydata()[4:], series[("a", "b")]["tau_avg"][4:])
    assert "no input" in panels[1].texts[0].get_text()
    with pytest.raises(ValueError, match="stored rows are of"):
        agreement_plots.tau_vs_property_pairs(series, "ease", stored)
    with pytest.raises(ValueError, match="mix settings"):
        agreement_plots.tau_vs_property_pairs(series, "coverage", stored.assign(alpha=[0.05, 0.1]))
    with pytest.raises(ValueError, match="no metric pairs"):
        agreement_plots.tau_vs_property_pairs({}, "ease")


def test_heatmap_of_realsumm_rows_shows_the_tau_tables(warehouse_copy):
    """On REALSumm, the heatmap's cells are the paper's Tables 1-2 (agreement.tau_matrix) values."""
    _agreement(warehouse_copy, "realsumm", METRICS, "--significant-only")
    with Store(warehouse_copy, read_only=True) as wh:
        rows = agreement_runs.latest_rows(wh, agreement_runs.resolve(wh, "realsumm", METRICS), significant_only=True)
    shown = _cell_texts(agreement_plots.tau_heatmap(rows))
    assert len(shown) == 6 + 1
    for setting in ("non-cumulative", "cumulative"):
        for (a, bin), values in agreement.tau_matrix(rows, setting).iterrows():
            for b, tau in values.dropna().items():
                assert shown.loc[f"{a} vs {b}", bin] == f"{tau:.2f}"
