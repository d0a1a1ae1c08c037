"""``metaeval lc-winrate``: every system's win rate and AlpacaEval 2.0's length-controlled win
rate against one baseline, from the stored pairwise preferences (issue 35 item 2, issue 43 item
1; the statistic: :mod:`metaeval.analyses.length_control`).

The items are the verdicts between a system and the baseline (every human judge's by default, or
one automatic judge's), each in each presentation order, a continuous judge's preference as
stored (``preferences.probability``); the outputs' lengths are the cell attribute
``output_length`` (``ingest preferences`` stores it from an AlpacaEval annotations file's texts or
lengths; ``ingest attributes`` from any table). An item without both lengths is left out, and
said. Which of AlpacaEval's GLMs is computed depends on what is given: ``gamed`` (a file in the
layout of its ``df_gamed.csv``: the gamed baselines' rows and every instruction's difficulty)
gives ``length_controlled_v1``, the published LC; ``difficulty`` alone (its
``instruction_difficulty.csv`` layout: index, instruction_difficulty) ``length_controlled_noreg``;
neither ``length_controlled_minimal``; the instructions are told by the input attribute
``instruction_index`` (AlpacaEval's index). Intervals: percentile bootstrap over the system's
items at the C chosen on all of them, ``k`` rounds, each system's rounds from
``SeedSequence(seed, spawn_key=(i,))`` for its place i among the systems. One run writes the rows
of ``lc_winrates``; the same command on the same items and files computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, DATASET, FORCE, K, SEED, VOTES_BY, VOTES_WHERE, Option

COMMAND, TABLE = "lc-winrate", "lc_winrates"


@register
class LengthControlledWinrate(Family):
    name = COMMAND
    topic = "votes"
    headline = "Win rates against a baseline, raw and length-controlled (AlpacaEval 2.0)."
    summary = ("Win rates against a baseline, raw and length-controlled (AlpacaEval 2.0's GLMs), from pairwise "
               "preferences with the outputs' lengths.")
    tables = (TABLE,)
    report = ("metaeval.runs.report.votes:lc_winrate",)
    report_position = 44
    options = (DATASET, Option("baseline", required=True, metavar="SYSTEM",
                               help="The system every other is compared with (AlpacaEval's reference model)."),
               Option("judge", metavar="JUDGE", help="This automatic judge's preferences. Default: the human ones."),
               Option("gamed", metavar="FILE",
                      help="AlpacaEval's df_gamed.csv (columns model, index, preference, std_delta_len, "
                           "instruction_difficulty, not_gamed_baseline): computes length_controlled_v1, the published "
                           "LC. Without it: length_controlled_noreg (with --difficulty) or length_controlled_minimal."),
               Option("difficulty", metavar="FILE|joint",
                      help="The instructions' difficulty (columns index, instruction_difficulty: AlpacaEval's "
                           "instruction_difficulty.csv), or 'joint': fitted jointly over the dataset's systems as "
                           "AlpacaEval's notebooks/instruction_difficulty.ipynb does; without --gamed: "
                           "length_controlled_noreg."),
               K.but(help="Bootstrap rounds over the items."), SEED, ALPHA, VOTES_WHERE, VOTES_BY, FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        return _rows(inputs)

    def outcome(self, stored, inputs, **params):
        return _best_first(stored)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.present import plain, tables

        r = outcome.iloc[0]

        def one(x):
            return plain.number_text(x, 1, undefined="")

        shown = outcome.assign(**{"win rate": outcome["winrate"].map(one),
                                  "s.e.": outcome["standard_error"].map(one),
                                  "discrete": outcome["discrete_winrate"].map(one),
                                  "LC win rate": outcome["lc_winrate"].map(one),
                                  "interval": [f"[{one(lo)}, {one(hi)}]" if lo == lo and lo is not None else ""
                                               for lo, hi in zip(outcome["lower"], outcome["upper"])],
                                  "length coef.": outcome["length_coefficient"].map(
                                      lambda x: plain.number_text(x, 3, undefined=""))})
        who = f"judge {r['judge']}" if r["judge"] else "the human judges"
        caption = (f"Win rates (%) against {r['baseline']} from {who}: raw (AlpacaEval's win_rate, its standard "
                   f"error, and discrete_win_rate) and length-controlled by {variant(r['glm'], r['difficulty'])}, "
                   f"{100 * (1 - r['alpha']):g}% percentile bootstrap intervals over the items (k={r['k']}, "
                   f"seed={r['seed']}):")
        table = tables.render(shown[["system", "n_items", "win rate", "s.e.", "discrete", "LC win rate", "interval",
                                     "length coef."]], "text")
        return plain.wrap(caption) + "\n" + table.rstrip("\n") + "\n"


def variant(glm: str, difficulty: str = "") -> str:
    """What the ``glm`` of a row is, in words (every output of the command says it); ``difficulty``
    the row's (``joint``: the joint fit)."""
    if glm == "length_controlled_noreg" and difficulty == JOINT:
        return ("AlpacaEval's GLM length_controlled_noreg with the instructions' difficulty fitted jointly over "
                "this dataset's systems (its notebooks/instruction_difficulty.ipynb; no gamed baselines: not "
                "AlpacaEval 2.0's published LC, which needs its df_gamed.csv)")
    if glm == "length_controlled_v1":
        return "AlpacaEval 2.0's GLM length_controlled_v1 (its published LC when the gamed file is its df_gamed.csv)"
    if glm == "length_controlled_noreg":
        return ("AlpacaEval's GLM length_controlled_noreg (the instructions' difficulty given, no gamed baselines: "
                "not AlpacaEval 2.0's published LC, which needs its df_gamed.csv)")
    if glm == "length_controlled_minimal":
        return ("AlpacaEval's GLM length_controlled_minimal (no instruction difficulty, no gamed baselines: not "
                "AlpacaEval 2.0's published LC, which needs its df_gamed.csv)")
    return f"the unpenalised maximum-likelihood fit of earlier releases ({glm}: not AlpacaEval 2.0's LC)"


def _items(wh, dataset: str, baseline: str, judge: str | None):
    """The items (a DataFrame: system, input, preference, the two lengths) and their fingerprint."""
    import hashlib

    from metaeval import schema

    wh.require_dataset(dataset)
    items = wh.con.execute(schema.read("lc_winrate_items"),
                           {"dataset": dataset, "baseline": baseline, "judge": judge}).df()
    if items.empty:
        raise WarehouseError(Message(f"{dataset!r} has no {'human ' if judge is None else ''}preferences between ",
                                     Argument("baseline", baseline), " and another system"
                                     + ("" if judge is None else f" by judge {judge!r}")))
    digest = hashlib.sha256(items.to_csv(index=False).encode())
    return items, digest.hexdigest()


JOINT = "joint"
GAMED_COLUMNS = ("model", "index", "preference", "std_delta_len", "instruction_difficulty", "not_gamed_baseline")
DIFFICULTY_COLUMNS = ("index", "instruction_difficulty")


def _inputs(wh, dataset: str, baseline: str, judge: str | None = None, gamed: str | None = None,
            difficulty: str | None = None, *, k: int = K.default, seed: int = SEED.default,
            alpha: float = ALPHA.default):
    """What the ``lc_winrates`` rows of these preferences and settings are of: the items, the
    files read (their digests in the keys), the fingerprint."""
    from metaeval.runs.engine import parameters, store

    parameters.check_k(k, alpha, "interval")
    if gamed is not None and difficulty is not None:
        raise WarehouseError(Message(Argument("difficulty", difficulty), " with ", Argument("gamed", gamed),
                                     ": the gamed file gives the instructions' difficulty (as AlpacaEval reads it); "
                                     "give one of them"))
    items, fingerprint = _items(wh, dataset, baseline, judge)
    inputs = gamed_rows = difficulties = None
    digests = {"gamed": "", "difficulty": ""}
    if gamed is not None or difficulty is not None:
        indices = set(int(x) for x in items["instruction_index"].dropna())
        if gamed is not None:
            gamed_rows, digests["gamed"] = read_gamed(gamed, indices, dataset)
            first = gamed_rows.drop_duplicates("index")
            difficulties, digests["difficulty"] = dict(zip(first["index"], first["instruction_difficulty"])), \
                digests["gamed"]
        elif difficulty == JOINT:
            difficulties, digests["difficulty"] = _joint(items, dataset), JOINT
        else:
            difficulties, digests["difficulty"] = read_difficulty(difficulty, indices, dataset)
        inputs = _difficulty_of_items(items, difficulties, gamed if gamed is not None else difficulty,
                                      "gamed" if gamed is not None else "difficulty")
    glm = "length_controlled_v1" if gamed is not None else (
        "length_controlled_noreg" if difficulty is not None else "length_controlled_minimal")
    setting = {"judge": judge or "", "baseline": baseline, "k": int(k), "seed": int(seed), "alpha": float(alpha),
               "glm": glm, **digests}
    return store.Inputs(dataset, fingerprint, setting, data=(items, inputs, gamed_rows, difficulty))


def _rows(inputs_of):
    """Each system's AlpacaEval length-controlled win rate, its interval and coefficients."""
    import numpy as np
    import pandas as pd

    from metaeval.analyses import length_control as lc
    from metaeval.runs.engine import store

    (items, inputs, gamed_rows, difficulty), setting = inputs_of.data, dict(inputs_of.keys)
    dataset, fingerprint, glm, k, seed, alpha = (inputs_of.dataset, inputs_of.fingerprint, setting["glm"],
                                                 setting["k"], setting["seed"], setting["alpha"])
    digests = {"gamed": setting["gamed"], "difficulty": setting["difficulty"]}
    gamed_arrays = None if gamed_rows is None else {
        c: gamed_rows[c].to_numpy(float) for c in ("preference", "std_delta_len", "instruction_difficulty",
                                                   "not_gamed_baseline")}
    rows = []
    for i, (system, part) in enumerate(items.groupby("system", sort=True)):
        part = part.dropna(subset=["length_system", "length_baseline"])
        y, lm, lb = (part[c].to_numpy(float) for c in ("preference", "length_system", "length_baseline"))
        g = None if inputs is None else inputs.loc[part.index].to_numpy(float)
        r = lc.alpaca_lc(y, lm, lb, g, gamed_arrays)
        child = int(np.random.SeedSequence(seed, spawn_key=(i,)).generate_state(1, np.uint64)[0])
        lower, upper, n_valid = (lc.alpaca_bootstrap(y, lm, lb, g, gamed_arrays, r.C, k, child, alpha)
                                 if r.lc_winrate == r.lc_winrate else (None, None, 0))
        rows.append({"system": system, "n_items": int(r.n), "winrate": _value(r.win_rate),
                     "standard_error": _value(r.standard_error), "discrete_winrate": _value(r.discrete_win_rate),
                     "lc_winrate": _value(r.lc_winrate), "lower": _value(lower), "upper": _value(upper),
                     "length_coefficient": _value(0.0 - r.length), "difficulty_coefficient": _value(r.difficulty),
                     "penalty_c": _value(r.C), "n_valid": n_valid})
    dropped = int(len(items) - sum(r["n_items"] for r in rows))
    conventions = {"glm": glm, "variant": variant(glm, digests["difficulty"]),
                   "model": "logit P(system preferred) = phi tanh(s) + psi difficulty + theta not_gamed, no "
                            "intercept; s = (len(baseline's output) - len(system's)) / sd, sd with ddof 1 over the "
                            "system's items (AlpacaEval's std_delta_len)"
                            + ("" if glm == "length_controlled_v1" else
                               "; no gamed baselines" + ("; no difficulty term" if difficulty is None else "")),
                   "lc_winrate": "100 mean_i s(psi difficulty_i + theta): the win rate at no length difference",
                   "estimator": "soft labels (a continuous preference as stored, a tie 0.5), L1 logistic regression "
                                "C sum_i w_i loss_i + |beta|_1 solved exactly; C among logspace(-4, 4, 10) by "
                                "5-fold GroupKFold on the soft log-loss (AlpacaEval's LogisticRegressionCV, "
                                "liblinear, which stops at its tolerance 1e-4: its numbers differ from the exact "
                                "minimum by a few hundredths of a point)"
                                + ("; the gamed baselines' rows weighted lambda / 2, lambda = 0.2"
                                   if glm == "length_controlled_v1" else ""),
                   "length_coefficient": "-phi: > 0 when the system's longer outputs were preferred",
                   "winrate": "100 mean preference (AlpacaEval's win_rate); standard_error 100 sd / sqrt(n), "
                              "ddof 1; discrete_winrate the rounded preferences' (0.5 a draw)",
                   "interval": f"{100 * (1 - alpha):g}% percentile bootstrap over the system's items at the chosen "
                               f"C, k={k}; system i's rounds from SeedSequence(seed, spawn_key=(i,))",
                   "items_without_lengths": dropped}
    frame = pd.DataFrame(rows).assign(dataset=dataset, fingerprint=fingerprint, **setting,
                                      conventions=_json(conventions))
    return store.Rows(frame, {"dataset": dataset, **setting}, seed)


def _csv(file: str, columns: tuple):
    """The rows of a CSV file with these columns (an InputError naming the first missing one)."""
    import pandas as pd

    from metaeval.errors import InputError

    try:
        frame = pd.read_csv(file, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(file, None, None, "no such file") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(file, None, None, f"cannot read as CSV: {str(exc).splitlines()[0]}") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(file, None, missing[0], f"missing column(s) {missing}; the file has the columns "
                         f"{', '.join(columns)}")
    if frame.empty:
        raise InputError(file, None, None, "the file has no rows")
    return frame


def _numbers(frame, file: str, column: str, *, integer=False, lo=None, hi=None, empty_ok=False):
    """The column as floats, every value checked (an InputError naming the line and field)."""
    import math

    import numpy as np

    from metaeval.errors import InputError

    out = np.empty(len(frame))
    for i, text in enumerate(frame[column]):
        text = text.strip()
        try:
            x = float(text) if text or not empty_ok else float("nan")
        except ValueError:
            x = None
        ok = x is not None and (math.isfinite(x) or (empty_ok and not text)) and (
            not integer or (math.isfinite(x) and x == int(x) and x >= 0)) and (
            lo is None or not math.isfinite(x) or lo <= x <= hi)
        if not ok:
            want = "an integer >= 0" if integer else ("a number in [0, 1]" + (" or nothing" if empty_ok else "")
                                                      if lo is not None else "a finite number")
            raise InputError(file, i + 2, column, f"expected {want}, got {text!r}")
        out[i] = x
    return out


def _check_indices(index, file: str, indices: set, dataset: str) -> None:
    from metaeval.errors import InputError

    for i, x in enumerate(index):
        if int(x) not in indices:
            known = (f"its instructions' indices run {min(indices)}..{max(indices)}" if indices else
                     "no instruction_index is stored for its items (ingest AlpacaEval's annotations)")
            raise InputError(file, i + 2, "index", f"index {int(x)} is not an instruction of dataset {dataset!r}: "
                             f"{known}")


def read_gamed(file: str, indices: set, dataset: str):
    """(rows, sha256) of a file in the layout of AlpacaEval's ``df_gamed.csv``, checked: every
    column, an index (an instruction of the dataset), a preference in [0, 1] or empty (left out,
    as AlpacaEval does), finite std_delta_len and instruction_difficulty, not_gamed_baseline
    True or False."""
    import hashlib

    import numpy as np
    import pandas as pd

    from metaeval.errors import InputError

    frame = _csv(file, GAMED_COLUMNS)
    out = pd.DataFrame({"index": _numbers(frame, file, "index", integer=True).astype(np.int64),
                        "preference": _numbers(frame, file, "preference", lo=0.0, hi=1.0, empty_ok=True),
                        "std_delta_len": _numbers(frame, file, "std_delta_len"),
                        "instruction_difficulty": _numbers(frame, file, "instruction_difficulty")})
    flags = []
    for i, text in enumerate(frame["not_gamed_baseline"]):
        word = text.strip().lower()
        if word not in ("true", "false", "1", "0"):
            raise InputError(file, i + 2, "not_gamed_baseline", f"expected True or False, got {text!r}")
        flags.append(1.0 if word in ("true", "1") else 0.0)
    out["not_gamed_baseline"] = flags
    _check_indices(out["index"], file, indices, dataset)
    return out, hashlib.sha256(out.to_csv(index=False).encode()).hexdigest()


def read_difficulty(file: str, indices: set, dataset: str):
    """({index: difficulty}, sha256) of a file with the columns index, instruction_difficulty
    (AlpacaEval's ``instruction_difficulty.csv``), checked; an index given twice is refused."""
    import hashlib

    import numpy as np

    from metaeval.errors import InputError

    frame = _csv(file, DIFFICULTY_COLUMNS)
    index = _numbers(frame, file, "index", integer=True).astype(np.int64)
    values = _numbers(frame, file, "instruction_difficulty")
    seen: dict = {}
    for i, x in enumerate(index):
        if int(x) in seen:
            raise InputError(file, i + 2, "index", f"index {int(x)} is given twice (also on line {seen[int(x)]})")
        seen[int(x)] = i + 2
    _check_indices(index, file, indices, dataset)
    digest = hashlib.sha256(repr(sorted(zip(index.tolist(), values.tolist()))).encode()).hexdigest()
    return dict(zip(index.tolist(), values.tolist())), digest


def _joint(items, dataset: str) -> dict:
    """The instructions' difficulty by the joint fit over every system's items with both lengths
    and an instruction index (analyses.length_control.joint_difficulty), in the items' order."""
    from metaeval.analyses import length_control as lc

    usable = items.dropna(subset=["length_system", "length_baseline", "instruction_index"])
    if usable.empty:
        raise WarehouseError(Message(Argument("difficulty", JOINT), f" needs items with both outputs' lengths and "
                                     f"an instruction index; {dataset!r} has none against this baseline"))
    difficulties, _ = lc.joint_difficulty(usable["system"].to_numpy(), usable["instruction_index"].to_numpy(),
                                          usable["preference"].to_numpy(float),
                                          usable["length_system"].to_numpy(float),
                                          usable["length_baseline"].to_numpy(float))
    return difficulties


def _difficulty_of_items(items, difficulties: dict, file: str, option: str):
    """Each item's instruction difficulty (a Series on the items' index); an item without an
    instruction_index, or whose index the file lacks, refused."""
    import pandas as pd

    from metaeval.errors import InputError

    missing = items[items["instruction_index"].isna()]
    if len(missing):
        r = missing.iloc[0]
        raise WarehouseError(Message(Argument(option, file), f" needs each item's instruction index (the input "
                                     f"attribute instruction_index, which ingesting AlpacaEval's annotations "
                                     f"stores); input {r['input']!r} has none"))
    out = items["instruction_index"].map(lambda x: difficulties.get(int(x)))
    if out.isna().any():
        r = items[out.isna()].iloc[0]
        raise InputError(file, None, "index", f"no instruction_difficulty for index {int(r['instruction_index'])} "
                         f"(input {r['input']!r} of system {r['system']!r})")
    return pd.Series(out.to_numpy(float), index=items.index)


def _value(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _json(conventions: dict) -> str:
    from metaeval.runs.engine import bookkeeping

    return bookkeeping.conventions_json(conventions)


def _best_first(rows):
    return rows.sort_values(["lc_winrate", "system"], ascending=[False, True], na_position="last").reset_index(drop=True)
