"""Input validation shared by the statistics core (scipy-style ``_iv`` helpers).

Every public function validates its arguments here and receives canonical values back:
float64 matrices, a canonical level name, a :class:`Coefficient`, and so on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from . import vocabulary

#: level name (canonical or alias) -> canonical level, aliases right after their level
LEVELS: Mapping[str, str] = {
    name: level for level in vocabulary.LEVELS
    for name in (level, *(a for a, target in vocabulary.LEVEL_ALIASES.items() if target == level))
}
METHODS: tuple[str, ...] = vocabulary.RESAMPLING
ALTERNATIVES: tuple[str, ...] = vocabulary.ALTERNATIVES
PERMUTATION_VARIANTS: tuple[str, ...] = vocabulary.PERMUTATION_VARIANTS
CORRECTIONS: tuple[str, ...] = vocabulary.CORRECTIONS


@dataclass(frozen=True)
class Coefficient:
    """A correlation coefficient: ``name`` in pearson/spearman/kendall, ``variant`` for Kendall
    (b, c, a, 23, acc23), ``epsilon`` the tie threshold on the metric's differences (Kendall
    a, b, 23, acc23), ``calibrated``: epsilon chosen per level by tie calibration (23, acc23);
    ``control``: a partial correlation controlling for a grouping of the cells, ``"system"`` or
    an attribute's name (pearson, spearman, kendall tau-b; computed by :mod:`.partial`, which
    needs the groups: the other functions of the core refuse it). ``aggregate``: a system's
    score at the system level, the ``mean`` or the ``median`` of its inputs' cells, for the metric
    (X, Y); ``human_aggregate`` the same for the human (Z); neither part of the label:
    :func:`aggregate_iv`)."""

    name: str
    variant: str | None = None
    epsilon: float = 0.0
    calibrated: bool = False
    control: str | None = None
    aggregate: str = "mean"
    human_aggregate: str = "mean"

    @property
    def base_label(self) -> str:
        """The coefficient without its tie threshold, e.g. ``"kendall-c"`` or ``"acc-23"``."""
        if self.variant == "acc23":
            return "acc-23"
        return self.name if self.variant is None else f"{self.name}-{self.variant}"

    @property
    def label(self) -> str:
        """The canonical string, e.g. ``"pearson"``, ``"kendall-c"``, ``"acc-23[eps=0.5]"``,
        ``"kendall-23[tie-calibrated]"``, ``"pearson[control=system]"``."""
        if self.control is not None:
            return f"{self.base_label}[{CONTROL}{self.control}]"
        if self.calibrated:
            return f"{self.base_label}[{TIE_CALIBRATED}]"
        if self.epsilon:
            return f"{self.base_label}[eps={self.epsilon!r}]"
        return self.base_label

    @property
    def parametric(self) -> bool:
        """Whether Fisher's interval and Williams' test apply: not for the Kendall variants with
        ties, nor for the coefficients of :data:`vocabulary.NON_PARAMETRIC_COEFFICIENTS`."""
        return not self.ties_variant and self.name not in vocabulary.NON_PARAMETRIC_COEFFICIENTS

    @property
    def whole_level(self) -> bool:
        """Whether the coefficient is computed from a whole level's matrices rather than from
        one vector of pairs per correlation (tie calibration; the coefficients of
        :data:`vocabulary.LEVEL_COEFFICIENTS`): resampling recomputes it on each resample."""
        return self.calibrated or self.name in vocabulary.LEVEL_COEFFICIENTS

    @property
    def ties_variant(self) -> bool:
        """True for the count-based variants of Deutsch et al. (2023): Kendall a, 23, acc23, or
        any Kendall with a tie threshold or calibration (not the scipy-matched b / c paths)."""
        return self.name == "kendall" and (self.variant in ("a", "23", "acc23") or bool(self.epsilon)
                                           or self.calibrated)


#: Suffix of a coefficient whose tie threshold is calibrated.
TIE_CALIBRATED = "tie-calibrated"
#: Start of the suffix of a partial coefficient, ``NAME[control=GROUPS]``.
CONTROL = "control="

COEFFICIENTS: Mapping[str, Coefficient] = {
    "pearson": Coefficient("pearson"),
    "spearman": Coefficient("spearman"),
    "kendall": Coefficient("kendall", "b"),
    "kendall-b": Coefficient("kendall", "b"),
    "kendall-c": Coefficient("kendall", "c"),
    "kendall-a": Coefficient("kendall", "a"),
    "kendall-23": Coefficient("kendall", "23"),
    "acc-23": Coefficient("kendall", "acc23"),
    # every other coefficient of the vocabulary is its own name (pdp, ...)
    **{name: Coefficient(name) for name in vocabulary.CORRELATION_COEFFICIENTS
       if name not in ("pearson", "spearman") and not name.startswith(("kendall", "acc-"))},
}
#: Coefficients that take a tie threshold ``[eps=E]`` / ``[tie-calibrated]``.
EPSILON_COEFFICIENTS: tuple[str, ...] = ("kendall", "kendall-b", "kendall-a", "kendall-23", "acc-23")
CALIBRATED_COEFFICIENTS: tuple[str, ...] = ("kendall-23", "acc-23")
#: Coefficients that have a partial form ``[control=GROUPS]`` (:mod:`.partial`).
CONTROL_COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall", "kendall-b")


def _choice_iv(value: object, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}; got {value!r}.")
    return value


def level_iv(level: object) -> str:
    return LEVELS[_choice_iv(level, "level", list(LEVELS))]


def coefficient_iv(coefficient: object) -> Coefficient:
    """A :class:`Coefficient` from its name, optionally with a tie threshold: ``NAME[eps=E]``
    (E a finite number >= 0; Kendall a, b, 23, acc-23) or ``NAME[tie-calibrated]`` (kendall-23,
    acc-23); or a partial coefficient ``NAME[control=GROUPS]`` (pearson, spearman, kendall)."""
    if isinstance(coefficient, Coefficient):
        return coefficient
    if isinstance(coefficient, str) and coefficient.endswith("]") and "[" in coefficient:
        base, _, suffix = coefficient[:-1].partition("[")
        if suffix.startswith(CONTROL):
            _choice_iv(base, "coefficient with [control=...]", CONTROL_COEFFICIENTS)
            return replace(COEFFICIENTS[base], control=control_iv(suffix[len(CONTROL):]))
        if suffix == TIE_CALIBRATED:
            _choice_iv(base, "coefficient with [tie-calibrated]", CALIBRATED_COEFFICIENTS)
            return replace(COEFFICIENTS[base], calibrated=True)
        if suffix.startswith("eps="):
            _choice_iv(base, "coefficient with [eps=...]", EPSILON_COEFFICIENTS)
            return replace(COEFFICIENTS[base], epsilon=epsilon_iv(suffix[4:]))
        raise ValueError(f"`coefficient` suffix must be [eps=E], [{TIE_CALIBRATED}] or [{CONTROL}GROUPS]; "
                         f"got {coefficient!r}.")
    return COEFFICIENTS[_choice_iv(coefficient, "coefficient", list(COEFFICIENTS))]


def aggregate_iv(coefficient: object, aggregate: object = "mean") -> Coefficient:
    """The coefficient with a system's score aggregated by ``aggregate``
    (:data:`.reductions.AGGREGATE_VALUES`: the metric's mean or median, then the human's after a
    ``/`` when not the mean; "median" is Graham 2015's variant, the metric's median against the
    human's mean). The median is offered for the coefficients computed from the two vectors of
    system scores (pearson, spearman, kendall tau-b and tau-c): not for a partial coefficient, a
    Kendall variant with ties or a whole-level coefficient, which compute their own system means."""
    from .reductions import AGGREGATE_VALUES, aggregate_sides

    coef = coefficient_iv(coefficient)
    if aggregate not in AGGREGATE_VALUES:
        raise ValueError(f"`aggregate` must be one of {', '.join(AGGREGATE_VALUES)}; got {aggregate!r}.")
    metric, human = aggregate_sides(aggregate)
    if aggregate != "mean" and (coef.control is not None or coef.ties_variant or coef.whole_level):
        raise ValueError(f"a system's {'median' if 'median' in aggregate else aggregate} is offered for pearson, "
                         f"spearman, kendall and kendall-c, not {coef.label}")
    return replace(coef, aggregate=metric, human_aggregate=human)


def control_iv(control: object) -> str:
    """What a partial coefficient controls for: ``"system"`` or an attribute's name (a non-empty
    string without brackets, so that the label reads back)."""
    if not isinstance(control, str) or not control or any(ch in control for ch in "[]") \
            or control != control.strip():
        raise ValueError(f"the control of a partial coefficient must be 'system' or an attribute name without "
                         f"brackets or surrounding spaces; got {control!r}.")
    return control


def epsilon_iv(epsilon: object) -> float:
    """A tie threshold: a finite number >= 0 (a string is parsed as a float)."""
    try:
        value = float(epsilon) if isinstance(epsilon, str) else epsilon
    except ValueError:
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not np.isfinite(value) \
            or value < 0:
        raise ValueError(f"the tie threshold epsilon must be a finite number >= 0; got {epsilon!r}.")
    return float(value)


def method_iv(method: object) -> str:
    return _choice_iv(method, "method", METHODS)


def alternative_iv(alternative: object) -> str:
    return _choice_iv(alternative, "alternative", ALTERNATIVES)


def permutation_variant_iv(variant: object) -> str:
    return _choice_iv(variant, "variant", PERMUTATION_VARIANTS)


def correction_iv(method: object) -> str:
    """One of :data:`CORRECTIONS`, or ``"by"`` (Benjamini-Yekutieli: the alternative annotator test's)."""
    return _choice_iv(method, "method", (*CORRECTIONS, vocabulary.BY))


def matrices_iv(**named: npt.ArrayLike) -> tuple[np.ndarray, ...]:
    """Convert to float64 and check: 2-D, same shape, at least one system and one input."""
    arrays = []
    shape = None
    for name, value in named.items():
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`{name}` must be a numeric array: {exc}") from None
        if array.ndim != 2:
            raise ValueError(
                f"`{name}` must be 2-D (systems x inputs); got {array.ndim}-D."
            )
        if array.shape[0] < 1 or array.shape[1] < 1:
            raise ValueError(f"`{name}` must have at least one system and one input.")
        if np.isinf(array).any():
            raise ValueError(f"`{name}` must not contain infinite values (use NaN for missing).")
        if shape is None:
            shape = array.shape
        elif array.shape != shape:
            first = next(iter(named))
            raise ValueError(
                f"`{first}` and `{name}` must have the same shape; got {shape} and {array.shape}."
            )
        arrays.append(array)
    return tuple(arrays)


#: The most resamples any analysis takes (``k``, ``k_block``): its smallest Monte-Carlo p-value
#: 1/(k+1) ~ 1e-7 already resolves a Bonferroni/Holm threshold of 0.05 over 500,000 tests, and
#: the k statistics of one task hold 80 MB. A larger k is refused before anything is allocated
#: (a k beyond numpy's array size failed deep inside the resampling).
K_MAX = 10_000_000


def k_iv(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= K_MAX:
        raise ValueError(f"`k` must be an integer >= 1 and at most {K_MAX:,}; got {k!r}.")
    return int(k)


def alpha_iv(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be a number with 0 < alpha < 1; got {alpha!r}.")
    return float(alpha)


def seed_iv(seed: object) -> np.random.SeedSequence:
    """``None`` draws fresh OS entropy (recorded in the result's conventions); ints are used as is."""
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be None or a non-negative integer; got {seed!r}.")
    return np.random.SeedSequence(int(seed))


def batch_size_iv(batch_size: object) -> int | None:
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"`batch_size` must be None or an integer >= 1; got {batch_size!r}.")
    return int(batch_size)
