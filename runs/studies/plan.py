"""``metaeval plan``: how big must the next study be, from the pilot data in the warehouse (issue 45
item 2; the statistics: :mod:`metaeval.analyses.plan`). Three questions: ``systems`` (do two systems
differ under the human judgment), ``ppi`` (how many human labels PPI++ needs beside a metric for that
difference: PPI++'s variance formula, the resampled :func:`metaeval.analyses.ppi.mean` beside it) and
``metrics`` (does metric A correlate better with the human than metric B: the Perm-Both test on
draws of the pilot at each size; no closed form).

For every size asked (``n_inputs`` x ``n_systems`` x ``ratings``; default 1x, 2x, 4x and 8x the
pilot's), the paired t-test's power at the pilot's effect (or ``effect``) and at the corrected level
of the family the later analysis tests (every pair of the n_systems; alpha / m for Holm, Bonferroni
and BH: the first step, a lower bound of Holm's and BH's power; alpha without correction), by the
noncentral t (the closed form) and by resampling the pilot's differences (``trials``, ``seed``);
the minimum detectable effect at ``power``, the expected width of the difference's interval and
the inputs that reach ``power``. One run writes the rows of ``plan_sizes``.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import parameters as _parameters
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, ALTERNATIVE, CORRECTION, DATASET, FORCE, HUMAN, SEED, Option

COMMAND, TABLE = "plan", "plan_sizes"
QUESTIONS = ("systems", "ppi", "metrics")
#: Resampling rounds by default: the metrics question runs a permutation test in each.
TRIALS = {"systems": 1000, "ppi": 1000, "metrics": 200}
#: Permutations of each simulated study's Perm-Both test (the metrics question; issue 45: 200).
PERMUTATIONS = 200


def _check_power(power) -> None:
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise WarehouseError(Message(Argument("power", power), " must be a number with 0 < power < 1"))


def _check_sizes(name: str, least: int, single: bool = False):
    def check(values) -> None:
        for v in ((values,) if single else values):
            if single and v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise WarehouseError(Message(Argument(name, v), f" must be an integer of at least {least}"))
    return check


@register
class Plan(Family):
    name = COMMAND
    topic = "systems"
    headline = "How big must the next study be: power, detectable effect, interval width."
    summary = ("How big must the next study be: power, minimum detectable effect and interval width as the "
               "inputs, systems and ratings grow, from the pilot in the warehouse.")
    tables = (TABLE,)
    shows_progress = True          # the metrics question's studies: one step a trial
    options = (DATASET, HUMAN,
               Option("question", default="systems", kind="choice", choices=QUESTIONS,
                      help="systems: do two systems differ under the human judgment (a paired t-test); ppi: how "
                           "many human labels PPI++ needs beside --metric for that difference; metrics: does the "
                           "first --metric correlate better with the human than the second (Perm-Both)."),
               Option("system", multiple=True, metavar="SYSTEM",
                      help="The two systems compared (twice; systems, ppi)."),
               Option("metrics", multiple=True, flag="--metric", metavar="MEASURE",
                      help="ppi: the metric beside the human labels (once); metrics: the metrics compared (two or "
                           "more: the power is the first two's, the family every pair of them)."),
               Option("unlabelled", kind="int", metavar="N", check=_check_sizes("unlabelled", 1, single=True),
                      help="ppi: the inputs with the metric only. Default: the pilot's inputs with the metric."),
               Option("n_inputs", multiple=True, kind="int", flag="--inputs", metavar="N",
                      check=_check_sizes("n_inputs", 2), help="Inputs of the study (ppi: the human-labelled ones). "
                      "Default: 1x, 2x, 4x, 8x the pilot's (metrics: 1/8, 1/4, 1/2, 1x; at most the pilot's)."),
               Option("n_systems", multiple=True, kind="int", flag="--systems", metavar="N",
                      check=_check_sizes("n_systems", 2),
                      help="Systems of the study (every pair tested). Default: 1x, 2x, 4x, 8x the pilot's (metrics: "
                           "1/8, 1/4, 1/2, 1x; at most the pilot's)."),
               Option("ratings", multiple=True, kind="int", metavar="N", check=_check_sizes("ratings", 1),
                      help="Ratings per cell. Default: 1x, 2x, 4x, 8x the pilot's."),
               Option("effect", kind="float", metavar="D",
                      help="The true difference the power is at. Default: the pilot's observed one."),
               Option("power", default=0.8, kind="probability", check=_check_power,
                      help="The target power (the minimum detectable effect, the inputs needed)."),
               ALPHA, CORRECTION,
               Option("trials", kind="resamples", help="Resampling rounds of the resampled power. Default: 1000 (200 "
                                                       "for metrics)."),
               Option("correlation_level", default="system", kind="choice", flag="--level",
                      choices="metaeval.analyses.stats.vocabulary:LEVELS", help="metrics: the correlation level."),
               Option("coefficient", default="kendall", kind="coefficient", help="metrics: the coefficient."),
               Option("k", default=PERMUTATIONS, kind="resamples", check=_parameters.check_resamples,
                      help="metrics: permutations of each Perm-Both test."),
               ALTERNATIVE.but(help="metrics: H1 of the Perm-Both test of the first metric against the second."),
               SEED,
               Option("out", metavar="FILE",
                      help="Also draw the power curves, the target power marked, to this .png, .svg or .pdf file."),
               FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        """The rows of every size asked (the pilot's numbers and the conventions with them)."""
        import pandas as pd

        from metaeval.runs.engine import bookkeeping, store

        setting, sizes, pilot_info, conventions, rows_of, recorded = inputs.data
        frame = pd.DataFrame(rows_of()).assign(dataset=inputs.dataset, human=inputs.keys["human"], **setting,
                                               **pilot_info, fingerprint=inputs.fingerprint,
                                               conventions=bookkeeping.conventions_json(conventions))
        return store.Rows(frame, recorded, int(setting["seed"]))

    def enough(self, stored, inputs, **params) -> bool:
        """The stored rows answer every size asked (no more, no fewer)."""
        import pandas as pd

        whole = [tuple(None if pd.isna(v) else int(v) for v in t)
                 for t in stored[["n_inputs", "n_systems", "ratings"]].itertuples(index=False)]
        return sorted(whole, key=repr) == sorted(inputs.data[1], key=repr)

    def outcome(self, stored, inputs, *, out: str | None = None, power: float = 0.8, **params):
        return _drawn(_ordered(stored), out, power)

    def present(self, outcome, fmt: str) -> str:
        if fmt not in ("text", "table") or outcome.empty:
            return super().present(outcome, fmt)
        import json

        import pandas as pd

        from metaeval.present import plain, tables

        r = outcome.iloc[0]
        c = json.loads(r["conventions"])

        def f(x, digits=3):
            return plain.number_text(x, digits, undefined="")

        q = r["question"]
        needed = outcome["inputs_needed"].map(lambda x: "none" if pd.isna(x) else str(int(x)))
        if q == "systems":
            shown = pd.DataFrame({"inputs": outcome["n_inputs"], "systems": outcome["n_systems"],
                                  "ratings": outcome["ratings"], "level": outcome["level"].map(lambda x: f"{x:.2g}"),
                                  "power": outcome["power"].map(f), "resampled": outcome["power_resampled"].map(f),
                                  "MDE": outcome["minimum_effect"].map(f), "width": outcome["interval_width"].map(f),
                                  "inputs for power": needed})
            caption = (f"Planning {r['system_a']} vs {r['system_b']} under {r['human']} on {r['dataset']}: the paired "
                       f"t-test's power at the {'given' if r['effect_given'] else 'pilot'} effect {f(r['effect'])} "
                       f"(pilot: {r['pilot_inputs']} inputs, {r['pilot_systems']} systems, {f(r['pilot_ratings'], 2)} "
                       f"ratings per cell), at the corrected level of every pair of the systems ({r['correction']}: "
                       f"{c['level']}); MDE and the inputs for power {r['target_power']:g}; width of the "
                       f"{100 * (1 - r['alpha']):g}% interval of the difference:")
        elif q == "ppi":
            shown = pd.DataFrame({"labels": outcome["n_inputs"], "systems": outcome["n_systems"],
                                  "level": outcome["level"].map(lambda x: f"{x:.2g}"),
                                  "lambda": outcome["lam"].map(f), "power": outcome["power"].map(f),
                                  "resampled": outcome["power_resampled"].map(f),
                                  "MDE": outcome["minimum_effect"].map(f),
                                  "width": outcome["interval_width"].map(f),
                                  "resampled width": outcome["width_resampled"].map(f), "labels for power": needed})
            caption = (f"Planning the human labels PPI++ needs beside {r['metric_a']} for {r['system_a']} vs "
                       f"{r['system_b']} under {r['human']} on {r['dataset']}, the metric on {r['unlabelled']} "
                       f"unlabelled "
                       f"inputs: the normal test's power at the "
                       f"{'given' if r['effect_given'] else 'pilot'} effect {f(r['effect'])} (pilot: "
                       f"{r['pilot_inputs']} labelled inputs, {c['pilot']['unlabelled']} unlabelled, "
                       f"{r['pilot_systems']} systems), at the corrected level of every pair of the systems "
                       f"({r['correction']}: {c['level']}); MDE and the labels for power {r['target_power']:g}; width "
                       f"of the {100 * (1 - r['alpha']):g}% interval of the difference:")
        else:
            shown = pd.DataFrame({"inputs": outcome["n_inputs"], "systems": outcome["n_systems"],
                                  "level": outcome["level"].map(lambda x: f"{x:.2g}"),
                                  "power (resampled)": outcome["power_resampled"].map(f)})
            caption = (f"Planning {r['metric_a']} vs {r['metric_b']} against {r['human']} on {r['dataset']}: the "
                       f"Perm-Both test's power ({r['correlation_level']} level, {r['coefficient']}, "
                       f"{r['alternative']}, "
                       f"k {r['k']}, {r['trials']} resampled studies; pilot: {r['pilot_systems']} systems x "
                       f"{r['pilot_inputs']} inputs, delta {f(r['effect'])}, p {f(c['pilot']['pvalue'])}), at the "
                       f"corrected level ({r['correction']}: {c['level']}):")
        column = "power_resampled" if q == "metrics" else "power"
        reach = outcome[outcome[column].notna() & (outcome[column] >= r["target_power"])]
        keys = ["n_inputs", "n_systems"] + (["ratings"] if q == "systems" else [])
        said = ", ".join(" x ".join(str(int(v)) for v in t) for t in reach[keys].itertuples(index=False))
        what = {"systems": "inputs x systems x ratings", "ppi": "labels x systems", "metrics": "inputs x systems"}[q]
        lines = [c["closed_form"], c["resampled"],
                 f"Sizes ({what}) reaching power {r['target_power']:g}"
                 f"{' (resampled)' if q == 'metrics' else ' (closed form)'}: {said or 'none of those asked'}."]
        if q == "ppi":
            lines.append("The intervals assume " + c["assumption"].removeprefix("the intervals assume ") + ".")
        return plain.wrap(caption) + "\n" + tables.render(shown, "text").rstrip("\n") + "\n" + \
            "".join(plain.wrap(line) + "\n" for line in lines)


def _level(alpha: float, correction: str, m: int) -> float:
    return alpha if correction == "none" else alpha / m


def _inputs(wh, dataset: str, human: str, question: str = "systems", system=(), metrics=(), n_inputs=(),
            n_systems=(), ratings=(), *, unlabelled: int | None = None, effect: float | None = None,
            power: float = 0.8, alpha: float = ALPHA.default, correction: str = CORRECTION.default,
            trials: int | None = None, correlation_level: str = "system", coefficient: str = "kendall",
            k: int = PERMUTATIONS, alternative: str = ALTERNATIVE.default, seed: int = SEED.default,
            out: str | None = None, progress=None):
    """What the ``plan_sizes`` rows of this setting are of (module docstring): the pilot read, its
    fingerprint, the setting's keys and what computes the rows. Every check is made here, before
    the one run that writes."""
    from metaeval.runs.engine import store

    if question not in QUESTIONS:
        raise WarehouseError(Message("unknown ", Argument("question", question), f"; choose from {', '.join(QUESTIONS)}"))
    _check_power(power)
    system, metrics = tuple(system), tuple(metrics)
    trials = TRIALS[question] if trials is None else int(trials)
    _check_request(question, human, system, metrics, ratings, unlabelled, effect, out, correlation_level=correlation_level,
                   coefficient=coefficient, k=k, alternative=alternative)
    wh.require_dataset(dataset)
    wh.require_measures(dataset, [human, *metrics])
    setting = {"question": question, "system_a": system[0] if system else None,
               "system_b": system[1] if system else None, "metric_a": metrics[0] if metrics else None,
               "metric_b": metrics[1] if question == "metrics" else None, "alpha": float(alpha),
               "correction": correction, "target_power": float(power), "trials": trials, "seed": int(seed),
               "effect_given": effect is not None}
    if question == "metrics":
        setting.update(correlation_level=correlation_level, coefficient=coefficient, k=int(k),
                       alternative=alternative)
    compute = {"systems": _systems, "ppi": _ppi, "metrics": _metrics}[question]
    work = compute(wh, dataset, human, system, metrics, tuple(n_inputs), tuple(n_systems), tuple(ratings),
                   unlabelled=unlabelled, effect=effect, power=power, alpha=alpha, correction=correction,
                   trials=trials, correlation_level=correlation_level, coefficient=coefficient, k=int(k),
                   alternative=alternative, seed=int(seed), progress=progress)
    fingerprint, sizes, delta, pilot_info, conventions, rows_of = work
    keys = {"human": human, "effect": delta, **setting}
    if question == "metrics":
        keys.pop("effect")
    recorded = {"dataset": dataset, "human": human, **setting, "n_inputs": list(n_inputs),
                "n_systems": list(n_systems), "ratings": list(ratings), "effect": effect, "unlabelled": unlabelled,
                "alternative": alternative if question == "metrics" else None}
    return store.Inputs(dataset, fingerprint, keys, None, (setting, sizes, pilot_info, conventions, rows_of, recorded))


def _check_request(question, human, system, metrics, ratings, unlabelled, effect, out, *, correlation_level,
                   coefficient, k, alternative) -> None:
    """The options of one question, refused in one line when they do not fit it (before the data is read)."""
    import math

    if question != "metrics" and (len(system) != 2 or system[0] == system[1]):
        raise WarehouseError(Message(f"the {question} question compares two systems: give ",
                                     Argument("system", placeholder="SYSTEM"), " twice (two different ones)"))
    if question == "systems" and metrics:
        raise WarehouseError(Message(Argument("metrics", metrics[0]), " is for the ppi and metrics questions"))
    if question == "ppi" and len(metrics) != 1:
        raise WarehouseError(Message("the ppi question needs one metric beside the human labels: give ",
                                     Argument("metrics", placeholder="MEASURE"), " once"))
    if question == "metrics":
        if len(metrics) < 2 or len(set(metrics)) != len(metrics):
            raise WarehouseError(Message("the metrics question compares metrics: give ",
                                         Argument("metrics", placeholder="MEASURE"),
                                         " two or more times (different ones)"))
        if system:
            raise WarehouseError(Message(Argument("system", system[0]), " is for the systems and ppi questions"))
        if effect is not None:
            raise WarehouseError(Message(Argument("effect", effect), " is for the systems and ppi questions (the "
                                         "metrics question resamples the pilot at its own correlations)"))
    if question != "systems" and ratings:
        raise WarehouseError(Message(Argument("ratings", ratings[0]), " is for the systems question (ppi and metrics "
                                     "use the pilot's cell means as they are)"))
    if question != "ppi" and unlabelled is not None:
        raise WarehouseError(Message(Argument("unlabelled", unlabelled), " is for the ppi question"))
    if question != "metrics":   # the metrics question's test settings, given to another question: said, not ignored
        for name, value, default in (("correlation_level", correlation_level, "system"),
                                     ("coefficient", coefficient, "kendall"), ("k", k, PERMUTATIONS),
                                     ("alternative", alternative, ALTERNATIVE.default)):
            if value != default:
                raise WarehouseError(Message(Argument(name, value), " is for the metrics question (its Perm-Both "
                                             f"test); the {question} question does not use it"))
    if human in metrics:
        raise WarehouseError(Message(Argument("metrics", human), " is the human measure itself; choose a metric"))
    if out is not None:
        from pathlib import Path

        if Path(out).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise WarehouseError(Message(Argument("out", out), " must end in .png, .svg or .pdf"))
        if not Path(out).resolve().parent.is_dir():
            raise WarehouseError(Message(Argument("out", out), ": its folder does not exist"))
    if effect is not None and (isinstance(effect, bool) or not math.isfinite(float(effect)) or effect == 0):
        raise WarehouseError(Message(Argument("effect", effect), " must be a finite number other than 0"))


def _digest(*arrays) -> str:
    import hashlib

    import numpy as np

    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(np.asarray(a, float)).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def _systems(wh, dataset, human, system, metrics, n_inputs, n_systems, ratings, *, effect, power, alpha, correction,
             trials, seed, **_):
    """The systems question: (fingerprint, sizes, effect, pilot columns, conventions, rows thunk)."""
    import numpy as np

    from metaeval.analyses import plan as stat

    m = wh.matrix(dataset, human)
    keep = wh.attribute_mask(dataset, (), m.systems, m.inputs)
    Z = np.where(keep, m[human].astype(float), np.nan)
    systems = [str(s) for s in m.systems]
    for s in system:
        if s not in systems:
            raise WarehouseError(Message(Argument("system", s), f" has no {human!r} in {dataset!r}"))
    a, b = systems.index(system[0]), systems.index(system[1])
    d = Z[a] - Z[b]
    paired = ~np.isnan(d)
    if paired.sum() < 2:
        raise WarehouseError(Message(f"{system[0]!r} and {system[1]!r} share {int(paired.sum())} input(s) with ",
                                     Argument("human", human), ": a pilot needs 2 or more"))
    pilot_systems = int((~np.isnan(Z).all(axis=1)).sum())
    ann = wh.annotations(dataset, human)
    within, counts = [], []
    for s in system:
        i = list(ann.systems).index(s) if s in ann.systems else None
        if i is None:
            continue
        cols = [list(ann.inputs).index(x) for x in np.asarray(m.inputs)[paired] if x in ann.inputs]
        values = ann.values[i][cols]
        count = (~np.isnan(values)).sum(axis=1)
        counts += list(count[count > 0])
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.where(count > 1, np.nanvar(np.where(count[:, None] > 1, values, np.nan), axis=1, ddof=1), np.nan)
        within += list(v)
    r0 = float(1 / np.mean(1 / np.asarray(counts, float))) if counts else 1.0
    mean_d, var_d, var_e, n0 = stat.pilot(d[paired], np.asarray(within, float))
    delta = float(effect) if effect is not None else mean_d
    sizes_in = n_inputs or tuple(n0 * f for f in (1, 2, 4, 8))
    sizes_sys = n_systems or tuple(pilot_systems * f for f in (1, 2, 4, 8))
    base_r = max(1, int(round(r0)))
    sizes_r = ratings or tuple(base_r * f for f in (1, 2, 4, 8))
    fingerprint = _digest(d[paired], within)

    def rows():
        computed = []
        for s_count in sizes_sys:
            family = s_count * (s_count - 1) // 2
            level = _level(alpha, correction, family)
            for r in sizes_r:
                sd = stat.difference_sd(var_d, var_e, r0, r)
                needed = stat.inputs_for_power(delta, sd, level, power)
                for n in sizes_in:
                    computed.append({
                        "n_inputs": int(n), "n_systems": int(s_count), "ratings": int(r), "family_size": family,
                        "level": level, "effect": delta, "sd": sd, "power": _none(stat.t_power(delta, sd, n, level)),
                        "power_resampled": _none(stat.resampled_power(d[paired], delta, n, level, var_e=var_e,
                                                                      r0=r0, r=r, trials=trials, seed=seed)),
                        "minimum_effect": _none(stat.minimum_effect(sd, n, level, power)),
                        "interval_width": _none(stat.interval_width(sd, n, alpha)), "inputs_needed": needed})
        return computed

    conventions = {
        "closed_form": "Closed form: the two-sided paired t-test's power by the noncentral t (df n - 1, "
                       "noncentrality effect sqrt(n) / sd); sd^2 = var(d) - 2 var_e / r0 + 2 var_e / r.",
        "resampled": f"Resampled: {trials} rounds of n pilot differences drawn with replacement, shifted to the effect, "
                     f"the ratings' noise adjusted to r ratings (seed {seed}).",
        "level": _level_said(correction),
        "pilot": {"mean_difference": mean_d, "var_difference": var_d, "var_ratings": var_e, "ratings": r0,
                  "inputs": n0},
        "width": "2 t_{1-alpha/2, n-1} sd / sqrt(n): the expected width of the t interval of the mean difference",
    }
    sizes = [(int(n), int(s_), int(r)) for n in sizes_in for s_ in sizes_sys for r in sizes_r]
    return fingerprint, sizes, delta, {"pilot_inputs": n0, "pilot_systems": pilot_systems, "pilot_ratings": r0}, \
        conventions, rows


def _ppi(wh, dataset, human, system, metrics, n_inputs, n_systems, ratings, *, unlabelled, effect, power, alpha,
         correction, trials, seed, **_):
    """The ppi question: (fingerprint, sizes, effect, pilot columns, conventions, rows thunk)."""
    import numpy as np
    from scipy.stats import norm

    from metaeval.analyses import plan as stat
    from metaeval.analyses import ppi as ppi_stat
    from metaeval.runs.studies.ppi import _oriented

    metric = metrics[0]
    X, Z, systems, _inputs, _direction = _oriented(wh, dataset, metric, human)
    for s in system:
        if s not in systems:
            raise WarehouseError(Message(Argument("system", s), f" has no {human!r} in {dataset!r}"))
    a, b = systems.index(system[0]), systems.index(system[1])
    scored = ~np.isnan(X[a]) & ~np.isnan(X[b])
    lab = scored & ~np.isnan(Z[a]) & ~np.isnan(Z[b])
    if lab.sum() < 2:
        raise WarehouseError(Message(f"{system[0]!r} and {system[1]!r} share {int(lab.sum())} input(s) with both ",
                                     Argument("human", human), " and ", Argument("metrics", metric),
                                     ": a pilot needs 2 or more"))
    y, f, f_u = Z[a, lab] - Z[b, lab], X[a, lab] - X[b, lab], X[a, scored & ~lab] - X[b, scored & ~lab]
    f_all = np.concatenate([f, f_u])
    var_y, var_f, cov = stat.ppi_moments(y, f)
    if f_u.size:
        estimate = ppi_stat.mean(y, f, f_u, alpha=alpha).estimate
    else:
        estimate = float(y.mean())
    delta = float(effect) if effect is not None else estimate
    n0 = int(lab.sum())
    N = int(unlabelled) if unlabelled is not None else int(scored.sum())
    pilot_systems = len(systems)
    sizes_in = n_inputs or tuple(n0 * f_ for f_ in (1, 2, 4, 8))
    sizes_sys = n_systems or tuple(pilot_systems * f_ for f_ in (1, 2, 4, 8))
    fingerprint = _digest(y, f, f_u, [N])

    def rows():
        computed = []
        for s_count in sizes_sys:
            family = s_count * (s_count - 1) // 2
            level = _level(alpha, correction, family)
            needed = stat.labels_for_power(delta, var_y, var_f, cov, N, level, power)
            for n in sizes_in:
                se, lam = stat.ppi_se(var_y, var_f, cov, int(n), N)
                resampled, width = stat.resampled_ppi(y, f, f_all, delta, int(n), N, level, alpha, trials=trials,
                                                      seed=seed)
                computed.append({
                    "n_inputs": int(n), "n_systems": int(s_count), "ratings": None, "unlabelled": N, "lam": _none(lam),
                    "family_size": family, "level": level, "effect": delta, "sd": _none(se),
                    "power": _none(stat.normal_power(delta, se, level)), "power_resampled": _none(resampled),
                    "minimum_effect": _none(stat.normal_minimum_effect(se, level, power)),
                    "interval_width": _none(2 * float(norm.ppf(1 - alpha / 2)) * se),
                    "width_resampled": _none(width), "inputs_needed": needed})
        return computed

    conventions = {
        "closed_form": "Closed form (PPI++'s variance formula, Angelopoulos, Duchi & Zrnic 2023): on n labelled and N "
                       "unlabelled inputs, lam = clip(cov(y, f) / ((1 + n/N) var(f)), 0, 1) and se^2 = lam^2 var(f) "
                       "/ N "
                       "+ (var(y) - 2 lam cov(y, f) + lam^2 var(f)) / n, y the human difference and f the metric's, "
                       "moments from the pilot's labelled inputs (divisor n0 - 1); the normal test's power "
                       "Phi(effect/se - z) + Phi(-effect/se - z) at the corrected level; width 2 z_{1-alpha/2} se.",
        "resampled": f"Resampled: {trials} studies of n labelled pilot pairs drawn with replacement (the human "
                     f"difference shifted to the effect) and N metric values drawn from every pilot input's, each "
                     f"estimated by ppi's PPI++ (lam estimated) (seed {seed}).",
        "level": _level_said(correction),
        "pilot": {"estimate": estimate, "var_human": var_y, "var_metric": var_f, "covariance": cov,
                  "labelled": n0, "unlabelled": int(f_u.size)},
        "assumption": ppi_stat.ASSUMPTION,
    }
    sizes = [(int(n), int(s_), None) for n in sizes_in for s_ in sizes_sys]
    return fingerprint, sizes, delta, {"pilot_inputs": n0, "pilot_systems": pilot_systems, "pilot_ratings": None}, \
        conventions, rows


def _metrics(wh, dataset, human, system, metrics, n_inputs, n_systems, ratings, *, power, alpha, correction, trials,
             correlation_level, coefficient, k, alternative, seed, progress=None, **_):
    """The metrics question: (fingerprint, sizes, effect, pilot columns, conventions, rows thunk)."""
    import math

    import numpy as np

    from metaeval.analyses import plan as stat
    from metaeval.analyses.stats import hypothesis
    from metaeval.runs.engine.runner import progress_bar

    m = wh.matrix(dataset, [metrics[0], metrics[1], human])
    kinds = wh.measure_kinds(dataset)
    direction = dict(zip(kinds["measure"], kinds["direction"]))
    keep = wh.attribute_mask(dataset, (), m.systems, m.inputs)
    Z = np.where(keep, m[human].astype(float), np.nan)
    X, Y = ((np.where(keep, (-m[x] if direction[x] != direction[human] else m[x]).astype(float), np.nan))
            for x in metrics[:2])
    present = ~np.isnan(Z).all(axis=1)
    X, Y, Z = X[present], Y[present], Z[present]
    family = len(metrics) * (len(metrics) - 1) // 2
    level = _level(alpha, correction, family)
    from metaeval.analyses import conclusions

    floor = conclusions.pvalue_floor("add-one", k)        # the permutation test's smallest p, 1/(k + 1)
    if floor > level:
        raise WarehouseError(Message(Argument("k", k), f": its smallest p-value 1/(k + 1) = {floor:.2g} is above "
                                     f"the corrected level {level:.2g}; no test could reject (give k of at least "
                                     f"{math.ceil(1 / level) - 1})"))
    pilot = hypothesis.permutation_test(X, Y, Z, correlation_level, coefficient, "both", k, alternative, seed=seed)
    n0, s0 = int(Z.shape[1]), int(Z.shape[0])
    for name, given, most in (("n_inputs", n_inputs, n0), ("n_systems", n_systems, s0)):
        for v in given:
            if v > most:
                raise WarehouseError(Message(Argument(name, v), f" exceeds the pilot's {most}: the metrics question "
                                             "draws without replacement (repeated systems or inputs would make "
                                             "Perm-Both reject too often)"))
    sizes_in = n_inputs or tuple(sorted({max(2, n0 // f_) for f_ in (8, 4, 2, 1)}))
    sizes_sys = n_systems or tuple(sorted({max(2, s0 // f_) for f_ in (8, 4, 2, 1)}))
    fingerprint = _digest(X, Y, Z)

    def rows():
        bar = progress_bar(progress, len(sizes_in) * len(sizes_sys) * trials, "plan metrics")
        computed = []
        try:
            for s_count in sizes_sys:
                for n in sizes_in:
                    p = stat.resampled_metric_power(X, Y, Z, int(s_count), int(n), level,
                                                    correlation_level=correlation_level, coefficient=coefficient,
                                                    alternative=alternative, k=k, trials=trials, seed=seed,
                                                    tick=lambda: bar.advance(1))
                    computed.append({"n_inputs": int(n), "n_systems": int(s_count), "ratings": None,
                                     "family_size": family, "level": level, "effect": _none(pilot.delta), "sd": None,
                                     "power": None, "power_resampled": p, "minimum_effect": None,
                                     "interval_width": None, "inputs_needed": None})
        finally:
            bar.close()
        return computed

    conventions = {
        "closed_form": "No closed form: the power is the share of resampled studies whose Perm-Both test (Deutsch et "
                       "al., TACL 2021, section 5) rejects.",
        "resampled": f"Resampled: {trials} studies of n_systems systems and n_inputs inputs drawn without replacement "
                     f"from the pilot's, each tested by Perm-Both ({k} permutations, {correlation_level} level, "
                     f"{coefficient}, {alternative}) of {metrics[0]} against {metrics[1]} (seed {seed}).",
        "level": _level_said(correction) + f" (m = {family}: every pair of the metrics given)",
        "pilot": {"delta": pilot.delta, "pvalue": pilot.pvalue, "systems": s0, "inputs": n0},
    }
    sizes = [(int(n), int(s_), None) for n in sizes_in for s_ in sizes_sys]
    return fingerprint, sizes, pilot.delta, {"pilot_inputs": n0, "pilot_systems": s0, "pilot_ratings": None}, \
        conventions, rows


def _level_said(correction: str) -> str:
    return {"none": "alpha"}.get(correction, "alpha / m, its first step over the m pairs: a lower bound of its power")


def _drawn(rows, out: str | None, target: float):
    """``rows``, their power curves drawn to ``out`` first when given."""
    if out is not None:
        import matplotlib.pyplot as plt

        r = rows.iloc[0]
        if r["question"] == "metrics":
            title = (f"{r['metric_a']} vs {r['metric_b']} against {r['human']} ({r['dataset']}), "
                     f"pilot delta {r['effect']:.3f}")
            labels = ("inputs", "power of the Perm-Both test at the corrected level")
        elif r["question"] == "ppi":
            title = (f"{r['system_a']} vs {r['system_b']} under {r['human']} with {r['metric_a']} ({r['dataset']}), "
                     f"effect {r['effect']:.3f}")
            labels = (f"human labels ({int(r['unlabelled'])} unlabelled)",
                      "power of PPI++'s test at the corrected level")
        else:
            title = f"{r['system_a']} vs {r['system_b']} under {r['human']} ({r['dataset']}), effect {r['effect']:.3f}"
            labels = ("inputs", "power of the paired t-test at the corrected level")
        from metaeval.present import study_figures

        fig = study_figures.power_figure(rows, target, title, *labels)
        fig.savefig(out, dpi=150)
        plt.close(fig)
    return rows


def _none(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _ordered(rows):
    return rows.sort_values(["n_systems", "ratings", "n_inputs"]).reset_index(drop=True)
