"""The typed parameters of the analyses (runs/engine/parameters.py): tables, roles, immutability."""

from __future__ import annotations

import dataclasses

import pytest

from metaeval import schema
from metaeval.runs.agreement import score_ranges as agreement
from metaeval.runs.metrics import comparisons, correlations, intervals, ranking, simulation
from metaeval.runs.engine import parameters


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_family_names_a_registered_table_and_its_view():
    families = list(_subclasses(parameters.Params))
    assert {p.__name__ for p in families} >= {
        "CorrelateParams", "IntervalParams", "TestParams", "AccuracyParams", "DeltaBinParams",
        "SoftAccuracyParams", "SignificanceParams", "SystemAgreementParams", "ScoreRangeParams",
        "PropertyAgreementParams", "CoverageParams", "CoverageBlockParams", "PowerParams", "PowerBlockParams"}
    for p in families:   # the simulations' blocks are partial results, without a latest view
        assert p.table in schema.RESULT_TABLES or p.table.endswith("_blocks"), p
    assert correlations.CorrelateParams().view == "latest_correlations"
    assert ranking.SoftAccuracyParams(200, 4).view == schema.RESULT_TABLES["soft_pairwise_accuracy"]


def test_parameters_are_frozen():
    p = intervals.IntervalParams("boot-both", 0.05, 1000, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.alpha = 0.1


def test_compare_parameters_columns_arguments_and_run_only():
    p = comparisons.TestParams("perm-both", "two-sided", 1000, 0, None, "all", None, None, 0.05, "holm", "metric",
                               ("a",))
    assert p.columns() == {"method": "perm-both", "alternative": "two-sided", "k": 1000, "seed": 0, "k_block": None,
                           "system_inputs": "all", "resample_annotators": None, "risk": None, "aggregate": "mean"}
    assert p.arguments() == {c: v for c, v in p.columns().items() if c != "risk"}
    # aggregate (quiet_default): the mean is not recorded, so a default run records what it did before
    assert p.recorded() == {**{c: v for c, v in p.columns().items() if c != "aggregate"}, "alpha": 0.05,
                            "correction": "holm", "correction_group": "metric", "focus": ["a"]}
    assert dataclasses.replace(p, aggregate="median").recorded()["aggregate"] == "median"
    assert p.run_seed() == 0
    # sequential: the correction decides how many resamples a pair draws, so it is a column
    s = dataclasses.replace(p, risk=1e-3, focus=None)
    assert list(s.columns())[-3:] == ["correction", "correction_group", "alpha"]
    assert s.arguments() == {"method": "perm-both", "alternative": "two-sided", "seed": 0, "system_inputs": "all",
                             "aggregate": "mean"}
    assert "focus" not in s.recorded()


def test_a_column_that_is_not_an_argument():
    p = agreement.ScoreRangeParams("input", 0.05, False, "expert")
    assert p.columns() == {"normalisation": "input", "alpha": 0.05, "significant_only": False, "consensus": "expert"}
    assert p.arguments() == {"alpha": 0.05, "significant_only": False}
    assert p.run_seed() is None
    assert simulation.CoverageParams("fisher", 0.05, None, 2, 60).columns() == {
        "method": "fisher", "alpha": 0.05, "k": None, "seed": 2, "trials": 60}


def test_the_families_written_by_their_own_loop_declare_their_parameters_too():
    """winners, replicability, rank-tasks, annotators and the input properties write their rows
    outside the run loop; their parameters are typed all the same (issue 25)."""
    from metaeval.runs.agreement import annotators
    from metaeval.runs.metrics import task_ranking

    families = {p.__name__ for p in _subclasses(parameters.Params)}
    assert families >= {"WinnersParams", "ReplicabilityParams", "TaskRankingParams", "AnnotatorsParams",
                        "InputPropertiesParams"}
    w = ranking.WinnersParams("perm-both", "two-sided", "holm", "metric", 0.05, "any")
    assert w.view == "latest_winners" and w.recorded() == {
        "method": "perm-both", "alternative": "two-sided", "correction": "holm", "correction_group": "metric",
        "alpha": 0.05, "cluster_rule": "any"} and w.columns() == {**w.recorded(), "aggregate": "mean"}
    r = ranking.ReplicabilityParams("perm-both", "greater", 0.05, ("bonferroni", "fisher"))
    assert r.view == "latest_replicability" and r.columns() == {"method": "perm-both", "alternative": "greater",
                                                                 "alpha": 0.05}
    assert r.recorded() == {**r.columns(), "pc_methods": ("bonferroni", "fisher")}   # run-only: not a column
    t = task_ranking.TaskRankingParams("abc", 100, 3, 0.05)
    assert t.view == "latest_task_rankings" and t.run_seed() == 3 and t.columns() == {
        "task_set": "abc", "k": 100, "seed": 3, "alpha": 0.05}
    a = annotators.AnnotatorsParams(200, 0.05, 1, 20)
    assert a.columns() == {} and a.recorded() == {"k": 200, "alpha": 0.05, "seed": 1, "splits": 20}
    assert a.run_seed() == 1
    assert agreement.InputPropertiesParams("[]").columns() == {"consensus": "[]"}
