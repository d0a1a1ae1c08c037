"""Statistics core: correlations, confidence intervals and tests for metric meta-evaluation.

Pure numpy/scipy, no database. Matrices are N systems x M inputs, NaN = missing.

- Levels: "system", "summary" (alias "input"), "global" (see :func:`correlate`).
- Coefficients: "pearson", "spearman", "kendall" (tau-b; alias "kendall-b"), "kendall-c"
  (Stuart's tau-c): the variant is part of the coefficient name, and is recorded separately
  as ``conventions["kendall_variant"]``.
- Kendall variants with ties (Deutsch, Foster & Freitag 2023; mt-metrics-eval's
  KendallVariants): "kendall-a", "kendall-23", "acc-23", with a tie threshold on the metric's
  differences ("acc-23[eps=0.01]", also "kendall-b[eps=...]") or a calibrated one
  ("acc-23[tie-calibrated]", "kendall-23[tie-calibrated]"); see :mod:`.kendall_variants`.
  Resampling a calibrated coefficient re-calibrates epsilon inside every resample.
- Resampling methods: "systems", "inputs", "both" (Deutsch, Dror & Roth 2021).
- NaN: pairs with a NaN on either side are dropped; undefined per-input correlations are left
  out of the summary-level mean; undefined resamples are dropped (and counted in
  ``conventions["n_valid_samples"]``). A test whose delta is undefined has a NaN p-value
  (never significant), whatever its resamples; ``conventions["pvalue_undefined"]`` says why.
- Scale: sums are taken on values scaled by a power of two where they would overflow or be
  subnormal (exact), so any finite values (1e307, 1e-300) give their rescaled copy's results.
- Randomness: only ``numpy.random.default_rng`` generators seeded from
  ``SeedSequence(seed, spawn_key=(block,))`` per block of resamples: a seed gives the same
  numbers whatever the batch size; ``seed=None`` records the fresh entropy it used.
- Defaults are the command line's: ``alternative="two-sided"``, ``seed=0`` (one-sided tests,
  as an anchor's one-tailed check, pass ``alternative="greater"``).
- Point estimates: Pearson and Kendall repeat scipy's operations (bit-identical for complete
  data), Spearman agrees to ~1e-16; resampled statistics equal scipy on each resampled
  matrix (tested resample by resample).

Each function's docstring states its formula.
"""

#: public name -> the module defining it, imported on first use (PEP 562): the vocabulary and
#: the validators are read at start-up by the command line without loading scipy.
_HOMES = {
    "correlate": "correlation",
    "CalibrationResult": "kendall_variants", "kendall_variant": "kendall_variants",
    "tie_calibration": "kendall_variants",
    "SoftPairwiseResult": "soft_pairwise", "mtme_permutation_signs": "soft_pairwise",
    "pairwise_permutation_pvalues": "soft_pairwise", "soft_pairwise_accuracy": "soft_pairwise",
    "paired_bootstrap_test": "hypothesis", "permutation_test": "hypothesis", "williams_t": "williams",
    "williams_test": "williams",
    "bootstrap_ci": "intervals", "fisher_ci": "intervals",
    "correct_pvalues": "multiple",
    "BootstrapResult": "results", "FisherResult": "results", "PairedBootstrapResult": "results",
    "PermutationResult": "results", "WilliamsResult": "results",
}

__all__ = [
    "BootstrapResult",
    "CalibrationResult",
    "FisherResult",
    "PairedBootstrapResult",
    "PermutationResult",
    "SoftPairwiseResult",
    "WilliamsResult",
    "bootstrap_ci",
    "correct_pvalues",
    "correlate",
    "fisher_ci",
    "kendall_variant",
    "mtme_permutation_signs",
    "pairwise_permutation_pvalues",
    "soft_pairwise_accuracy",
    "tie_calibration",
    "paired_bootstrap_test",
    "permutation_test",
    "williams_t",
    "williams_test",
]


def __getattr__(name: str):
    if name in _HOMES:
        import importlib

        value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
