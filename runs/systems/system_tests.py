"""``metaeval system-tests``: significance tests between every pair of systems under one measure,
persisted (Graham 2015, section 5 and Fig. 4; issue 33 item 12).

The family is declared once, :class:`SystemTests` (runs/engine/families.py's registry: its options,
table, computation and presentation); :func:`run_system_tests` is its computation as a plain
function. For the measure's N systems x M inputs matrix (a lower-is-better measure negated;
with ``where`` only the cells of that subset, systems without one left out), each method's
tests of every pair of systems on the inputs both have, corrected as one family, and with
``shapiro`` each system's Shapiro-Wilk test (:mod:`metaeval.analyses.system_tests` holds the
statistics). Rows go to ``system_tests`` under one run (a row of ``analysis_runs`` with the
parameters, seed and data fingerprint); every check and computation is made before that run is
written, and the same command on the same cells computes nothing. A system-level measure (a
corpus BLEU) is tested by the randomised methods only, from its stored BLEU statistics
(:func:`metaeval.analyses.system_tests.corpus_pair_tests`).

This module imports only the registry at load time (the command line reads every family's
options when it starts); numpy, pandas, scipy and the statistics are imported inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, ALTERNATIVE, CORRECTION, DATASET, FORCE, K, RESAMPLE_CLUSTERS, SEED,
                                          SYSTEM_TYPE, WHERE, Option)

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store

COMMAND = "system-tests"
TABLE = "system_tests"
_ANALYSIS = "metaeval.analyses.system_tests:"

MEASURE = Option("measure", required=True, metavar="MEASURE",
                 help="The measure whose scores are compared (automatic or human; a human one averaged over "
                      "annotators per cell).")
METHODS = Option("methods", default=("t-test",), kind="choice", choices=_ANALYSIS + "METHODS", multiple=True,
                 flag="--method", help="Test(s) between two systems: paired t-test, Wilcoxon signed-rank, "
                                       "Wilcoxon rank-sum (unpaired), paired bootstrap, approximate randomization. "
                                       "Repeatable; each method's pairs are one corrected family.")
SHAPIRO = Option("shapiro", default=False, kind="flag",
                 help="Also test each system's scores for normality (Shapiro-Wilk), as Graham (2015) does before "
                      "the t-test.")
SYSTEM_ALTERNATIVE = ALTERNATIVE.but(help="H1: the two systems differ (two-sided: each unordered pair once, the "
                                          "sign says which is better), or system_a is better (greater) or worse "
                                          "(less): every ordered pair.")
CORRECTION_GROUP = Option("correction_group", default="all", kind="choice", choices=_ANALYSIS + "CORRECTION_GROUPS",
                          help="Family of the correction: every pair of a method (all), or each system_a's pairs "
                               "(system; one-sided alternatives).")


@register
class SystemTests(Family):
    """Significance tests between every pair of systems under one measure (Graham 2015, Fig. 4).

    On the inputs both systems have: paired t-test, Wilcoxon signed-rank, Wilcoxon rank-sum,
    paired bootstrap, approximate randomization; each method's pairs one corrected family. Prints
    the tests, each method's matrix (row significantly better than column) and the systems not
    significantly outperformed by any other."""

    name = COMMAND
    topic = "systems"

    headline = "Significance tests between every pair of systems under one measure."
    summary = "Significance tests between every pair of systems under one measure (Graham 2015, Fig. 4)."
    tables = (TABLE,)
    tests_table = TABLE
    options = (DATASET, MEASURE, METHODS, SHAPIRO, K, ALPHA, SEED, SYSTEM_ALTERNATIVE, CORRECTION, CORRECTION_GROUP,
               WHERE, SYSTEM_TYPE, FORCE,
               RESAMPLE_CLUSTERS.but(help="bootstrap and randomization: resample whole clusters of inputs, the values "
                                          "of the input attribute ATTR (e.g. the document of each segment): the "
                                          "bootstrap draws clusters, the randomization swaps a cluster's inputs "
                                          "together. In the rows' conventions and fingerprint."))

    def compute(self, wh, **params) -> SystemTestsOutcome:
        return run_system_tests(wh, **params)

    def present(self, outcome: SystemTestsOutcome, fmt: str) -> str:
        return present(outcome, fmt)

    def section(self, ctx):
        return report_section(ctx.wh, ctx.dataset)


@dataclass(frozen=True)
class SystemTestsOutcome:
    """What :func:`run_system_tests` did: its run (None: up to date, nothing computed), the latest
    rows of its setting, the systems in the dataset's order, and per method the systems not
    significantly outperformed (None: the family cannot resolve), those undetermined (an
    undefined test), the one-line note of a family that cannot resolve, and each system's mean
    score over its inputs (oriented: higher is better)."""

    run_id: int | None
    rows: pd.DataFrame
    systems: tuple[str, ...]
    not_outperformed: dict[str, list[str] | None]
    undetermined: dict[str, list[str]]
    notes: dict[str, str | None]
    means: dict[str, float]


def _check(wh: Store, dataset: str, measure: str, methods, k, alpha, seed, alternative, correction,
           correction_group, shapiro: bool = False, resample_clusters: str | None = None) -> tuple[str, ...]:
    """Every parameter checked before anything is read or written; the methods, deduplicated."""
    from metaeval.analyses import system_tests as st
    from metaeval.analyses.stats import vocabulary
    from metaeval.analyses.stats.validation import K_MAX
    from metaeval.runs.engine import parameters

    wh.require_dataset(dataset)
    wh.require_measures(dataset, [measure])
    from metaeval.runs.engine import system_level

    methods = (methods,) if isinstance(methods, str) else tuple(dict.fromkeys(methods or ()))
    if measure in system_level.measures(wh, dataset):   # a corpus BLEU: only randomised tests (Graham 2015)
        if closed := [m for m in methods if m not in st.RESAMPLING_METHODS]:
            raise WarehouseError(Message(f"{measure!r} is a system-level measure (a corpus BLEU, no value per input): ",
                                         Argument("methods", closed[0]), " pairs per-input values; choose ",
                                         Argument("methods", list(st.RESAMPLING_METHODS))))
        if shapiro:
            raise WarehouseError(Message(f"{measure!r} is a system-level measure (a corpus BLEU, no value per input): "
                                         "no scores to test for normality; leave out ", Argument("shapiro", True)))
    if not methods:
        raise WarehouseError(Message("give one or more ", Argument("methods", placeholder="METHOD"),
                                     f": {', '.join(st.METHODS)}"))
    for name, values, valid in (("methods", methods, st.METHODS), ("alternative", (alternative,), vocabulary.ALTERNATIVES),
                                ("correction", (correction,), vocabulary.CORRECTIONS),
                                ("correction_group", (correction_group,), st.CORRECTION_GROUPS)):
        for v in values:
            if v not in valid:
                raise WarehouseError(Message("unknown ", Argument(name, v), f"; choose from {', '.join(valid)}"))
    if correction_group == "system" and alternative == "two-sided":
        raise WarehouseError(Message(Argument("correction_group", "system"), " needs a one-sided ",
                                     Argument("alternative"), " (greater or less): every ordered pair is tested"))
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise WarehouseError(Message(Argument("alpha", alpha), " must be a number with 0 < alpha < 1"))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise WarehouseError(Message(Argument("seed", seed), " must be a non-negative integer"))
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= K_MAX:
        raise WarehouseError(Message(Argument("k", k), f" must be an integer from 1 to {K_MAX:,}"))
    if any(m in st.RESAMPLING_METHODS for m in methods):
        parameters.check_k(k, alpha, "test")
    if resample_clusters is not None:
        from metaeval.runs.engine import clusters

        if closed := [m for m in methods if m not in st.RESAMPLING_METHODS]:
            clusters.refuse_with(resample_clusters, Argument("methods", closed[0]),
                                 " (it treats the inputs as independent); choose ",
                                 Argument("methods", list(st.RESAMPLING_METHODS)))
        if measure in system_level.measures(wh, dataset):
            clusters.refuse_with(resample_clusters, f"the system-level measure {measure!r} (its statistics are "
                                 "resampled per input, not per cluster)")
    return methods


def _load(wh: Store, dataset: str, measure: str, where, resample_clusters: str | None = None
          ) -> tuple[Any, tuple[str, ...], str, str]:
    """(the oriented N x M matrix of the systems with a cell in the subset, their names, the subset
    label, the fingerprint of the cells: with ``resample_clusters``, of the inputs' clusters too,
    whose labels the last item then is)."""
    import numpy as np

    from metaeval.runs.engine import selection

    where = selection.parse_where(where)
    m = wh.matrix(dataset, measure)
    kinds = wh.measure_kinds(dataset)
    direction = dict(zip(kinds["measure"], kinds["direction"]))[measure]
    A = -m[measure] if direction == "lower" else m[measure]
    keep = wh.attribute_mask(dataset, where, m.systems, m.inputs)   # (and the systems' types: reference, ... out)
    if not keep.all():
        if not keep.any():
            raise WarehouseError(Message(f"no cell of dataset {dataset!r} is in the subset "
                                         f"{selection.subset_label(where)}; choose another ", Argument("where")))
        A = np.where(keep, A, np.nan)
    label = selection.subset_label(where)
    grouped = None
    if resample_clusters is not None:
        labels = selection.cluster_labels(wh, dataset, resample_clusters, m.systems, m.inputs,
                                          (~np.isnan(A)).any(axis=0))
        grouped = (resample_clusters, labels)
    data = selection.Data(m.systems, m.inputs, {measure: A}, {measure: direction}, subset=label, clusters=grouped)
    fingerprint = data.fingerprint([measure])[0]
    present = ~np.isnan(A).all(axis=1)
    if present.sum() < 2:
        raise WarehouseError(f"{measure!r} of {dataset!r} has {int(present.sum())} system(s) with a value"
                             f"{' in the subset ' + label if label else ''}: tests between systems need 2 or more")
    out = A[present], tuple(str(s) for s, keep in zip(m.systems, present) if keep), label, fingerprint
    return out if grouped is None else (*out, _clusters_of(A, grouped[1]))


def _clusters_of(A, labels) -> list:
    """The inputs' cluster labels, an input no system has a value of given a cluster of its own
    (it is in no pair's tests, whatever it is drawn with)."""
    import numpy as np

    used = (~np.isnan(A)).any(axis=0)
    return [v if u else ("\x00unused", j) for j, (v, u) in enumerate(zip(labels, used))]


def _load_statistics(wh: Store, dataset: str, measure: str, where) -> tuple[Any, tuple[str, ...], str, str]:
    """:func:`_load` of a system-level measure: its BLEU statistics (N, M, 10; NaN where missing or
    outside the subset) of the systems with a cell in the subset, their names, the subset label,
    the fingerprint of the statistics."""
    import hashlib

    import numpy as np

    from metaeval.runs.engine import selection, system_level

    where = selection.parse_where(where)
    label = selection.subset_label(where)
    scope = selection.Scope(dataset, None, (measure,), ("system",), (), where)
    S, inputs = system_level.stats_grid(wh, scope, measure, system_level.systems(wh, dataset, measure))
    present = ~np.isnan(S).any(axis=2)
    keep = present.any(axis=1)
    systems = tuple(s for s, k in zip(system_level.systems(wh, dataset, measure), keep) if k)
    if len(systems) < 2:
        raise WarehouseError(f"{measure!r} of {dataset!r} has {len(systems)} system(s) with statistics"
                             f"{' in the subset ' + label if label else ''}: tests between systems need 2 or more")
    S = S[keep]
    digest = hashlib.sha256(f"statistics\x1f{label}\x1e{measure}\x1e".encode())
    digest.update("\x1f".join([*systems, "\x1e", *inputs]).encode())
    digest.update(np.ascontiguousarray(S, dtype="<f8").tobytes())
    return S, systems, label, digest.hexdigest()


def run_system_tests(wh: Store, dataset: str, measure: str, methods=METHODS.default, *, shapiro: bool = False,
                     k: int = K.default, alpha: float = ALPHA.default, seed: int = SEED.default,
                     alternative: str = ALTERNATIVE.default, correction: str = CORRECTION.default,
                     correction_group: str = CORRECTION_GROUP.default, where=(), force: bool = False,
                     progress=None, resample_clusters: str | None = None) -> SystemTestsOutcome:
    """Test every pair of systems of ``dataset`` under ``measure`` by each of ``methods`` and
    persist the rows (module docstring); ``progress`` is accepted and unused (a few seconds)."""
    import numpy as np
    import pandas as pd

    from metaeval.analyses import system_tests as st
    from metaeval.analyses.text.mt import system_bleu
    from metaeval.runs.engine import persist, system_level

    methods = _check(wh, dataset, measure, methods, k, alpha, seed, alternative, correction, correction_group, shapiro,
                     resample_clusters)
    corpus = measure in system_level.measures(wh, dataset)
    if corpus:
        A, systems, subset, fingerprint = _load_statistics(wh, dataset, measure, where)
    else:
        A, systems, subset, fingerprint, *grouped = _load(wh, dataset, measure, where, resample_clusters)
    labels = grouped[0] if not corpus and grouped else None
    means = ({s: float(m) for s, m in zip(systems, system_bleu(A))} if corpus else
             {s: float(m) for s, m in zip(systems, np.nanmean(A, axis=1))})
    setting = {"subset": subset, "alternative": alternative, "correction": correction,
               "correction_group": correction_group}
    if not force:
        stored = _latest(wh, dataset, measure, setting, methods, shapiro)
        if _up_to_date(stored, methods, shapiro, len(systems), alternative, k, seed, alpha, fingerprint):
            return _outcome(None, stored, systems, methods, means)
    if corpus:
        result = st.SystemTests({m: st.corpus_pair_tests(A, m, alternative=alternative, k=k, seed=seed, alpha=alpha,
                                                         correction=correction, correction_group=correction_group)
                                 for m in methods}, None)
    else:
        result = st.system_tests(A, methods, alternative=alternative, k=k, seed=seed, alpha=alpha,
                                 correction=correction, correction_group=correction_group, shapiro=shapiro,
                                 clusters=labels)
    said = {} if resample_clusters is None else {"resample_clusters": resample_clusters}
    rows = [r for t in result.tests.values() for r in _pair_rows(t, systems, k, seed, said)]
    if result.normality is not None:
        rows += _normality_rows(result.normality, systems, correction)
    frame = pd.DataFrame(rows).assign(dataset=dataset, measure=measure, subset=subset, alpha=float(alpha),
                                      correction=correction, fingerprint=fingerprint)
    run_parameters = {"dataset": dataset, "measure": measure, "methods": list(methods), "shapiro": bool(shapiro),
                      "k": int(k), "alpha": float(alpha), "seed": int(seed), "alternative": alternative,
                      "correction": correction, "correction_group": correction_group, "where": subset, **said}
    run_id = persist.write(wh, COMMAND, TABLE, frame, run_parameters, fingerprint, int(seed))
    return _outcome(run_id, _latest(wh, dataset, measure, setting, methods, shapiro), systems, methods, means)


def _pair_rows(t, systems: tuple[str, ...], k: int, seed: int, extra: dict | None = None) -> list[dict]:
    """The rows of one method's :class:`~metaeval.analyses.system_tests.PairTests` (``better``: for
    a two-sided test the side of its direction -- the sign of t, delta, W+ - W- or U_a - n^2/2)."""
    from metaeval.analyses import system_tests as st
    from metaeval.runs.engine import bookkeeping

    resampled = t.method in st.RESAMPLING_METHODS
    rows = []
    for r, (i, j) in enumerate(zip(t.a, t.b)):
        conventions = {**t.conventions, **(extra or {})}
        if t.resolution[r] is not None:
            conventions["resolution"] = t.resolution[r].as_dict()
        better = None
        if t.significant[r]:
            ahead = t.direction[r] > 0 if t.alternative == "two-sided" else t.alternative == "greater"
            better = systems[i] if ahead else systems[j]
        rows.append({"method": t.method, "alternative": t.alternative, "system_a": systems[i], "system_b": systems[j],
                     "correction_group": t.conventions["correction_group"],
                     "k": int(k) if resampled else None, "seed": int(seed) if resampled else None,
                     "family_size": int(t.family_size[r]), "statistic": _float(t.statistic[r]),
                     "mean_a": _float(t.mean_a[r]), "mean_b": _float(t.mean_b[r]), "delta": _float(t.delta[r]),
                     "n": int(t.n[r]), "n_valid": int(t.n_valid[r]) if resampled else None,
                     "p_value": _float(t.p_value[r]), "p_adjusted": _float(t.p_adjusted[r]),
                     "significant": bool(t.significant[r]), "better": better,
                     "conventions": bookkeeping.conventions_json(conventions)})
    return rows


def _normality_rows(nt, systems: tuple[str, ...], correction: str) -> list[dict]:
    from metaeval.analyses import system_tests as st
    from metaeval.runs.engine import bookkeeping

    return [{"method": st.NORMALITY, "alternative": "", "system_a": s, "system_b": "", "correction_group": "all",
             "k": None, "seed": None,
             "family_size": int(nt.family_size), "statistic": _float(nt.statistic[i]), "mean_a": _float(nt.mean[i]),
             "mean_b": None, "delta": None, "n": int(nt.n[i]), "n_valid": None, "p_value": _float(nt.p_value[i]),
             "p_adjusted": _float(nt.p_adjusted[i]), "significant": bool(nt.significant[i]), "better": None,
             "conventions": bookkeeping.conventions_json(nt.conventions)} for i, s in enumerate(systems)]


def _float(x) -> float | None:
    import math

    return None if x is None or math.isnan(float(x)) else float(x)


def _latest(wh: Store, dataset: str, measure: str, setting: dict, methods, shapiro: bool) -> pd.DataFrame:
    """The latest rows of this setting (the methods asked, and Shapiro-Wilk's with ``shapiro``)."""
    import pandas as pd

    from metaeval import schema
    from metaeval.analyses import system_tests as st

    if not wh.con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                          [f"latest_{TABLE}"]).fetchall()[0][0]:
        return pd.DataFrame()
    rows = wh.con.execute(schema.read("system_tests_latest"), {"dataset": dataset, "measure": measure}).df()
    same = (rows["subset"] == setting["subset"]) & (rows["correction"] == setting["correction"])
    pairs = rows["method"].isin(methods) & (rows["alternative"] == setting["alternative"]) & (
        rows["correction_group"] == setting["correction_group"])
    normal = (rows["method"] == st.NORMALITY) & bool(shapiro)
    return rows[same & (pairs | normal)].reset_index(drop=True)


def _up_to_date(rows: pd.DataFrame, methods, shapiro: bool, n_systems: int, alternative: str, k: int, seed: int,
                alpha: float, fingerprint: str) -> bool:
    """Whether the stored rows are this computation's: same cells, parameters and results version,
    every family complete."""
    from metaeval.analyses import system_tests as st
    from metaeval.runs.engine import bookkeeping

    if rows.empty or (rows["fingerprint"] != fingerprint).any() or (rows["alpha"] != alpha).any():
        return False
    if not rows["run_version"].isin(bookkeeping.SAME_RESULTS_AS).all():
        return False
    pairs = n_systems * (n_systems - 1) // (2 if alternative == "two-sided" else 1)
    for method in methods:
        mine = rows[rows["method"] == method]
        if len(mine) != pairs:
            return False
        if method in st.RESAMPLING_METHODS and not ((mine["k"] == k) & (mine["seed"] == seed)).all():
            return False
    return not shapiro or (rows["method"] == st.NORMALITY).sum() == n_systems


def _outcome(run_id: int | None, rows: pd.DataFrame, systems: tuple[str, ...], methods,
             means: dict[str, float]) -> SystemTestsOutcome:
    """The outcome from the stored rows: per method, the systems no one significantly beats."""
    from metaeval.analyses import system_tests as st

    rows = rows.drop(columns=["run_version"], errors="ignore")
    order = {m: i for i, m in enumerate([*methods, st.NORMALITY])}
    rank = {s: i for i, s in enumerate(systems)}
    if not rows.empty:
        rows = rows.assign(_m=rows["method"].map(order), _a=rows["system_a"].map(rank),
                           _b=rows["system_b"].map(rank).fillna(-1)).sort_values(["_m", "_a", "_b"]).drop(
            columns=["_m", "_a", "_b"]).reset_index(drop=True)
    winners, undetermined, notes = {}, {}, {}
    for method in methods:
        mine = rows[rows["method"] == method]
        winners[method], undetermined[method], notes[method] = conclude(mine, systems, method)
    return SystemTestsOutcome(run_id, rows, systems, winners, undetermined, notes, means)


def conclude(rows: pd.DataFrame, systems, method: str) -> tuple[list[str] | None, list[str], str | None]:
    """From one method's stored tests: the systems no other significantly outperforms (None when
    the family cannot resolve), those undetermined (a test of theirs is undefined), and the
    family's cannot-resolve line from the conclusion layer (None when it resolves)."""
    from metaeval.analyses import conclusions

    note = next((n for c, corr, a in zip(rows["conventions"], rows["correction"], rows["alpha"])
                 if (n := conclusions.stored_note(c, corr, float(a), f"the {method} tests"))), None)
    if note is not None:
        return None, [], note
    sig = rows[rows["better"].notna()]
    beaten = {b if w == a else a for a, b, w in zip(sig["system_a"], sig["system_b"], sig["better"])}
    unknown = set(rows.loc[rows["p_value"].isna(), "system_a"]) | set(rows.loc[rows["p_value"].isna(), "system_b"])
    return ([s for s in systems if s not in beaten and s not in unknown],
            [s for s in systems if s not in beaten and s in unknown], None)


def _placed(outcome: SystemTestsOutcome, method: str, rows=None):
    """[(i, j, test row)] of ``method``'s tests, placed in the cell [i, j] of "i better than j" (a
    two-sided test's where its ``better`` system is, else by the sign of delta), and the pairs
    (i, j) whose test is undefined (both cells); ``rows``: the tests (default ``outcome.rows``)."""
    import pandas as pd

    index = {s: i for i, s in enumerate(outcome.systems)}
    rows = outcome.rows if rows is None else rows
    placed, undefined = [], set()
    for r in rows[rows["method"] == method].itertuples():
        a, b = index[r.system_a], index[r.system_b]
        if pd.isna(outcome.rows.at[r.Index, "p_adjusted"]):
            undefined |= {(a, b), (b, a)}
            continue
        if r.alternative == "two-sided":
            if pd.isna(r.better) and not r.delta:
                continue
            at = (a, b) if (r.better == r.system_a if pd.notna(r.better) else r.delta > 0) else (b, a)
        else:
            at = (a, b) if r.alternative == "greater" else (b, a)
        placed.append((*at, r))
    return placed, undefined


def _cells(outcome: SystemTestsOutcome, method: str):
    """(p, significant, undefined) N x N in ``outcome.systems`` order: [i, j] the adjusted p of "i
    better than j" (:func:`_placed`; NaN: no such test), whether it is significant, and whether
    the pair's test is undefined (both cells)."""
    import numpy as np

    n = len(outcome.systems)
    p, sig, undefined = np.full((n, n), np.nan), np.zeros((n, n), bool), np.zeros((n, n), bool)
    placed, missing = _placed(outcome, method)
    for i, j, r in placed:
        p[i, j], sig[i, j] = r.p_adjusted, bool(r.significant)
    for i, j in missing:
        undefined[i, j] = True
    return p, sig, undefined


def matrix(outcome: SystemTestsOutcome, method: str) -> pd.DataFrame:
    """Graham's Fig. 4 as a table: row system i, column system j, the adjusted p of "i better than
    j" as the conclusion layer prints it (never finer than its resolution) with ``*`` when
    significant ('' where there is no such test, ``n/a`` where it is undefined; a two-sided
    test's p where its significant direction points, or by the sign of delta)."""
    import pandas as pd

    from metaeval.analyses import conclusions
    from metaeval.analyses import system_tests as st

    n = len(outcome.systems)
    cells = [[""] * n for _ in range(n)]
    printed = conclusions.printed_by(outcome.rows, {**st.PVALUE_FORMULA, st.NORMALITY: "parametric"})
    placed, undefined = _placed(outcome, method, printed)
    for i, j, r in placed:
        cells[i][j] = r.p_adjusted + ("*" if r.significant else "")
    for i, j in undefined:
        cells[i][j] = "n/a"
    frame = pd.DataFrame(cells, columns=list(outcome.systems))
    frame.insert(0, "better than", list(outcome.systems))
    return frame


def figure(outcome: SystemTestsOutcome, method: str):
    """Graham's Fig. 4 of ``method`` (:func:`metaeval.present.study_figures.heatmap`), systems by
    their mean score, best first; a family that cannot resolve says so in the title."""
    from metaeval.present import study_figures

    p, sig, undefined = _cells(outcome, method)
    order = sorted(range(len(outcome.systems)), key=lambda i: -outcome.means[outcome.systems[i]])
    title = f"{method}: is system i significantly better than system j?"
    if outcome.notes.get(method):
        title += " " + outcome.notes[method]
    return study_figures.heatmap(p[order][:, order], sig[order][:, order], [outcome.systems[i] for i in order],
                      undefined=undefined[order][:, order], title=title)


def present(outcome: SystemTestsOutcome, fmt: str) -> str:
    """The tests (p-values printed at their resolution, except in json and csv), each method's
    matrix (Graham's Fig. 4) and its conclusion, in ``fmt``."""
    import pandas as pd

    from metaeval.analyses import conclusions
    from metaeval.present import tables
    from metaeval.analyses import system_tests as st

    shown = ["method", "alternative", "system_a", "system_b", "n", "mean_a", "mean_b", "delta", "statistic",
             "p_value", "p_adjusted", "significant", "better"]
    rows = outcome.rows
    if fmt not in ("json", "csv") and not rows.empty:
        rows = conclusions.printed_by(rows, {**st.PVALUE_FORMULA, st.NORMALITY: "parametric"})
    blocks = [("tests", rows[[c for c in shown if c in rows.columns]])]
    summary = []
    for method, winners in outcome.not_outperformed.items():
        blocks.append((f"{method}: row significantly better than column (*)", matrix(outcome, method)))
        summary.append({"method": method,
                        "not_outperformed": None if winners is None else ", ".join(winners),
                        "undetermined": ", ".join(outcome.undetermined[method]) or None,
                        "note": outcome.notes[method]})
    blocks.append(("systems not significantly outperformed by any other", pd.DataFrame(summary)))
    return tables.render_blocks(blocks, fmt)


def report_section(wh: Store, dataset: str):
    """The report's section (:mod:`metaeval.runs.report`): per measure and method of the stored
    tests, the systems not significantly outperformed by any other, or the family's "cannot
    resolve" line; None when no test between systems is stored for ``dataset``."""
    import html

    import pandas as pd

    from metaeval import schema
    from metaeval.runs.engine import analyse as engine
    from metaeval.runs.report.cells import table_html
    from metaeval.runs.report.context import Section

    view = schema.latest_view(TABLE)
    if not wh.con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [view]).fetchall()[0][0]:
        return None
    rows = engine.latest_rows(wh, TABLE, dataset, subset=None)
    rows = rows[rows["method"] != "shapiro-wilk"]
    if rows.empty:
        return None
    out = []
    keys = ["measure", "subset", "method", "alternative", "correction"]
    for key, part in rows.groupby(keys, sort=True):
        systems = sorted(set(part["system_a"]) | set(part["system_b"]))
        winners, undetermined, note = conclude(part, systems, key[2])
        out.append({**dict(zip(keys, key)), "systems": len(systems), "significant pairs": int(part["significant"].sum()),
                    "not outperformed": note or ", ".join(winners),
                    "undetermined (an undefined test)": ", ".join(undetermined)})
    section = Section("Tests between systems", "system-tests", run_ids=set(int(r) for r in rows["run_id"]))
    section.blocks.append("<p>Significance tests between every pair of systems under one measure (Graham 2015, "
                          "Fig. 4), each method's pairs one corrected family: the systems no other system "
                          "significantly outperforms.</p>")
    section.blocks.append(table_html(pd.DataFrame(out)))
    section.blocks.append(f'<p class="note">{html.escape(COMMAND)} prints each method\'s matrix (Graham\'s '
                          "Fig. 4) and its tests.</p>")
    return section
