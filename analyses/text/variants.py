"""ROUGE variants and their canonical measure names.

A variant is one summary-level ROUGE score: a counting method, a statistic and
preprocessing / multi-reference settings. Its name is the string stored in the
warehouse, e.g. ``rouge-2.recall[stem,stop]``, ``rouge-l.f1``,
``rouge-su4.precision[stem]``, ``rouge-1.f1[maxref]``::

    <kind>.<statistic>[<flag>,...]

* kind: ``rouge-1`` .. ``rouge-4`` (n-grams), ``rouge-l`` (LCS of the whole
  texts, ``rouge-score``'s rougeL), ``rouge-lsum`` (summary-level union LCS
  over sentences, ROUGE-1.5.5's ROUGE-L), ``rouge-w`` (weighted LCS of the
  whole texts, weight 1.2), ``rouge-s4`` (skip-bigrams with at
  most 4 intervening words), ``rouge-su4`` (``rouge-s4`` plus unigrams);
  ``rouge-s`` / ``rouge-su``: the same with an unlimited skip distance (ROUGE-1.5.5's ``-2 -1``);
* statistic: ``precision``, ``recall`` or ``f1``;
* flags, in this order, each present only when on: ``stem`` (Porter stemming),
  ``stop`` (SMART stopword removal), ``resplit`` (``rouge-lsum`` only: also cut
  sentences where a boundary was glued, ``" ."`` directly followed by a letter,
  see :data:`analyses.text.tokenize.GLUED_BOUNDARY`), ``maxref``
  (multi-reference combination by the reference with the best F1, as
  ``rouge-score``; the default is ROUGE-1.5.5's pooled counts, see
  :mod:`analyses.text.rouge`). No flags, no brackets.

REALSumm (Bhandari et al. 2020) stores ROUGE-1.5.5 ``-m`` ROUGE-L recall in
``pyramid.jsonl``: union LCS over the sentences of its files. 13 of the 100
references in its ``summaries.jsonl`` lost sentence boundaries that this
ROUGE-L kept (``"... for towing her car .she insulted ..."``):
``rouge-lsum.recall[stem,resplit]`` restores them (Pearson r = 0.995 on the 23
systems other than pointer-generator, 0.968 without ``resplit``).
Pointer-generator's summaries, glued the same way, were scored as one unit
against the whole reference, i.e. ``rouge-l.recall[stem]`` (r = 0.984 on that
system); both together give r = 0.995 on all 2 400 summaries.

Names are canonical: :meth:`Variant.parse` accepts exactly what
:attr:`Variant.name` produces, so one measure has one name.

Graham (2015) evaluated 192 system-level variants: 8 counting methods x
stemming x stopword removal x P/R/F x {mean, median} over summaries. The
first four axes are summary-level measures (8 x 2 x 2 x 3 = 96), enumerated by
:func:`graham_grid`; mean/median is a system-level aggregation, not a measure: the
``aggregate`` of the system level (``--aggregate median`` of correlate, ci, compare, winners,
rank-change and error-overlap: :func:`metaeval.analyses.stats.reductions.system_scores`, and
under resampling the median over the drawn inputs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

KINDS: tuple[str, ...] = (
    "rouge-1",
    "rouge-2",
    "rouge-3",
    "rouge-4",
    "rouge-l",
    "rouge-lsum",
    "rouge-w",
    "rouge-s4",
    "rouge-su4",
    "rouge-s",
    "rouge-su",
)
#: Graham (2015)'s 8 counting methods; its R-L is ROUGE-1.5.5's summary-level LCS.
GRAHAM_KINDS: tuple[str, ...] = ("rouge-1", "rouge-2", "rouge-3", "rouge-4", "rouge-lsum", "rouge-w", "rouge-s4", "rouge-su4")
STATISTICS: tuple[str, ...] = ("precision", "recall", "f1")
FLAGS: tuple[str, ...] = ("stem", "stop", "resplit", "maxref")
#: Kinds whose value depends on sentence boundaries, hence the only ones taking ``resplit``.
SENTENCE_KINDS: tuple[str, ...] = ("rouge-lsum",)
AGGREGATIONS: tuple[str, ...] = ("pooled", "max")

_NAME = re.compile(r"^(?P<kind>[a-z0-9-]+)\.(?P<statistic>[a-z0-9]+)(?:\[(?P<flags>[a-z,]+)\])?$")


@dataclass(frozen=True)
class Variant:
    """One summary-level ROUGE measure; ``name`` is its canonical warehouse name."""

    kind: str
    statistic: str
    stem: bool = False
    stop: bool = False
    aggregation: str = "pooled"
    resplit: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown ROUGE kind {self.kind!r}; expected one of {KINDS}")
        if self.statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {self.statistic!r}; expected one of {STATISTICS}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {self.aggregation!r}; expected one of {AGGREGATIONS}")
        if not all(isinstance(flag, bool) for flag in (self.stem, self.stop, self.resplit)):
            raise TypeError("stem, stop and resplit must be bool")
        if self.resplit and self.kind not in SENTENCE_KINDS:
            # the other kinds ignore sentences: a second name for the same measure
            raise ValueError(f"resplit only applies to {', '.join(SENTENCE_KINDS)}, not {self.kind!r}")

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``rouge-2.recall[stem,stop]``."""
        flags = [f for f, on in zip(FLAGS, (self.stem, self.stop, self.resplit, self.aggregation == "max")) if on]
        suffix = f"[{','.join(flags)}]" if flags else ""
        return f"{self.kind}.{self.statistic}{suffix}"

    @classmethod
    def parse(cls, name: str) -> "Variant":
        """Inverse of :attr:`name`; raises ``ValueError`` on anything non-canonical."""
        match = _NAME.match(name) if isinstance(name, str) else None
        if match is None:
            raise ValueError(f"not a ROUGE variant name: {name!r} (expected '<kind>.<statistic>[flags]')")
        flags = match["flags"].split(",") if match["flags"] else []
        unknown = [f for f in flags if f not in FLAGS]
        if unknown:
            raise ValueError(f"unknown flag(s) {unknown} in {name!r}; allowed: {FLAGS}")
        if flags != sorted(set(flags), key=FLAGS.index):
            raise ValueError(f"flags in {name!r} must be distinct and in the order {FLAGS}")
        variant = cls(
            kind=match["kind"],
            statistic=match["statistic"],
            stem="stem" in flags,
            stop="stop" in flags,
            aggregation="max" if "maxref" in flags else "pooled",
            resplit="resplit" in flags,
        )
        assert variant.name == name
        return variant


def as_variant(item: "Variant | str") -> Variant:
    """Accept a :class:`Variant` or its name."""
    if isinstance(item, Variant):
        return item
    return Variant.parse(item)


def variant_grid(
    kinds: tuple[str, ...] = KINDS,
    statistics: tuple[str, ...] = STATISTICS,
    stem: tuple[bool, ...] = (False, True),
    stop: tuple[bool, ...] = (False, True),
    aggregation: str = "pooled",
) -> list[Variant]:
    """Cartesian product of the given axes, in a stable order."""
    return [
        Variant(kind=k, statistic=s, stem=st, stop=sw, aggregation=aggregation)
        for k, st, sw, s in product(kinds, stem, stop, statistics)
    ]


def graham_grid() -> list[Variant]:
    """Graham (2015)'s summary-level ROUGE grid: 8 kinds x stem x stop x P/R/F = 96 variants.

    Each one becomes Graham's 2 system-level variants (mean or median over a
    system's summaries, the analyses' ``aggregate``), giving the paper's 192.
    """
    return variant_grid(kinds=GRAHAM_KINDS)
