"""The typed parameters of the analyses (runs/parameters.py): tables, roles, immutability."""

from __future__ import annotations

import dataclasses

import pytest

from metaeval import schema
from metaeval.runs import agreement, comparisons, correlations, intervals, parameters, ranking, simulation


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
                           "system_inputs": "all", "resample_annotators": None, "risk": None}
    assert p.arguments() == {c: v for c, v in p.columns().items() if c != "risk"}
    assert p.recorded() == {**p.columns(), "alpha": 0.05, "correction": "holm", "correction_group": "metric",
                            "focus": ["a"]}
    assert p.run_seed() == 0
    # sequential: the correction decides how many resamples a pair draws, so it is a column
    s = dataclasses.replace(p, risk=1e-3, focus=None)
    assert list(s.columns())[-3:] == ["correction", "correction_group", "alpha"]
    assert s.arguments() == {"method": "perm-both", "alternative": "two-sided", "seed": 0, "system_inputs": "all"}
    assert "focus" not in s.recorded()


def test_a_column_that_is_not_an_argument():
    p = agreement.ScoreRangeParams("input", 0.05, False, "expert")
    assert p.columns() == {"normalisation": "input", "alpha": 0.05, "significant_only": False, "consensus": "expert"}
    assert p.arguments() == {"alpha": 0.05, "significant_only": False}
    assert p.run_seed() is None
    assert simulation.CoverageParams("fisher", 0.05, None, 2, 60).columns() == {
        "method": "fisher", "alpha": 0.05, "k": None, "seed": 2, "trials": 60}
