"""``metaeval plan``: how big must the next study be, from the pilot data in the warehouse (issue 45
item 2; the question ``systems`` so far: do two systems differ under the human judgment; the
statistics: :mod:`metaeval.analyses.plan`).

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
from metaeval.runs.families import ALPHA, CORRECTION, DATASET, FORCE, HUMAN, SEED, Family, Option, register

COMMAND, TABLE, SCRIPT = "plan", "plan_sizes", "93_plan"
QUESTIONS = ("systems",)


def _check_power(power) -> None:
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise WarehouseError(Message(Argument("power", power), " must be a number with 0 < power < 1"))


def _check_sizes(name: str, least: int):
    def check(values) -> None:
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise WarehouseError(Message(Argument(name, v), f" must be an integer of at least {least}"))
    return check


@register
class Plan(Family):
    name = COMMAND
    summary = ("How big must the next study be: power, minimum detectable effect and interval width as the "
               "inputs, systems and ratings grow, from the pilot in the warehouse.")
    tables = (TABLE,)
    options = (DATASET, HUMAN,
               Option("question", default="systems", kind="choice", choices=QUESTIONS,
                      help="systems: do two systems differ under the human judgment (a paired t-test)."),
               Option("system", multiple=True, metavar="SYSTEM", help="The two systems compared (twice)."),
               Option("n_inputs", multiple=True, kind="int", flag="--inputs", metavar="N",
                      check=_check_sizes("n_inputs", 2), help="Inputs of the study. Default: 1x, 2x, 4x, 8x the pilot's."),
               Option("n_systems", multiple=True, kind="int", flag="--systems", metavar="N",
                      check=_check_sizes("n_systems", 2),
                      help="Systems of the study (every pair tested). Default: 1x, 2x, 4x, 8x the pilot's."),
               Option("ratings", multiple=True, kind="int", metavar="N", check=_check_sizes("ratings", 1),
                      help="Ratings per cell. Default: 1x, 2x, 4x, 8x the pilot's."),
               Option("effect", kind="float", metavar="D",
                      help="The true difference the power is at. Default: the pilot's observed one."),
               Option("power", default=0.8, kind="probability", check=_check_power,
                      help="The target power (the minimum detectable effect, the inputs needed)."),
               ALPHA, CORRECTION,
               Option("trials", default=1000, kind="resamples", help="Resampling rounds of the resampled power."),
               SEED,
               Option("out", metavar="FILE",
                      help="Also draw the power curves, the target power marked, to this .png, .svg or .pdf file."),
               FORCE)

    def compute(self, wh, **params):
        return plan(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        if fmt not in ("text", "table") or outcome.empty:
            return super().present(outcome, fmt)
        import json

        import pandas as pd

        from metaeval.analyses import plain, tables

        r = outcome.iloc[0]
        c = json.loads(r["conventions"])

        def f(x, digits=3):
            return "" if x is None or x != x else f"{x:.{digits}f}"

        shown = pd.DataFrame({"inputs": outcome["n_inputs"], "systems": outcome["n_systems"],
                              "ratings": outcome["ratings"], "level": outcome["level"].map(lambda x: f"{x:.2g}"),
                              "power": outcome["power"].map(f), "resampled": outcome["power_resampled"].map(f),
                              "MDE": outcome["minimum_effect"].map(f), "width": outcome["interval_width"].map(f),
                              "inputs for power": outcome["inputs_needed"].map(
                                  lambda x: "none" if x is None or x != x else str(int(x)))})
        caption = (f"Planning {r['system_a']} vs {r['system_b']} under {r['human']} on {r['dataset']}: the paired "
                   f"t-test's power at the {'given' if r['effect_given'] else 'pilot'} effect {f(r['effect'])} "
                   f"(pilot: {r['pilot_inputs']} inputs, {r['pilot_systems']} systems, {f(r['pilot_ratings'], 2)} "
                   f"ratings per cell), at the corrected level of every pair of the systems ({r['correction']}: "
                   f"{c['level']}); MDE and the inputs for power {r['target_power']:g}; width of the "
                   f"{100 * (1 - r['alpha']):g}% interval of the difference:")
        lines = [c["closed_form"], c["resampled"]]
        return plain.wrap(caption) + "\n" + tables.render(shown, "text").rstrip("\n") + "\n" + \
            "".join(plain.wrap(line) + "\n" for line in lines)


def _level(alpha: float, correction: str, m: int) -> float:
    return alpha if correction == "none" else alpha / m


def plan(wh, dataset: str, human: str, question: str = "systems", system=(), n_inputs=(), n_systems=(),
         ratings=(), *, effect: float | None = None, power: float = 0.8, alpha: float = ALPHA.default,
         correction: str = CORRECTION.default, trials: int = 1000, seed: int = SEED.default, out: str | None = None,
         force: bool = False, progress=None):
    """The latest ``plan_sizes`` rows of this setting, computed unless up to date (module docstring)."""
    import hashlib
    import math

    import numpy as np
    import pandas as pd

    from metaeval.analyses import plan as stat
    from metaeval.runs import bookkeeping, persist

    if question not in QUESTIONS:
        raise WarehouseError(Message("unknown ", Argument("question", question), f"; choose from {', '.join(QUESTIONS)}"))
    system = tuple(system)
    if len(system) != 2 or system[0] == system[1]:
        raise WarehouseError(Message("the systems question compares two systems: give ",
                                     Argument("system", placeholder="SYSTEM"), " twice (two different ones)"))
    if out is not None:
        from pathlib import Path

        if Path(out).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise WarehouseError(Message(Argument("out", out), " must end in .png, .svg or .pdf"))
        if not Path(out).resolve().parent.is_dir():
            raise WarehouseError(Message(Argument("out", out), ": its folder does not exist"))
    if effect is not None and (isinstance(effect, bool) or not math.isfinite(float(effect)) or effect == 0):
        raise WarehouseError(Message(Argument("effect", effect), " must be a finite number other than 0"))
    wh.require_dataset(dataset)
    wh.require_measures(dataset, [human])
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
    sizes_in = tuple(n_inputs) or tuple(n0 * k for k in (1, 2, 4, 8))
    sizes_sys = tuple(n_systems) or tuple(pilot_systems * k for k in (1, 2, 4, 8))
    base_r = max(1, int(round(r0)))
    sizes_r = tuple(ratings) or tuple(base_r * k for k in (1, 2, 4, 8))
    digest = hashlib.sha256(np.ascontiguousarray(d[paired]).tobytes())
    digest.update(np.ascontiguousarray(np.asarray(within, float)).tobytes())
    fingerprint = digest.hexdigest()
    setting = {"question": question, "system_a": system[0], "system_b": system[1], "alpha": float(alpha),
               "correction": correction, "target_power": float(power), "trials": int(trials), "seed": int(seed),
               "effect_given": effect is not None}
    if not force and (rows := persist.reusable(wh, TABLE, dataset, fingerprint, subset=None, human=human,
                                               effect=delta, **setting)) is not None:
        stored = rows[["n_inputs", "n_systems", "ratings"]].itertuples(index=False)
        if sorted(map(tuple, stored)) == sorted((n, s, r) for n in sizes_in for s in sizes_sys for r in sizes_r):
            return _drawn(_ordered(rows), out, power)
    computed = []
    for s_count in sizes_sys:
        family = s_count * (s_count - 1) // 2
        level = _level(alpha, correction, family)
        for r in sizes_r:
            sd = stat.difference_sd(var_d, var_e, r0, r)
            needed = stat.inputs_for_power(delta, sd, level, power)
            for n in sizes_in:
                computed.append({"n_inputs": int(n), "n_systems": int(s_count), "ratings": int(r), "family_size": family,
                            "level": level, "effect": delta, "sd": sd,
                            "power": _none(stat.t_power(delta, sd, n, level)),
                            "power_resampled": _none(stat.resampled_power(d[paired], delta, n, level, var_e=var_e,
                                                                         r0=r0, r=r, trials=trials, seed=seed)),
                            "minimum_effect": _none(stat.minimum_effect(sd, n, level, power)),
                            "interval_width": _none(stat.interval_width(sd, n, alpha)),
                            "inputs_needed": needed})
    conventions = {
        "closed_form": "Closed form: the two-sided paired t-test's power by the noncentral t (df n - 1, "
                       "noncentrality effect sqrt(n) / sd); sd^2 = var(d) - 2 var_e / r0 + 2 var_e / r.",
        "resampled": f"Resampled: {trials} rounds of n pilot differences drawn with replacement, shifted to the effect, "
                     f"the ratings' noise adjusted to r ratings (seed {seed}).",
        "level": {"none": "alpha"}.get(correction, "alpha / m, its first step over the m pairs: a lower bound of its "
                                                    "power"),
        "pilot": {"mean_difference": mean_d, "var_difference": var_d, "var_ratings": var_e, "ratings": r0,
                  "inputs": n0},
        "width": "2 t_{1-alpha/2, n-1} sd / sqrt(n): the expected width of the t interval of the mean difference",
    }
    frame = pd.DataFrame(computed).assign(dataset=dataset, human=human, **setting, pilot_inputs=n0,
                                     pilot_systems=pilot_systems, pilot_ratings=r0, fingerprint=fingerprint,
                                     conventions=bookkeeping.conventions_json(conventions))
    persist.ensure_table(wh, TABLE, SCRIPT)
    persist.write(wh, COMMAND, TABLE, frame, {"dataset": dataset, "human": human, **setting,
                                              "n_inputs": list(sizes_in), "n_systems": list(sizes_sys),
                                              "ratings": list(sizes_r), "effect": effect}, fingerprint, int(seed))
    return _drawn(_ordered(persist.reusable(wh, TABLE, dataset, fingerprint, subset=None, human=human,
                                            effect=delta, **setting)), out, power)


def _drawn(rows, out: str | None, target: float):
    """``rows``, their power curves drawn to ``out`` first when given."""
    if out is not None:
        import matplotlib.pyplot as plt

        from metaeval.analyses import plan as stat

        r = rows.iloc[0]
        fig = stat.power_figure(rows, target, f"{r['system_a']} vs {r['system_b']} under {r['human']} "
                                              f"({r['dataset']}), effect {r['effect']:.3f}")
        fig.savefig(out, dpi=150)
        plt.close(fig)
    return rows


def _none(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _ordered(rows):
    return rows.sort_values(["n_systems", "ratings", "n_inputs"]).reset_index(drop=True)
