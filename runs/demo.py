"""A seeded synthetic meta-evaluation dataset with the structure of real ones.

Each system has a quality q_i, each input a difficulty d_j, each summary an interaction
e_ij; the latent quality is t_ij = q_i + d_j + e_ij. Three annotators judge relevance on a
1–5 scale (t plus annotator noise, rounded). Four automatic metrics track t with differing
fidelity; one is a divergence (lower is better). So a user can see, on data whose truth is
known, that the analyses rank the metrics by fidelity.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metaeval.errors import Argument, ConflictError, Message, NewIdsError
from metaeval.batch import LoadReport
from metaeval.runs.engine import parameters

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory
    from metaeval.core import Store

HUMAN = "expert.relevance"
#: The level of the demo's intervals (95%) and tests.
ALPHA = 0.05
#: metric name -> (weight on latent quality, weight on input difficulty, noise sd, direction)
METRICS = {
    "sim-high.f1": (1.0, 0.0, 0.5, "higher"),
    "sim-medium.f1": (1.0, 0.3, 1.2, "higher"),
    "sim-low.f1": (0.4, 0.8, 1.5, "higher"),
    "sim-divergence": (-1.0, 0.0, 0.9, "lower"),
}


def generate(n_systems: int = 12, n_inputs: int = 50, n_annotators: int = 3, seed: int = 0) -> pd.DataFrame:
    """A long table (system, input, measure, value, annotator) as ``metaeval ingest table`` reads it."""
    if n_systems < 3 or n_inputs < 3:
        raise ValueError("the demo needs at least 3 systems and 3 inputs")
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, n_systems)[:, None]
    difficulty = rng.normal(0.0, 0.7, n_inputs)[None, :]
    latent = quality + difficulty + rng.normal(0.0, 0.8, (n_systems, n_inputs))
    systems = [f"S{i:02d}" for i in range(n_systems)]
    inputs = [f"D{j:03d}" for j in range(n_inputs)]
    sys_grid, inp_grid = np.meshgrid(systems, inputs, indexing="ij")
    frames = []
    for a in range(n_annotators):
        noisy = latent + rng.normal(0.0, 0.7, latent.shape)
        likert = np.clip(np.rint(3.0 + 0.9 * noisy), 1, 5)
        frames.append(_long(sys_grid, inp_grid, HUMAN, likert, annotator=str(a)))
    for name, (w_quality, w_difficulty, noise, _direction) in METRICS.items():
        values = w_quality * latent + w_difficulty * difficulty + rng.normal(0.0, noise, latent.shape)
        frames.append(_long(sys_grid, inp_grid, name, np.round(values, 6), annotator=None))
    return pd.concat(frames, ignore_index=True)


def _long(sys_grid, inp_grid, measure, values, annotator) -> pd.DataFrame:
    return pd.DataFrame({
        "system": sys_grid.ravel(), "input": inp_grid.ravel(), "measure": measure,
        "value": values.ravel(), "annotator": annotator,
    })


def write(directory: Path, **kwargs) -> Path:
    """Write the demo table as CSV into ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "demo.csv"
    generate(**kwargs).to_csv(path, index=False)
    return path


#: Where else a demo can go: another dataset, or another warehouse (a file the command line's ``--db``
#: names; ``Store(path)`` in Python).
_ELSEWHERE = ("another dataset (", Argument("dataset", placeholder="NAME"), ") or warehouse (",
              Argument("db", placeholder="PATH"), ")")


def load(wh: Store, dataset: str, directory: Path, *, n_systems: int = 12, n_inputs: int = 50,
         seed: int = 0, command: str | None = None) -> LoadReport:
    """Write the demo table into ``directory`` and load it into ``dataset`` of ``wh``.

    The demo has no ``--replace``: a dataset already holding other values for the demo's
    cells (a demo of another seed or size, or other data of that name) is a conflict whose
    message says to run the demo into another dataset or warehouse instead.
    """
    from metaeval.ingest import table

    path = write(directory, n_systems=n_systems, n_inputs=n_inputs, seed=seed)
    batch = table.parse(path, lower=lower_is_better())
    batch.file = f"<demo seed={seed} systems={n_systems} inputs={n_inputs}>"
    try:
        [report] = wh.load(dataset, [batch], command=command)
    except ConflictError as exc:
        raise ConflictError(exc.conflicts, exc.total, headline=Message(
            f"dataset {dataset!r} already holds other values for {exc.total} of the demo's values or measures "
            "(a demo of another ", Argument("seed"), ", ", Argument("n_systems"), " or ", Argument("n_inputs"),
            "?); nothing was written. Run this demo into ", *_ELSEWHERE)) from None
    except NewIdsError as exc:
        raise NewIdsError(exc.dataset, exc.systems, exc.inputs, advice=Message(
            "the dataset holds other systems or inputs (a demo of other ", Argument("n_systems"), " or ",
            Argument("n_inputs"), "?); run this demo into ", *_ELSEWHERE)) from None
    return report


def lower_is_better() -> list[str]:
    return [name for name, spec in METRICS.items() if spec[3] == "lower"]


def analyse(wh: Store, dataset: str, *, k: int = parameters.DEFAULT_K, seed: int = parameters.DEFAULT_SEED,
            progress: ProgressFactory | None = None) -> list:
    """The demo's first analysis of ``dataset``: correlations of every metric with the human
    judgment, 95% Boot-Both CIs and Perm-Both tests (Holm-corrected within each metric's
    family), at the system and summary level, Pearson and Kendall; persisted like the commands.
    A ``(analysis, run summary)`` pair per analysis."""
    from metaeval.runs.metrics import comparisons, correlations, intervals
    from metaeval.runs.engine import parameters, runner, selection

    scope = selection.resolve_scope(wh, dataset, HUMAN, levels=("system", "summary"), coefficients=("pearson", "kendall"))
    analyses = (correlations.correlate_analysis(scope),
                intervals.ci_analysis(scope, "boot-both", k, ALPHA, seed),
                comparisons.compare_analysis(scope, "perm-both", k, ALPHA, seed, parameters.DEFAULT_ALTERNATIVE,
                                        parameters.DEFAULT_CORRECTION, parameters.DEFAULT_CORRECTION_GROUP))
    return [(analysis, runner.run(wh, scope, analysis, progress=progress)) for analysis in analyses]


def report(wh: Store, dataset: str, *, k: int = parameters.DEFAULT_K,
           seed: int = parameters.DEFAULT_SEED) -> pd.DataFrame:
    """One row per metric, level and coefficient of the demo's analysis: correlation, CI and
    the number of metrics it beats significantly."""
    from metaeval import schema

    return wh.sql(schema.read("demo_report"), [dataset, HUMAN, k, seed])
