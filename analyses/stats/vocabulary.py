"""The words of the statistics: every level, coefficient, method and option name, defined once.

Every floor above reads its choices here (the command line's option choices, the run
engine's checks, the simulations' method lists); nothing redefines them. Each name is what a
result row stores in its column.

Levels (Deutsch, Dror & Roth 2021, §2):
    ``system``  Corr over the N pairs of system means (means over the inputs, NaN ignored);
    ``summary`` per input j, Corr over the systems of column j, averaged over the inputs whose
                correlation is defined (``input`` is accepted as its alias);
    ``global``  Corr over every non-NaN cell, pooled.

Coefficients: ``pearson``, ``spearman``, ``kendall`` (tau-b) by default; ``kendall-c``; the
variants with ties of Deutsch, Foster & Freitag (2023) ``kendall-a``, ``kendall-23``,
``acc-23``; and ``pdp``, Pairwise Difference Pearson (DiIanni & Deutsch 2025: Pearson over the
pairwise differences of the systems' scores, :mod:`.pairwise_difference`).
"""

from __future__ import annotations

#: Correlation levels, in their canonical order.
LEVELS: tuple[str, ...] = ("system", "summary", "global")
#: Other names of a level (the statistics core accepts them; rows store the canonical name).
LEVEL_ALIASES: dict[str, str] = {"input": "summary"}

#: The coefficients analysed when none is named.
COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall")
#: Every coefficient correlate, ci and compare accept. Kendall a, b, 23 and acc-23 also take a
#: tie threshold ``NAME[eps=E]``, 23 and acc-23 tie calibration ``NAME[tie-calibrated]``.
CORRELATION_COEFFICIENTS: tuple[str, ...] = (*COEFFICIENTS, "kendall-c", "kendall-a", "kendall-23", "acc-23",
                                             "pdp")
#: Coefficients to which the parametric interval (Fisher) and test (Williams) do not apply (their
#: points are not independent pairs); the Kendall variants with ties are refused by their own rule.
NON_PARAMETRIC_COEFFICIENTS: tuple[str, ...] = ("pdp",)
#: Coefficients computed from a level's whole matrices, each by a module of this package that
#: defines ``level_value(X, Z, level)`` (a float), ``corr(x, z)`` (the value over vectors of
#: system scores along the last axis, leading axes a batch) and ``conventions()`` (what a row
#: records). Resampling recomputes them on each resample's matrices.
LEVEL_COEFFICIENTS: dict[str, str] = {"pdp": "pairwise_difference"}
#: The levels a coefficient is defined at, when not all of :data:`LEVELS`.
COEFFICIENT_LEVELS: dict[str, tuple[str, ...]] = {"pdp": ("system", "summary")}

#: Confidence intervals: Fisher's z, or a percentile bootstrap over systems, inputs or both.
CI_METHODS: tuple[str, ...] = ("fisher", "boot-systems", "boot-inputs", "boot-both")
#: Tests of corr(X, Z) - corr(Y, Z): Williams' t, permutation, paired bootstrap; perm-systems-mtme:
#: mt-metrics-eval's system-level PermutationSigDiff (the system scores z-scored and swapped,
#: p = count / k; perm-systems z-scores the cells, the TACL'21 convention).
TEST_METHODS: tuple[str, ...] = ("williams", "perm-systems", "perm-inputs", "perm-both",
                                 "boot-systems", "boot-inputs", "boot-both", "perm-systems-mtme")
#: What a resampling method draws (the part after ``boot-`` / ``perm-``).
RESAMPLING: tuple[str, ...] = ("systems", "inputs", "both")
#: H1 of a test: corr(X, Z) > corr(Y, Z) (greater), < (less), or != (two-sided).
ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")
#: The permutation test's swap rule: the paper's (each unit's coin) or nlpstats' (row XOR column).
PERMUTATION_VARIANTS: tuple[str, ...] = ("paper", "nlpstats")
#: Multiple-comparison corrections of a family of p-values.
CORRECTIONS: tuple[str, ...] = ("bonferroni", "holm", "bh", "none")
#: Benjamini-Yekutieli (the FDR under any dependence): the alternative annotator test's correction over
#: annotators (Calderon et al. 2025); accepted by the conclusion layer, not offered as a --correction.
BY = "by"
#: The families corrected together: each metric_a's tests, or all the tests of a level and coefficient.
CORRECTION_GROUPS: tuple[str, ...] = ("metric", "all")
#: Significance clusters of a ranking: a new cluster at the first metric beaten by any of the
#: cluster (any) or by all of it (strict).
CLUSTER_RULES: tuple[str, ...] = ("any", "strict")
#: System level: a metric's system mean over all its inputs, or only over those the human judged.
SYSTEM_INPUTS: tuple[str, ...] = ("all", "judged")
#: How a bootstrap re-draws annotators: within each cell, or one panel for all cells.
ANNOTATOR_RESAMPLING: tuple[str, ...] = ("cells", "panel")
#: Pairwise preferences: the winner of a comparison names a system (a = system_a, b = system_b)
#: or a tie; the presentation order says which output was shown first (ab: system_a's).
PREFERENCE_LABELS: tuple[str, ...] = ("a", "b", "tie")
PRESENTATION_ORDERS: tuple[str, ...] = ("ab", "ba")
#: Who gave a preference: a person (several annotators are several human judges) or a model.
JUDGE_KINDS: tuple[str, ...] = ("automatic", "human")
#: Paired tests of two judges' accuracy on the same items: an item-level sign-flip permutation
#: test, or the exact McNemar test on the verdicts both judges gave.
JUDGE_TESTS: tuple[str, ...] = ("permutation", "mcnemar")
