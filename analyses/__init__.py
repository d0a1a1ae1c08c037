"""Analyses over metric and human-judgment matrices.

The statistics core (:mod:`analyses.stats`) is re-exported here, imported on first use (PEP 562):
``import metaeval.present.tables`` (the presentation floor) does not load scipy, so the light commands start at once.
"""

__all__ = [
    "BootstrapResult",
    "FisherResult",
    "PairedBootstrapResult",
    "PermutationResult",
    "WilliamsResult",
    "bootstrap_ci",
    "correct_pvalues",
    "correlate",
    "fisher_ci",
    "paired_bootstrap_test",
    "permutation_test",
    "williams_t",
    "williams_test",
]


def __getattr__(name: str):
    if name in __all__:
        from . import stats

        return getattr(stats, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
