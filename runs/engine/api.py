"""The Python API: :class:`Warehouse`, the storage core with every analysis family as a method.

Each method is generated from its family's declaration (:mod:`metaeval.runs.engine.families`): the same
names, defaults, checks and errors as the command line, and a real signature
(``help(wh.ci)`` lists its keywords). The correlation analyses' Outcomes (``api.correlate``,
``api.ci``, ``api.compare``: what was computed and skipped, then ``.rows(wh)``) are
:mod:`metaeval.runs.metrics.correlation_runs`'s, re-exported here::

    from metaeval.runs import Warehouse
    from metaeval.runs.engine import api

    with Warehouse("warehouse.duckdb") as wh:
        out = api.ci(wh, "summeval", "expert.relevance", metrics=["rouge-*.f1"], levels=["system"])
        out.rows(wh)          # metric, level, coefficient, estimate, lower, upper, ...
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from metaeval import core
from metaeval.runs.engine import parameters
from metaeval.runs.metrics.correlation_runs import Outcome, ci, compare, correlate  # noqa: F401  (the Outcomes' API)

if TYPE_CHECKING:
    from metaeval.runs.metrics.evaluate import Evaluation

class Warehouse(core.Store):
    """A :class:`metaeval.Store` with the analyses as methods (``metaeval.runs.Warehouse``).

    The storage core does not know the analyses (it sits below them), so they are added here::

        from metaeval.runs import Warehouse

        with Warehouse("warehouse.duckdb") as wh:
            wh.add_scores("realsumm", "mymetric.csv")
            ev = wh.evaluate("realsumm", "litepyramid.recall", metrics=["mymetric"])
            ev.table                      # metric, level, coefficient, correlation, lower, upper, rank, ...
            wh.ci("realsumm", "litepyramid.recall", metrics=["mymetric"], levels=["system"])   # a DataFrame

    Every registered analysis family (:data:`metaeval.runs.engine.families.FAMILIES`) is a method, by its
    Python name (``system-tests`` -> ``wh.system_tests(...)``), generated from its declaration
    (:func:`metaeval.runs.engine.family_methods.method`): its
    :meth:`~metaeval.runs.engine.families.Family.run` (the declared options checked, defaults filled,
    then ``compute``), returning the latest rows of its setting (several tables: ``{table:
    rows}``), with no method to write here; ``evaluate`` is the orchestrator of several.
    """

    def __getattr__(self, name: str):
        """``wh.<family>(...)``: :meth:`Family.run` of the registered family ``name`` (``_`` for
        ``-``) on this warehouse."""
        if name.startswith("_"):
            raise AttributeError(name)
        from metaeval.runs.engine.families import FAMILIES

        key = name.replace("_", "-")
        if key in FAMILIES and FAMILIES[key].python_name == name:
            return functools.partial(FAMILIES[key].run, self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def add_scores(self, dataset: str, sources, **options):
        """Ingest score tables (paths or DataFrames): :func:`metaeval.runs.metrics.evaluate.add_scores`."""
        from metaeval.runs.metrics import evaluate

        return evaluate.add_scores(self, dataset, sources, **options)

    def evaluate(self, dataset: str, human: str, scores: Sequence = (), *, metrics: Sequence[str] = (),
                 against: Sequence[str] = (), levels: Sequence[str] = (), coefficients: Sequence[str] = (),
                 method: str = "perm-both", correction: str = "holm", ci_method: str = "boot-both",
                 k: int = parameters.DEFAULT_K, seed: int = parameters.DEFAULT_SEED,
                 alpha: float = parameters.DEFAULT_ALPHA, all_pairs: bool = False,
                 system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS, lower: Sequence[str] = (),
                 replace: bool = False, allow_new: bool = False, cluster_rule: str = parameters.DEFAULT_CLUSTER_RULE,
                 where: Sequence = (), control: str | None = None, aggregate: str = parameters.DEFAULT_AGGREGATE,
                 human_aggregate: str | None = None, replicates: str = "mean", resample_clusters: str | None = None,
                 jobs: int = 1, force: bool = False, progress=None) -> Evaluation:
        """Ingest ``scores`` (paths or DataFrames; may be empty) into ``dataset`` and evaluate the
        metrics they hold and those matched by ``metrics`` (globs) against ``human`` and the other
        metrics (``against``): :func:`metaeval.runs.metrics.evaluate.evaluate`, as ``metaeval evaluate``
        does. The keywords are the command's options by their Python names, plural for a
        repeatable flag as in every family (``--metric`` -> ``metrics``, ``--level`` -> ``levels``,
        ``--coefficient`` -> ``coefficients``), with its defaults and checks (``k``, ``seed``,
        ``alpha``, ``where`` as the families check them)."""
        from metaeval.runs.metrics import evaluate
        from metaeval.runs.engine.options import ALPHA, K, SEED

        for option, value in ((K, k), (SEED, seed), (ALPHA, alpha)):
            option.value(value)
        if human_aggregate is not None:
            aggregate = parameters.aggregate_value(aggregate, human_aggregate)
        return evaluate.evaluate(self, dataset, human, scores, metrics=metrics, against=against, levels=levels,
                                 coefficients=coefficients, method=method, correction=correction,
                                 ci_method=ci_method, k=k, seed=seed, alpha=alpha, all_pairs=all_pairs,
                                 system_inputs=system_inputs, lower=lower, replace=replace, allow_new=allow_new,
                                 cluster_rule=cluster_rule, where=where, control=control,
                                 aggregate=aggregate, replicates=replicates, resample_clusters=resample_clusters,
                                 jobs=jobs, force=force, progress=progress)

    def evaluate_judge(self, dataset: str, preferences, **options):
        """:func:`metaeval.runs.votes.judge_evaluation.evaluate_judge`: ingest a new judge's preference file
        and judge it with the stored judges against the human preference."""
        from metaeval.runs.votes import judge_evaluation

        return judge_evaluation.evaluate_judge(self, dataset, preferences, **options)


def _install_methods() -> None:
    """Every registered family's method on :class:`Warehouse` (:func:`metaeval.runs.engine.family_methods.method`)."""
    from metaeval.runs.engine.families import FAMILIES
    from metaeval.runs.engine.family_methods import method

    for f in FAMILIES.values():
        if f.python_name not in Warehouse.__dict__:
            fn = method(f)
            fn.__module__, fn.__qualname__ = __name__, f"Warehouse.{f.python_name}"   # documented as the class's
            setattr(Warehouse, f.python_name, fn)


_install_methods()
