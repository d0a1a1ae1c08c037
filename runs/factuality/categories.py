"""categories: error categories of a human judgment (issue 26 item 4; table ``error_categories``).

Benchmarks of factuality metrics annotate each summary with an overall judgment and one judgment
per error type (FRANK, Pagnoni et al. 2021: entity, predicate, circumstance, coreference, ...).
Given those per-category human measures (``categories``: category -> measure) and variants of
the overall judgment with one category ignored (``ablations``: category -> measure), each row
gives, for one metric, level, coefficient and category:

- ``category_correlation`` = r(metric, category measure): what the metric captures of that error;
- ``overall_correlation`` = r(metric, overall judgment), ``ablated_correlation`` = r(metric,
  overall judgment without the category);
- ``correlation_drop`` = overall_correlation - ablated_correlation. FRANK's ablation: a positive
  drop means the metric's agreement with the humans rests on that category (ignoring it lowers
  the correlation); negative, the category works against the metric.

All three correlations are the ``correlate`` computation
(:func:`metaeval.runs.metrics.correlations.evaluate_correlation`: levels, coefficients, system-inputs
protocol, conventions) on the cells the row's measures share, so the drop compares like with
like. An undefined correlation (a constant category) is NULL, and so is a drop that needs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import analyse as engine, selection
from metaeval.runs.metrics.correlations import evaluate_correlation
from metaeval.runs.engine.parameters import DEFAULT_SYSTEM_INPUTS, Params, check_system_inputs, setting
from metaeval.runs.engine.runner import Analysis, Task

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store
    from metaeval.runs.engine.runner import ProgressFactory

#: What the drop is, recorded in every row's conventions and said by the table and the figure.
DROP = ("correlation_drop = r(metric, overall judgment) - r(metric, overall judgment with the category ignored); "
        "> 0: the metric's agreement rests on the category (FRANK's ablation, Pagnoni et al. 2021)")
KEY_COLUMNS = ("metric", "level", "coefficient", "category", "category_measure", "ablated_measure")


@dataclass(frozen=True)
class CategoryParams(Params):
    """categories: per-category correlations and ablation drops (table ``error_categories``)."""

    table: ClassVar[str] = "error_categories"
    system_inputs: str = DEFAULT_SYSTEM_INPUTS
    categories: tuple = setting((), column=False, argument=False)   # ((category, measure), ...), recorded
    ablations: tuple = setting((), column=False, argument=False)


def pairs(given: Mapping[str, str] | Sequence[str], what: str) -> dict[str, str]:
    """``CATEGORY=MEASURE`` strings (or a mapping) as {category: measure}; a malformed or
    repeated category is a one-line error naming ``what`` (the parameter)."""
    if isinstance(given, Mapping):
        given = [f"{k}={v}" for k, v in given.items()]
    out: dict[str, str] = {}
    for text in given:
        category, eq, measure = str(text).partition("=")
        category, measure = category.strip(), measure.strip()
        if not eq or not category or not measure:
            raise WarehouseError(Message(Argument(what, [text]), ": expected CATEGORY=MEASURE, e.g. entity=human.entity"))
        if category in out:
            raise WarehouseError(Message(Argument(what), f": category {category!r} given twice ({out[category]!r} and "
                                                       f"{measure!r})"))
        out[category] = measure
    return out


def category_analysis(scope: selection.Scope, categories: Mapping[str, str], ablations: Mapping[str, str],
                      system_inputs: str = DEFAULT_SYSTEM_INPUTS) -> Analysis:
    """One task per metric, level, coefficient and category; its measures: the metric, the
    category's measure and/or its ablated judgment, then the overall judgment (last, as the human)."""
    params = CategoryParams(check_system_inputs(system_inputs), tuple(categories.items()), tuple(ablations.items()))
    names = list(dict.fromkeys([*categories, *ablations]))
    tasks = []
    for m in scope.metrics:
        for lv in scope.levels:
            for c in scope.coefficients:
                for cat in names:
                    cm, am = categories.get(cat), ablations.get(cat)
                    key = {"metric": m, "level": lv, "coefficient": c, "category": cat,
                           "category_measure": cm, "ablated_measure": am}
                    tasks.append(Task(key, (m, *(x for x in (cm, am) if x is not None), scope.human)))
    return Analysis("categories", params, KEY_COLUMNS, tasks, evaluate_category,
                    evaluate_keys=("level", "coefficient", "category_measure", "ablated_measure"))


def evaluate_category(arrays, level, coefficient, category_measure, ablated_measure,
                      system_inputs=DEFAULT_SYSTEM_INPUTS) -> dict:
    """The row of one task (see the module docstring); ``arrays``: metric, [category], [ablated], overall."""
    X, *between, H = arrays
    C = between.pop(0) if category_measure is not None else None
    A = between.pop(0) if ablated_measure is not None else None
    overall = evaluate_correlation([X, H], level, coefficient, system_inputs)
    category = evaluate_correlation([X, C], level, coefficient, system_inputs)["value"] if C is not None else None
    ablated = evaluate_correlation([X, A], level, coefficient, system_inputs)["value"] if A is not None else None
    r = overall["value"]
    drop = r - ablated if r is not None and ablated is not None else None
    return {"category_correlation": category, "overall_correlation": r, "ablated_correlation": ablated,
            "correlation_drop": drop, "conventions": {**overall["conventions"], "drop": DROP}}


def categories(wh: Store, dataset: str, human: str, categories: Mapping[str, str] | Sequence[str] = (),
               ablations: Mapping[str, str] | Sequence[str] = (), metrics: Sequence[str] = (),
               levels: Sequence[str] = (), coefficients: Sequence[str] = (), *,
               system_inputs: str = DEFAULT_SYSTEM_INPUTS, jobs: int = 1, force: bool = False,
               progress: ProgressFactory | None = None) -> engine.Outcome:
    """Compute (what is not stored) and persist the rows of the scope; ``human`` is the overall
    judgment, ``categories`` / ``ablations`` ``CATEGORY=MEASURE`` strings or mappings (human
    measures of ``dataset``). Every argument is checked before anything is written."""
    cats, abls = pairs(categories, "categories"), pairs(ablations, "ablations")
    if not cats and not abls:
        raise WarehouseError("give at least one category measure or ablated judgment (CATEGORY=MEASURE)")
    scope = selection.resolve_scope(wh, dataset, human, metrics, levels, coefficients)
    kinds = wh.measure_kinds(dataset)
    humans = set(kinds.loc[kinds["kind"] == "human", "measure"])
    for what, given in (("categories", cats), ("ablations", abls)):
        for cat, measure in given.items():
            if measure not in humans:
                raise WarehouseError(Message(Argument(what, [f"{cat}={measure}"]), f": dataset {dataset!r} has no "
                                             f"human judgment {measure!r}; its human judgments: "
                                             f"{', '.join(sorted(humans))}"))
            if measure == human:
                raise WarehouseError(Message(Argument(what, [f"{cat}={measure}"]), " is the overall judgment itself (",
                                             Argument("human"), ")"))
    extra = tuple(dict.fromkeys([*cats.values(), *abls.values()]))
    data = selection.load_data(wh, selection.Scope(dataset, human, (*scope.metrics, *extra), scope.levels,
                                                   scope.coefficients))
    scope, skipped = selection.without_sparse_metrics(data, scope)
    analysis = category_analysis(scope, cats, abls, system_inputs)
    out, = engine.run_all(wh, scope, [analysis], data=data, skipped=skipped, jobs=jobs, force=force,
                          progress=progress)
    return out


def rows(wh: Store, out: engine.Outcome) -> pd.DataFrame:
    """The latest rows of the outcome's setting: its categories with their measures, in the
    scope's order (metrics, levels, coefficients) and the categories' order as given."""
    frame = out.rows(wh)
    params = out.analysis.params
    cats, abls = dict(params.categories), dict(params.ablations)
    names = list(dict.fromkeys([*cats, *abls]))
    keep = [c in names and cm == cats.get(c) and am == abls.get(c) for c, cm, am in
            zip(frame["category"], _nulls(frame["category_measure"]), _nulls(frame["ablated_measure"]))]
    frame = frame.loc[keep]
    scope = out.scope
    ranks = {"metric": scope.metrics, "level": scope.levels, "coefficient": scope.coefficients, "category": names}
    order = frame.assign(**{f"_{c}": frame[c].map({v: i for i, v in enumerate(values)}) for c, values in ranks.items()})
    return (order.sort_values([f"_{c}" for c in ranks], kind="stable").drop(columns=[f"_{c}" for c in ranks])
            .reset_index(drop=True))


def _nulls(column) -> list:
    return [None if not isinstance(v, str) else v for v in column]
