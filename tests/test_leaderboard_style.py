"""leaderboard --style (analyses/leaderboard_style.py, runs/votes/leaderboard_style.py): Chatbot Arena's
style control. The fit equals scikit-learn's unpenalised logistic regression on the same design
matrix; a winner decided by length alone gives a large length coefficient and equal controlled
ratings; without covariates the leaderboard is the uncontrolled one; votes lacking a covariate
are refused in one line, nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from metaeval import Store
from metaeval.analyses import leaderboard as lb
from metaeval.analyses import leaderboard_style as ls
from tests.conftest import digest, run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def sklearn_fit(a, b, y, Z, S, w=None):
    """Centred strengths and coefficients of scikit-learn's unpenalised logistic regression on the
    design [one-hot +1 a, -1 b (system 0's column dropped: identified), Z], a tie half a win each
    way (the vote twice, weight 1/2 as a win and 1/2 as a loss)."""
    from sklearn.linear_model import LogisticRegression

    n = len(a)
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    X = np.zeros((n, S))
    X[np.arange(n), a], X[np.arange(n), b] = 1.0, -1.0
    X = np.hstack([X[:, 1:], np.asarray(Z, dtype=float).reshape(n, -1)])
    Xd, yd, wd = np.vstack([X, X]), np.r_[np.ones(n), np.zeros(n)], np.r_[w * y, w * (1 - y)]
    keep = wd > 0
    model = LogisticRegression(C=np.inf, fit_intercept=False, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    model.fit(Xd[keep], yd[keep], sample_weight=wd[keep])
    theta = np.r_[0.0, model.coef_[0][:S - 1]]
    return theta - theta.mean(), model.coef_[0][S - 1:]


def synthetic(seed=1, n=1000, S=5, gamma=(0.8, -0.3), ties=0.1):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, S, n)
    b = (a + rng.integers(1, S, n)) % S
    Z = rng.normal(size=(n, len(gamma)))
    p = 1 / (1 + np.exp(-(np.linspace(-1, 1, S)[a] - np.linspace(-1, 1, S)[b] + Z @ np.asarray(gamma))))
    u = rng.random(n)
    y = np.where(u < ties, 0.5, (rng.random(n) < p).astype(float))
    return a, b, y, Z, S


def test_fit_equals_sklearn_unpenalised_logistic_regression():
    a, b, y, Z, S = synthetic()
    c = lb.Counted(a=a, b=b, y=y, w=np.ones(len(a)), n_systems=S)
    theta, gamma = ls.fit(c, Z)
    ref_theta, ref_gamma = sklearn_fit(a, b, y, Z, S)
    np.testing.assert_allclose(theta, ref_theta, atol=1e-6)
    np.testing.assert_allclose(gamma, ref_gamma, atol=1e-6)
    assert abs(theta.sum()) < 1e-12
    # a feature that never varies has no scale: undefined (NaN), never a number
    Zc, scale = ls.standardise(np.zeros((len(a), 1)), np.ones(len(a)))
    assert scale[0] == 0 and np.isnan(ls.fit(c, Zc)[0]).all()


def test_ridge_and_bootstrap_rounds_equal_scipy():
    """With a prior, the fit maximises -ridge/2 (||theta||^2 + ||gamma||^2) + the likelihood (scipy's
    BFGS on the same objective); each bootstrap round is the fit of its counts."""
    a, b, y, Z, S = synthetic(seed=2, n=600)
    c = lb.Counted(a=a, b=b, y=y, w=np.ones(len(a)), n_systems=S)
    ridge = 0.5

    def loss(beta):
        d = beta[a] - beta[b] + Z @ beta[S:]
        r = y - 1 / (1 + np.exp(-d))
        g = ridge * beta
        np.add.at(g, a, -r)
        np.add.at(g, b, r)
        g[S:] -= Z.T @ r
        return -np.sum(y * log_expit(d) + (1 - y) * log_expit(-d)) + ridge / 2 * beta @ beta, g

    ref = minimize(loss, np.zeros(S + Z.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-12}).x
    theta, gamma = ls.fit(c, Z, ridge=ridge)
    np.testing.assert_allclose(theta, ref[:S], atol=1e-6)
    np.testing.assert_allclose(gamma, ref[S:], atol=1e-6)
    W = lb.bootstrap_counts(c, 3, seed=7)
    T, G = ls.fit(c, Z, W)
    for r in range(3):
        t, g = ls.fit(lb.Counted(a=a, b=b, y=y, w=W[:, r], n_systems=S), Z)
        np.testing.assert_allclose(T[r], t, atol=1e-9)
        np.testing.assert_allclose(G[r], g, atol=1e-9)


def test_sandwich_equals_the_per_vote_computation():
    a, b, y, Z, S = synthetic(seed=3, n=400)
    c = lb.Counted(a=a, b=b, y=y, w=np.ones(len(a)), n_systems=S)
    theta, gamma = ls.fit(c, Z)
    cov = ls.sandwich(c, Z, theta, gamma)
    H, J = np.zeros((S + 2, S + 2)), np.zeros((S + 2, S + 2))
    for i in range(len(a)):                                  # brute force, vote by vote
        x = np.zeros(S + 2)
        x[a[i]], x[b[i]], x[S:] = 1, -1, Z[i]
        p = 1 / (1 + np.exp(-x @ np.r_[theta, gamma]))
        H += p * (1 - p) * np.outer(x, x)
        J += (y[i] - p) ** 2 * np.outer(x, x)
    np.testing.assert_allclose(cov, np.linalg.pinv(H) @ J @ np.linalg.pinv(H), rtol=1e-8, atol=1e-12)


def _count_by_lines(text):
    """Markdown counts by a line-by-line reading (an independent implementation of the rules)."""
    inside, headers, lists, bold = False, 0, 0, 0
    kept = []
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    for line in kept:
        stripped = line.lstrip(" \t")
        hashes = len(line) - len(line.lstrip("#"))
        headers += 1 <= hashes <= 6 and len(line) > hashes and line[hashes] in " \t"
        lists += bool(re.match(r"(\d+\.|[-*+])[ \t]", stripped))
        bold += len(re.findall(r"\*\*[^*]+\*\*", line)) + len(re.findall(r"__[^_]+__", line))
    return {"headers": headers, "lists": lists, "bold": bold}


def test_markdown_counts():
    text = ("# Title\n## Part\n####### not a header\n#not either\nSome **bold** and __also__ and **x** text.\n"
            "- one\n* two\n+ three\n  1. nested\n10. ten\n-not a list\n---\n```\n# code\n- code **b**\n```\nend")
    assert ls.markdown_counts(text) == {"headers": 2, "lists": 5, "bold": 3} == _count_by_lines(text)
    rng = np.random.default_rng(0)
    pieces = ["# h", "## h", "- item", "1. item", "**b** c", "__u__", "plain", "```", "x **y** z **w**", "   * s"]
    for _ in range(200):
        t = "\n".join(rng.choice(pieces, size=8))
        if t.count("```") % 2 == 0:
            assert ls.markdown_counts(t) == _count_by_lines(t), t


def _alpaca_design(path):
    """The design of an AlpacaEval file read here (each row as written: generator_1 first)."""
    frame = pd.read_csv(path)
    systems = sorted(set(frame["generator_1"]) | set(frame["generator_2"]))
    a = frame["generator_1"].map(systems.index).to_numpy()
    b = frame["generator_2"].map(systems.index).to_numpy()
    y = frame["preference"].map({1: 1.0, 2: 0.0, 1.5: 0.5}).to_numpy()
    z = (frame["length_1"] - frame["length_2"]) / (frame["length_1"] + frame["length_2"] + 1)
    z = z.to_numpy() / np.sqrt(np.mean(z.to_numpy() ** 2))
    return systems, a, b, y, z


@pytest.fixture
def alpaca_db(db):
    run_cli(db, "ingest", "preferences", EXAMPLES / "alpaca.csv", "--dataset", "alpaca", "--judge", "gpt4")
    return db


def test_stored_controlled_ratings_and_coefficient_equal_sklearn(alpaca_db):
    out = run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length",
                  "--scale", "logit", "--interval", "sandwich").output
    assert "controlled for length" in out and "Style coefficients" in out
    systems, a, b, y, z = _alpaca_design(EXAMPLES / "alpaca.csv")
    theta, gamma = sklearn_fit(a, b, y, z, len(systems))
    with Store(alpaca_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard WHERE style = 'length' ORDER BY system")
        coef = wh.sql("SELECT * FROM latest_leaderboard_style")
    assert rows["system"].tolist() == systems
    np.testing.assert_allclose(rows["rating"], theta, atol=1e-6)
    np.testing.assert_allclose(coef["coefficient"], gamma, atol=1e-6)
    assert coef["covariate"].tolist() == ["length"] and coef["feature"][0] == "ratio"
    assert (coef["lower"] < coef["coefficient"]).all() and (coef["coefficient"] < coef["upper"]).all()
    assert set(coef["run_id"]) == set(rows["run_id"])


def test_bootstrap_intervals_of_the_coefficients_come_from_the_rounds_of_the_ratings(alpaca_db):
    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length", "--k", "50",
            "--seed", "3")
    from metaeval.runs.votes import leaderboard_style as lstyle

    with Store(alpaca_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard WHERE style = 'length' ORDER BY system")
        coef = wh.sql("SELECT * FROM latest_leaderboard_style")
        systems, counted, fingerprint, _, cov = lstyle.design(wh, "alpaca", "gpt4", ("length",))
    T, G = ls.fit(counted, cov.Z, lb.bootstrap_counts(counted, 50, 3))
    lo, hi = np.percentile(G[:, 0], [2.5, 97.5])
    assert coef["lower"][0] == pytest.approx(lo, abs=1e-9) and coef["upper"][0] == pytest.approx(hi, abs=1e-9)
    np.testing.assert_allclose(rows["lower"], np.percentile(lb.elo(T), 2.5, axis=0), atol=1e-7)
    assert (rows["fingerprint"] == fingerprint).all() and coef["n_valid"][0] == 50
    before = digest(alpaca_db)                                    # up to date: nothing computed
    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length", "--k", "50",
            "--seed", "3")
    assert digest(alpaca_db) == before


def _length_only_votes(path, seed=0, n_inputs=300):
    """Four systems of equal strength whose outputs differ in length (system i about 100 (i + 1)
    characters); every pair on every input; the longer output wins with probability
    sigma(2 (l_a - l_b) / (l_a + l_b + 1) / 0.3)."""
    rng = np.random.default_rng(seed)
    systems = ["s1", "s2", "s3", "s4"]
    lines = ["instruction_id,generator_1,generator_2,preference,length_1,length_2"]
    lengths = {(s, i): int(rng.gamma(8, 100 * (k + 1) / 8)) + 1 for k, s in enumerate(systems)
               for i in range(n_inputs)}
    for i in range(n_inputs):
        for x in range(4):
            for y in range(x + 1, 4):
                la, lb_ = lengths[systems[x], i], lengths[systems[y], i]
                z = (la - lb_) / (la + lb_ + 1) / 0.3
                first = rng.random() < 1 / (1 + np.exp(-2 * z))
                lines.append(f"q{i},{systems[x]},{systems[y]},{1 if first else 2},{la},{lb_}")
    path.write_text("\n".join(lines) + "\n")


def test_a_winner_decided_by_length_alone(db, tmp_path):
    _length_only_votes(tmp_path / "votes.csv")
    run_cli(db, "ingest", "preferences", tmp_path / "votes.csv", "--dataset", "len", "--judge", "j")
    run_cli(db, "leaderboard", "--dataset", "len", "--judge", "j", "--interval", "sandwich")
    run_cli(db, "leaderboard", "--dataset", "len", "--judge", "j", "--interval", "sandwich", "--style", "length")
    with Store(db, read_only=True) as wh:
        plain = wh.sql("SELECT * FROM latest_leaderboard WHERE style = '' ORDER BY system")
        held = wh.sql("SELECT * FROM latest_leaderboard WHERE style = 'length' ORDER BY system")
        coef = wh.sql("SELECT * FROM latest_leaderboard_style")
    assert plain["rating"].is_monotonic_increasing and np.ptp(plain["rating"]) > 300   # longer wins
    assert coef["coefficient"][0] > 2.5 and coef["lower"][0] > 2
    assert np.ptp(held["rating"]) < 60                                                 # all close:
    assert ((held["lower"] < 1000) & (1000 < held["upper"])).all()                     # each interval holds
    assert held["upper"].min() > held["lower"].max()                                   # the truth, 1000


def test_without_covariates_the_leaderboard_is_the_uncontrolled_one(alpaca_db):
    """No style: the rows, parameters and fingerprint of the uncontrolled leaderboard, its ratings
    the plain Bradley-Terry fit exactly; a controlled run is kept beside it, not over it."""
    from metaeval.runs import Warehouse

    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--k", "40")
    with Store(alpaca_db, read_only=True) as wh:
        first = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system")
        params = json.loads(wh.sql("SELECT parameters FROM analysis_runs")["parameters"][0])
    assert "style" not in params and set(first["style"]) == {""}
    assert "style" not in json.loads(first["conventions"][0])
    frame = pd.read_csv(EXAMPLES / "alpaca.csv")
    systems = sorted(set(frame["generator_1"]) | set(frame["generator_2"]))
    c = lb.count(frame["generator_1"].map(systems.index), frame["generator_2"].map(systems.index),
                 frame["preference"].map({1: 1.0, 2: 0.0, 1.5: 0.5}), len(systems))
    assert first["rating"].tolist() == lb.elo(lb.fit(c)).tolist()                     # bit for bit
    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--k", "40", "--style", "length")
    with Warehouse(alpaca_db) as wh:
        again = wh.leaderboard("alpaca", judge="gpt4", k=40, style=())           # reused, unchanged
        both = wh.sql("SELECT DISTINCT style FROM latest_leaderboard ORDER BY style")["style"].tolist()
    again = again.sort_values("system")
    assert again["result_id"].tolist() == first["result_id"].tolist()
    assert again["rating"].tolist() == first["rating"].tolist()
    assert both == ["", "length"]


def test_votes_lacking_a_covariate_are_refused_in_one_line(alpaca_db, tmp_path):
    before = digest(alpaca_db)
    for style, words in (("bold", ["bold", "baseline", "q000", "ingest summaries"]),
                         ("nosuch", ["nosuch", "attributes"])):
        result = run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", style, ok=False)
        assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
        assert all(w in result.output for w in words) and "--style" in result.output
    result = run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length",
                     "--ties", "davidson", ok=False)
    assert result.exit_code != 0 and "--ties" in result.output
    assert digest(alpaca_db) == before
    # one output without its length: refused, naming it
    path = tmp_path / "more.csv"
    path.write_text("instruction_id,generator_1,generator_2,preference\nq999,baseline,weak,1\n")
    run_cli(alpaca_db, "ingest", "preferences", path, "--dataset", "alpaca", "--judge", "gpt4", "--allow-new")
    before = digest(alpaca_db)
    result = run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length", ok=False)
    assert "1 of 241 votes" in result.output and "q999" in result.output and "output_length" in result.output
    assert len(result.output.strip().splitlines()) == 1 and digest(alpaca_db) == before


def _texts_and_votes(tmp_path, seed=0, n_inputs=40):
    """Summaries (with markdown) and human votes of three systems: the texts, the votes file."""
    rng = np.random.default_rng(seed)
    styles = {"plain": (0, 0, 0), "lists": (0, 4, 0), "fancy": (2, 3, 3)}
    texts, lines = {}, []
    for i in range(n_inputs):
        for s, (h, l, bo) in styles.items():
            parts = [f"# H{j}" for j in range(int(rng.integers(0, h + 1)))]
            parts += [f"- item {j}" for j in range(int(rng.integers(0, l + 1)))]
            parts += [f"some **bold {j}** words" for j in range(int(rng.integers(0, bo + 1)))]
            parts += ["text " * int(rng.integers(5, 40))]
            texts[s, f"d{i}"] = "\n".join(parts)
            lines.append(json.dumps({"instance_id": f"d{i}", "summarizer_id": s, "summarizer_type": "peer",
                                     "summary": {"text": texts[s, f"d{i}"]}}))
    (tmp_path / "texts.jsonl").write_text("\n".join(lines) + "\n")
    votes = ["input,system_a,system_b,judge,order,winner,kind"]
    names = list(styles)
    for i in range(n_inputs):
        for x in range(3):
            for y in range(x + 1, 3):
                for judge in ("h1", "h2"):
                    winner = rng.choice(["a", "b", "tie"], p=[0.45, 0.45, 0.1])
                    votes.append(f"d{i},{names[x]},{names[y]},{judge},ab,{winner},human")
    (tmp_path / "votes.csv").write_text("\n".join(votes) + "\n")
    return texts


def test_markdown_covariates_from_the_stored_texts_equal_sklearn(db, tmp_path):
    texts = _texts_and_votes(tmp_path)
    run_cli(db, "ingest", "summaries", tmp_path / "texts.jsonl", "--dataset", "md")
    run_cli(db, "ingest", "preferences", tmp_path / "votes.csv", "--dataset", "md")
    out = run_cli(db, "leaderboard", "--dataset", "md", "--style", "bold", "--style", "headers", "--style", "lists",
                  "--style", "length", "--scale", "logit", "--interval", "sandwich").output
    assert "controlled for length, headers, lists, bold" in out
    votes = pd.read_csv(tmp_path / "votes.csv")
    systems = sorted(set(votes["system_a"]) | set(votes["system_b"]))
    names = ["length", "headers", "lists", "bold"]

    def value(s, i, name):
        return len(texts[s, i]) if name == "length" else _count_by_lines(texts[s, i])[name]

    Z = np.column_stack([[(value(r.system_a, r.input, n) - value(r.system_b, r.input, n))
                          / (value(r.system_a, r.input, n) + value(r.system_b, r.input, n) + 1)
                          for r in votes.itertuples()] for n in names])
    Z /= np.sqrt(np.mean(Z ** 2, axis=0))
    y = votes["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    theta, gamma = sklearn_fit(votes["system_a"].map(systems.index).to_numpy(),
                               votes["system_b"].map(systems.index).to_numpy(), y, Z, len(systems))
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system")
        coef = wh.sql("SELECT * FROM latest_leaderboard_style ORDER BY result_id")
    np.testing.assert_allclose(rows["rating"], theta, atol=1e-6)
    assert coef["covariate"].tolist() == names and set(coef["style"]) == {"length,headers,lists,bold"}
    np.testing.assert_allclose(coef["coefficient"], gamma, atol=1e-6)
    assert coef["source"][0].startswith("attribute output_length, else") and coef["source"][1] == "stored texts"


def test_a_numeric_attribute_is_a_covariate(alpaca_db, tmp_path):
    frame = pd.read_csv(EXAMPLES / "alpaca.csv")
    cells = pd.concat([frame[["generator_1", "instruction_id", "length_1"]].set_axis(["system", "input", "value"],
                                                                                   axis=1),
                       frame[["generator_2", "instruction_id", "length_2"]].set_axis(["system", "input", "value"],
                                                                                   axis=1)]).drop_duplicates()
    cells.assign(attribute="words", value=cells["value"] // 5).to_csv(tmp_path / "a.csv", index=False)
    run_cli(alpaca_db, "ingest", "attributes", tmp_path / "a.csv", "--dataset", "alpaca")
    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "words", "--scale",
            "logit", "--interval", "sandwich")
    systems, a, b, y, _ = _alpaca_design(EXAMPLES / "alpaca.csv")
    z = (frame["length_1"] // 5 - frame["length_2"] // 5).to_numpy(dtype=float)
    theta, gamma = sklearn_fit(a, b, y, z / np.sqrt(np.mean(z ** 2)), len(systems))
    with Store(alpaca_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard WHERE style = 'words' ORDER BY system")
        coef = wh.sql("SELECT * FROM latest_leaderboard_style")
    np.testing.assert_allclose(rows["rating"], theta, atol=1e-6)
    np.testing.assert_allclose(coef["coefficient"], gamma, atol=1e-6)
    assert coef["feature"][0] == "difference" and coef["source"][0] == "attribute words"


def test_a_schema_6_warehouse_is_upgraded_keeping_its_leaderboard(alpaca_db):
    from metaeval.connection import duckdb_connect

    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--k", "40")
    with Store(alpaca_db, read_only=True) as wh:
        before = wh.sql("SELECT * EXCLUDE (style) FROM leaderboard ORDER BY result_id")
    with duckdb_connect(alpaca_db) as con:
        con.execute("DROP VIEW latest_leaderboard")
        con.execute("ALTER TABLE leaderboard DROP COLUMN style")
        con.execute("UPDATE schema_info SET value = '6' WHERE key = 'version'")
    assert "from schema 6 to" in run_cli(alpaca_db, "init").output
    with Store(alpaca_db, read_only=True) as wh:
        after = wh.sql("SELECT * FROM leaderboard ORDER BY result_id")
    assert set(after["style"]) == {""}
    pd.testing.assert_frame_equal(after.drop(columns="style"), before)
    before = digest(alpaca_db)                                    # still up to date
    run_cli(alpaca_db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--k", "40")
    assert digest(alpaca_db) == before


def test_the_bootstrap_on_worker_processes_equals_the_local_run(alpaca_db, tmp_path):
    import shutil

    other = tmp_path / "other.duckdb"
    shutil.copy(alpaca_db, other)
    frames = []
    for db, jobs in ((alpaca_db, "1"), (other, "2")):
        run_cli(db, "leaderboard", "--dataset", "alpaca", "--judge", "gpt4", "--style", "length", "--k", "60",
                "--jobs", jobs)
        with Store(db, read_only=True) as wh:
            frames.append((wh.sql("SELECT * FROM latest_leaderboard ORDER BY system"),
                           wh.sql("SELECT * FROM latest_leaderboard_style")))
    (local, local_coef), (pooled, pooled_coef) = frames
    for column in ("rating", "lower", "upper"):
        np.testing.assert_allclose(pooled[column], local[column], atol=1e-7)
        np.testing.assert_allclose(pooled_coef[column if column != "rating" else "coefficient"],
                                   local_coef[column if column != "rating" else "coefficient"], atol=1e-9)
