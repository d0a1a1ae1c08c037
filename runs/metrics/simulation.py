"""Running the simulations (:mod:`analyses.simulation`) over the warehouse, persisted.

Like :mod:`metaeval.runs.engine.runner` (whose runs, writer, existing-row lookup and progress bar this
module reuses): every command is a row of ``analysis_runs``; results carry the fingerprint of
the data they were computed from and a conventions JSON; a repeated command computes nothing.

A simulation is cut into **units**, each a block of ``simulation.TRIAL_BLOCK`` consecutive
trials of one group of configurations (coverage: one metric and CI method, every level and
coefficient asked; power: one proportion, every test, level and coefficient). A finished unit
writes one row per configuration to the ``*_blocks`` table (its partial counts); once every
block of a configuration is in, its final row goes to ``ci_coverage`` / ``power``. So:

- an interrupted simulation keeps its finished blocks and the same command resumes;
- a block is reused whenever its key, parameters, trial range and data fingerprint match
  (a larger ``--trials`` only computes the new blocks);
- units run in ``jobs`` worker processes; trial t's numbers depend only on the seed and t
  (see :mod:`analyses.simulation`), so the rows are identical whatever ``jobs`` is.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval import schema
from metaeval.analyses import conclusions
from metaeval.analyses import simulation as sim
from metaeval.analyses.stats import protocols
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.analyses.text import rouge
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError, no_human_judgment
from metaeval.analyses.stats import vocabulary
from metaeval.runs.engine import bookkeeping, parameters, runner, selection
from metaeval.runs.texts import scoring
from metaeval.runs.engine.parameters import Params
from metaeval.runs.metrics.simulation_engine import Group, Simulation, Summary, execute

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory

SIM_LEVELS = ("system", "summary")
POWER_METHODS = ("williams", "boot-both", "perm-both")
PROPORTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
ROUGE_VARIANTS = ("recall", "f1")
NORMALITY_ALPHA = 0.05


# --- the parameters of the result tables (the shared machinery: simulation_engine.py) -------------
@dataclass(frozen=True)
class CoverageBlockParams(Params):
    """simulate coverage, one block of trials (table ``ci_coverage_blocks``); ``k`` None for Fisher."""

    table: ClassVar[str] = "ci_coverage_blocks"
    method: str
    alpha: float
    k: int | None
    seed: int


@dataclass(frozen=True)
class CoverageParams(CoverageBlockParams):
    """simulate coverage, the blocks pooled (table ``ci_coverage``)."""

    table: ClassVar[str] = "ci_coverage"
    trials: int


@dataclass(frozen=True)
class PowerBlockParams(Params):
    """simulate power, one block of trials (table ``power_blocks``); ``k`` None for Williams."""

    table: ClassVar[str] = "power_blocks"
    variant: str
    method: str
    alpha: float
    k: int | None
    seed: int


@dataclass(frozen=True)
class PowerParams(PowerBlockParams):
    """simulate power, the blocks pooled (table ``power``)."""

    table: ClassVar[str] = "power"
    trials: int


# --- coverage -----------------------------------------------------------------------------------
def simulate_coverage(wh: Store, dataset: str, human: str, metrics: Sequence[str], *,
                      levels: Sequence[str] = (), coefficients: Sequence[str] = (),
                      methods: Sequence[str] = (), trials: int = 1000, k: int = parameters.DEFAULT_K, alpha: float = 0.05,
                      seed: int = 0, system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS, jobs: int = 1,
                      force: bool = False, progress: ProgressFactory | None = None) -> Summary:
    """The CI coverage simulation of each metric x level x coefficient x method; persisted.

    ``system_inputs`` ("all" or "judged", as ``metaeval ci``): "judged" simulates on the inputs
    the human judged only -- the rows (and fingerprints) are those of a dataset holding only
    them; "all" splits every input the metric scored, and each half-A interval is the one ``ci
    --system-inputs all`` computes (:func:`analyses.simulation.coverage_trials`)."""
    scope = selection.resolve_scope(wh, dataset, human, metrics, levels or SIM_LEVELS, coefficients)
    methods = selection.choices(methods, sim.CI_METHODS, "CI method")
    _check_run_options(trials, k, alpha, seed)
    if any(m != "fisher" for m in methods):
        parameters.check_k(k, alpha, "interval")
    parameters.system_inputs_parameter(system_inputs)
    data = selection.load_data(wh, scope)
    arrays, unjudged, tasks_by_method = {}, {}, {m: [] for m in methods}
    for metric in scope.metrics:
        read, unjudged[metric] = _simulated_data(data, metric, human, system_inputs)
        fingerprint, n_sys, n_in = read.fingerprint([metric, human])
        arrays[metric] = read.restrict([metric, human])[0]
        n_judged = int(protocols.judged_inputs(arrays[metric][1]).sum())
        if n_sys < 4 or n_judged < 2:
            raise WarehouseError(f"{metric!r} and {human!r} cover {n_sys} systems x {n_in} inputs ({n_judged} "
                                 "judged); splitting into halves needs at least 4 systems and 2 judged inputs")
        for method in methods:
            tasks_by_method[method] += [runner.Task({"metric": metric, "level": lv, "coefficient": c},
                                                    (metric, human), fingerprint, n_sys, n_in)
                                        for lv in scope.levels for c in scope.coefficients]
    groups = []
    for method in methods:
        block = CoverageBlockParams(method, alpha, None if method == "fisher" else k, seed)
        params = block.columns()
        groups.append(Group(
            final=runner.Analysis("simulate coverage", CoverageParams(*params.values(), trials),
                                  ("metric", "level", "coefficient"), [], None),
            blocks=runner.Analysis("simulate coverage", block,
                                   ("metric", "level", "coefficient", "block", "trials"), [], None),
            tasks=tasks_by_method[method],
            conventions=lambda task, params=params: _coverage_conventions(task, params, trials, system_inputs,
                                                                          unjudged[task.key["metric"]])))
    s = Simulation(
        "simulate coverage", scope, groups, trials, seed,
        selection.data_fingerprint(data, [*scope.metrics, human]),
        {"dataset": dataset, "human": human, "metrics": list(scope.metrics), "levels": list(scope.levels),
         "coefficients": list(scope.coefficients), "methods": list(methods), "trials": trials, "k": k,
         "alpha": alpha, "trial_block": sim.TRIAL_BLOCK, "system_inputs": system_inputs},
        _coverage_unit, {"arrays": arrays, "methods": methods, "k": k, "alpha": alpha, "seed": seed,
                         "system_inputs": system_inputs},
        lambda g, task: (task.key["metric"], g), _sum_coverage)
    return execute(s, wh, jobs=jobs, force=force, progress=progress)


def _coverage_unit(context: dict, item: tuple) -> list:
    (metric, g, _), trials, wanted = item
    X, Z = context["arrays"][metric]
    configs = [key[1:] for _, key in wanted]
    result = sim.coverage_trials(X, Z, context["methods"][g], configs, trials, k=context["k"],
                                 alpha=context["alpha"], seed=context["seed"], system_inputs=context["system_inputs"])
    out = []
    for (gg, key), config in zip(wanted, configs):
        c = result[config].counts()
        out.append((gg, key, {"contains": c.contains, "too_high": c.too_high, "too_low": c.too_low,
                              "undefined": c.undefined}))
    return out


def _sum_coverage(blocks: list[dict]) -> dict:
    counts = sim.CoverageCounts(0, 0, 0, 0, 0)
    for b in blocks:
        counts = counts + sim.CoverageCounts(int(b["trials"]), *(int(b[c]) for c in
                                                                  ("contains", "too_high", "too_low", "undefined")))
    return {"contains": counts.contains, "too_high": counts.too_high, "too_low": counts.too_low,
            "undefined": counts.undefined, "coverage": None if np.isnan(counts.coverage) else counts.coverage}


def with_coverage_tests(rows: pd.DataFrame) -> pd.DataFrame:
    """``ci_coverage`` rows with Table 1's comparison of the CI methods of each metric, level,
    coefficient, alpha and seed (Deutsch, Dror & Roth 2021): ``closest`` (the method whose
    coverage is closest to 1 - alpha and below 1), ``z`` and ``p_z`` (the one-tailed
    difference-of-proportions z-test of the closest method against this one, on contains of
    trials - undefined: :func:`metaeval.analyses.stats.proportions.closest_coverage`) and
    ``bold`` (the closest method, when every test against it is significant at alpha, uncorrected
    as in the paper; decided by :func:`metaeval.analyses.conclusions.decide`). Computed when
    shown, not stored."""
    from metaeval.analyses import conclusions
    from metaeval.analyses.stats import proportions

    if rows.empty:
        return rows.assign(closest=pd.Series(dtype=bool), z=pd.Series(dtype=float), p_z=pd.Series(dtype=float),
                           bold=pd.Series(dtype=bool))
    parts = []
    keys = ["dataset", "metric", "human", "level", "coefficient", "alpha", "seed"]   # not k: NULL for fisher
    for _, g in rows.groupby(keys, sort=False, dropna=False):
        alpha = float(g["alpha"].iloc[0])
        t = proportions.closest_coverage(g["contains"].to_numpy(), (g["trials"] - g["undefined"]).to_numpy(), 1 - alpha)
        others = ~t["closest"]
        verdict = conclusions.decide(t["p"][others], formula="parametric", k=None, correction="none", alpha=alpha)
        bold = t["closest"] & bool(others.any()) & bool(verdict.significant.all())
        parts.append(g.assign(closest=t["closest"], z=t["z"], p_z=t["p"], bold=bold))
    return pd.concat(parts).loc[rows.index]


def _simulated_data(data: selection.Data, metric: str, human: str, system_inputs: str) -> tuple[selection.Data, int]:
    """The data a simulation of ``metric`` reads (under "judged": the judged inputs' columns
    only, so its fingerprint is that of a dataset holding only them), and how many inputs the
    metric scored that the human did not judge."""
    (X, Z), _, _ = data.restrict([metric, human])
    unjudged = protocols.unjudged_inputs(Z, X)
    if system_inputs != "judged" or not unjudged:
        return data, unjudged
    judged = protocols.judged_inputs(data.values[human])
    return selection.Data(data.systems, tuple(np.asarray(data.inputs)[judged]),
                       {m: v[:, judged] for m, v in data.values.items()}, data.directions), unjudged


def _system_inputs_conventions(system_inputs: str, unjudged: int, how: dict[str, str]) -> dict:
    """The protocol of a simulated row (``how``: what it means for this simulation, per
    protocol). Without unjudged inputs both protocols are the same computation on the same cells
    (same fingerprint, so one's rows serve the other): the row says so rather than naming one."""
    if not unjudged:
        return {"system_inputs": "all = judged (every input scored is judged)", "unjudged_inputs": 0}
    return {"system_inputs": system_inputs,
            "system_inputs_rule": f"{protocols.DESCRIPTIONS[system_inputs]}; {how[system_inputs]}",
            "unjudged_inputs": unjudged}


def _coverage_conventions(task: runner.Task, params: dict, trials: int, system_inputs: str = "all",
                          unjudged: int = 0) -> dict:
    fisher = params["method"] == "fisher"
    return {
        **_system_inputs_conventions(system_inputs, unjudged, {
            "judged": "the unjudged inputs left out before the trials",
            "all": "the halves split every input the metric scored, judged or not"}),
        "level": task.key["level"], "coefficient": task.key["coefficient"],
        "kendall_variant": "b" if task.key["coefficient"] == "kendall" else None,
        "method": params["method"], "alpha": params["alpha"], "k": params["k"], "trials": trials,
        "split": "systems and inputs each permuted at random; half A = the first floor(n/2), half B = the "
                 "next floor(n/2) (the middle one left out when n is odd); the judged and the unjudged inputs "
                 "split separately (each half gets half of each)",
        "interval": ("fisher_ci on half A (Bonett-Wright constants)" if fisher else
                     "bootstrap_ci on half A: percentile (numpy linear interpolation), two-sided")
                    + ", on the arrays and inputs pairing metaeval ci gives half A under the system-inputs protocol",
        "outcomes": "contains: lower <= r_B <= upper; too_high: r_B > upper; too_low: r_B < lower; "
                    "undefined: a bound or r_B is NaN; coverage = contains / (trials - undefined)",
        "rng": f"trial t: split from SeedSequence(seed, spawn_key=({sim.SPLIT_STREAM}, t)); resamples of "
               f"bootstrap_ci with seed = SeedSequence(seed, spawn_key=({sim.RESAMPLE_STREAM}, t))"
               ".generate_state(1, uint64)[0]",
        "seed": params["seed"], "trial_block": sim.TRIAL_BLOCK, "nan_policy": NAN_POLICY,
    }


# --- power ----------------------------------------------------------------------------------------
def simulate_power(wh: Store, dataset: str, human: str, *, variant: str = "recall",
                   proportions: Sequence[float] = PROPORTIONS, levels: Sequence[str] = (),
                   coefficients: Sequence[str] = ("pearson",), methods: Sequence[str] = (),
                   trials: int = 1000, k: int = parameters.DEFAULT_K, alpha: float = 0.05, seed: int = 0,
                   system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS, jobs: int = 1, force: bool = False,
                   progress: ProgressFactory | None = None) -> Summary:
    """The power simulation: tests of ROUGE-1 > R_k at each proportion, level, coefficient; persisted.

    ``system_inputs`` ("all" or "judged", as ``metaeval compare``): "judged" simulates on the
    summaries of the inputs the human judged only (the rows are those of a dataset holding only
    them: R_k is drawn on that corpus); "all" also scores the other inputs' summaries (of the
    systems the human judged), which the metrics' system means average, each trial's test being
    the one ``compare --system-inputs all`` runs."""
    if variant not in ROUGE_VARIANTS:
        raise WarehouseError(f"unknown ROUGE variant {variant!r}; choose from {', '.join(ROUGE_VARIANTS)}")
    proportions = _proportions(proportions)
    methods = selection.choices(methods or POWER_METHODS, sim.TEST_METHODS, "test")
    _check_run_options(trials, k, alpha, seed)
    if any(m != "williams" for m in methods):
        parameters.check_k(k, alpha, "test")
    parameters.system_inputs_parameter(system_inputs)
    human_scope = _human_scope(wh, dataset, human, levels or SIM_LEVELS, coefficients)
    summaries = scoring.summary_rows(wh, dataset)  # fails, naming the ingest command, without texts
    data = selection.load_data(wh, human_scope)
    Z = data.values[human]
    judged_systems, judged_inputs = set(data.systems), pd.Index(data.inputs)
    # inputs with summaries of judged systems that the human did not judge, in corpus order
    unjudged = list(dict.fromkeys(i for system, i, *_ in summaries
                                  if system in judged_systems and i not in judged_inputs))
    if system_inputs == "judged" and unjudged:
        summaries = [r for r in summaries if r[1] in judged_inputs]
    corpus, keys = scoring.corpus_of(summaries)
    if system_inputs == "all" and unjudged:
        judged_inputs = judged_inputs.append(pd.Index(unjudged))
        Z = np.hstack([Z, np.full((Z.shape[0], len(unjudged)), np.nan)])
    rows = pd.Index(data.systems).get_indexer(keys["system"])
    cols = judged_inputs.get_indexer(keys["input"])
    placed = (rows >= 0) & (cols >= 0)
    n_sys = len(np.unique(rows[placed]))
    if n_sys < 3:
        raise WarehouseError(f"the summaries of {dataset!r} and {human!r} share {n_sys} systems: too few to "
                             "correlate")
    positions = (rows, cols, placed)
    X = _grid(rouge(corpus, [f"rouge-1.{variant}"])[f"rouge-1.{variant}"][None], positions, Z.shape)[0]
    human_fp, n_sys, _ = data.fingerprint([human])
    n_in = Z.shape[1]
    # the corpus simulated on (under "judged", the judged inputs' summaries only) and the human cells
    fingerprint = hashlib.sha256((_corpus_digest(corpus) + human_fp + variant).encode()).hexdigest()
    scope = selection.Scope(dataset, human, (), human_scope.levels, human_scope.coefficients)
    groups = []
    for method in methods:
        block = PowerBlockParams(variant, method, alpha, None if method == "williams" else k, seed)
        params = block.columns()
        tasks = [runner.Task({"level": lv, "coefficient": c, "proportion": p}, (human,), fingerprint, n_sys, n_in)
                 for p in proportions for lv in scope.levels for c in scope.coefficients]
        groups.append(Group(
            final=runner.Analysis("simulate power", PowerParams(*params.values(), trials),
                                  ("level", "coefficient", "proportion"), [], None),
            blocks=runner.Analysis("simulate power", block,
                                   ("level", "coefficient", "proportion", "block", "trials"), [], None),
            tasks=tasks, conventions=lambda task, params=params: _power_conventions(task, params, trials,
                                                                                     system_inputs, len(unjudged))))
    s = Simulation(
        "simulate power", scope, groups, trials, seed, fingerprint,
        {"dataset": dataset, "human": human, "variant": variant, "proportions": list(proportions),
         "levels": list(scope.levels), "coefficients": list(scope.coefficients), "methods": list(methods),
         "trials": trials, "k": k, "alpha": alpha, "trial_block": sim.TRIAL_BLOCK, "system_inputs": system_inputs},
        _power_unit, {"corpus": corpus, "positions": positions, "X": X, "Z": Z, "variant": variant,
                      "methods": methods, "k": k, "alpha": alpha, "seed": seed, "system_inputs": system_inputs},
        lambda g, task: (task.key["proportion"],), _sum_power)
    return execute(s, wh, jobs=jobs, force=force, progress=progress)


def _power_unit(context: dict, item: tuple) -> list:
    (proportion, block), trials, wanted = item
    drawn = sim.draw_ablated(context["corpus"], proportion, block, context["seed"], context["variant"])
    Ys = _grid(drawn[: len(trials)], context["positions"], context["Z"].shape)
    out = []
    for g, method in enumerate(context["methods"]):
        keys = [key for gg, key in wanted if gg == g]
        if not keys:
            continue
        configs = list(dict.fromkeys(key[:2] for key in keys))
        pvalues = sim.power_pvalues(context["X"], Ys, context["Z"], method, configs, trials, k=context["k"],
                                    seed=context["seed"], system_inputs=context["system_inputs"])
        out += [(g, key, {"rejections": int(np.count_nonzero(conclusions.rejects(pvalues[key[:2]], context["alpha"])))})
                for key in keys]
    return out


def _sum_power(blocks: list[dict]) -> dict:
    trials = sum(int(b["trials"]) for b in blocks)
    rejections = sum(int(b["rejections"]) for b in blocks)
    return {"rejections": rejections, "power": rejections / trials}


def _power_conventions(task: runner.Task, params: dict, trials: int, system_inputs: str = "all",
                       unjudged: int = 0) -> dict:
    method = params["method"]
    pvalue = {"williams": "williams_test (Student t, n - 3 df)",
              "perm": "permutation_test, variant paper: (1 + #{delta_b >= delta}) / (1 + k)",
              "boot": "paired_bootstrap_test: #{delta_b >= 2 delta} / k"}[method.split("-")[0]]
    return {
        **_system_inputs_conventions(system_inputs, unjudged, {
            "judged": "the summaries of the inputs the human did not judge are not scored",
            "all": "the summaries of every input are scored (of the systems the human judged)"}),
        "level": task.key["level"], "coefficient": task.key["coefficient"],
        "kendall_variant": "b" if task.key["coefficient"] == "kendall" else None,
        "method": method, "alternative": "greater", "alpha": params["alpha"], "rejection": "p <= alpha",
        "pvalue": pvalue, "k": params["k"], "trials": trials, "proportion": task.key["proportion"],
        "metric": f"X = rouge-1.{params['variant']} from the stored texts (no stemming, no stopword removal, "
                  "pooled multi-reference)",
        "ablation": "Y = R_k: the same on floor(proportion * L + 1/2) of each candidate's L tokens, drawn "
                    "uniformly without replacement, per summary and trial (analyses.text.rouge1_ablated)",
        "rng": f"trial t: R_k of block t // {sim.TRIAL_BLOCK} from SeedSequence(seed, spawn_key=("
               f"{sim.ABLATION_STREAM}, round(1e6 proportion), block)); resamples of the test with seed = "
               f"SeedSequence(seed, spawn_key=({sim.RESAMPLE_STREAM}, t)).generate_state(1, uint64)[0]",
        "seed": params["seed"], "trial_block": sim.TRIAL_BLOCK, "nan_policy": NAN_POLICY,
    }


def _grid(values: np.ndarray, positions: tuple, shape: tuple[int, int]) -> np.ndarray:
    """Per-summary values (T, summaries) on the human's systems x inputs grid (T, N, M); NaN
    where no summary."""
    rows, cols, placed = positions
    out = np.full((values.shape[0], *shape), np.nan)
    out[:, rows[placed], cols[placed]] = values[:, placed]
    return out


def _corpus_digest(corpus) -> str:
    digest = hashlib.sha256()
    for part in (corpus.systems, corpus.inputs, corpus.texts):
        digest.update("\x1f".join(map(str, part)).encode() + b"\x1e")
    for a in (corpus.summary_text, corpus.ref_ptr, corpus.ref_text):
        digest.update(np.asarray(a, dtype="<i8").tobytes())
    return digest.hexdigest()


def _human_scope(wh: Store, dataset: str, human: str, levels, coefficients) -> selection.Scope:
    measures = wh.measures(dataset)
    humans = sorted(measures.loc[measures["kind"] == "human", "measure"])
    if human not in humans:
        raise no_human_judgment(dataset, human, humans, measures.loc[measures["kind"] == "automatic", "measure"])
    return selection.Scope(dataset, human, (), selection.choices(levels, vocabulary.LEVELS, "level"),
                        selection.choices(coefficients, vocabulary.COEFFICIENTS, "coefficient"))


def _proportions(proportions: Sequence[float]) -> tuple[float, ...]:
    out = tuple(dict.fromkeys(float(p) for p in proportions))
    bad = [p for p in out if not 0 < p <= 1]
    if bad or not out:
        raise WarehouseError(f"proportions must be in (0, 1]; got {list(bad) or 'none'}")
    return out


def _check_run_options(trials: int, k: int, alpha: float, seed: int) -> None:
    if trials < 1 or k < 1 or not 0 < alpha < 1 or seed < 0:
        raise WarehouseError(f"need trials >= 1, k >= 1, 0 < alpha < 1 and seed >= 0; got trials={trials}, "
                             f"k={k}, alpha={alpha}, seed={seed}")


# --- normality --------------------------------------------------------------------------------
def normality(wh: Store, dataset: str, measure_globs: Sequence[str] = (), *, force: bool = False) -> Summary:
    """Shapiro-Wilk diagnostics (:func:`analyses.simulation.normality`) of every measure
    matching ``measure_globs`` (default: all), persisted in ``normality``."""
    catalog = wh.measures(dataset)
    names = sorted(catalog["measure"])
    chosen = []
    for g in measure_globs:
        hit = [m for m in names if fnmatch.fnmatchcase(m, g)]
        if not hit:
            raise WarehouseError(Message(Argument("measures", [g]), f" matches no measure of {dataset!r}; "
                                         f"it has: {', '.join(names)}"))
        chosen += [m for m in hit if m not in chosen]
    chosen = chosen or names
    m = wh.matrix(dataset, chosen)
    directions = dict(zip(catalog["measure"], catalog["direction"]))
    data = selection.Data(m.systems, m.inputs, {n: m[n] for n in chosen}, {n: directions[n] for n in chosen})
    done = set() if force else set(wh.con.execute(schema.read("normality_done"),
                                                         {"dataset": dataset, **bookkeeping.version_parameter()}).fetchall())
    rows = []
    for name in chosen:
        fingerprint = data.fingerprint([name])[0]
        if all((name, level, sim.NORMALITY_TEST, fingerprint) in done for level in SIM_LEVELS):
            continue
        for r in sim.normality(data.restrict([name])[0][0], NORMALITY_ALPHA):
            rows.append({"dataset": dataset, "measure": name, "level": r.level, "test": r.test,
                         "statistic": _none_if_nan(r.statistic), "p_value": _none_if_nan(r.p_value),
                         "percent_significant": _none_if_nan(r.percent_significant), "n": r.n,
                         "fingerprint": fingerprint,
                         "conventions": json.dumps(_normality_conventions(r.level), sort_keys=True)})
    if not rows:
        return Summary(None, 2 * len(chosen), 0, 0, 0)
    run_id = bookkeeping.start_run(wh, "normality", {"dataset": dataset, "measures": chosen, "alpha": NORMALITY_ALPHA},
                              None, selection.data_fingerprint(data, chosen), len(rows))
    frame = pd.DataFrame(rows).assign(run_id=run_id)
    with bookkeeping.finishing(wh, run_id):
        bookkeeping.insert_rows(wh, "normality", frame)
        bookkeeping.finish_run(wh, run_id, "finished", len(rows))
    return Summary(run_id, 2 * len(chosen), len(rows), 0, len(rows))


def latest_normality(wh: Store, dataset: str, measure_globs: Sequence[str] = ()) -> pd.DataFrame:
    """The latest ``normality`` rows of ``dataset`` (of the measures matching ``measure_globs``;
    default all), by measure and level."""
    frame = wh.sql("SELECT * FROM latest_normality WHERE dataset = ? ORDER BY measure, level", [dataset])
    if measure_globs:
        import fnmatch

        frame = frame[[any(fnmatch.fnmatchcase(m, g) for g in measure_globs) for m in frame["measure"]]]
    return frame


def _normality_conventions(level: str) -> dict:
    return {"test": "scipy.stats.shapiro", "level": level, "alpha": NORMALITY_ALPHA,
            "values": ("the N system means (mean over inputs, NaN ignored; systems without a value left out)"
                       if level == "system" else
                       "each input's non-NaN values over systems; inputs with fewer than 3 values not tested; "
                       "percent_significant = percent of tested inputs with p < alpha"),
            "orientation": "raw values (Shapiro-Wilk is invariant to a measure's direction)"}


def _none_if_nan(x: float) -> float | None:
    return None if np.isnan(x) else float(x)
