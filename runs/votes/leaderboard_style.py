"""``metaeval leaderboard --style``: the votes with their style covariates (issue 35 item 2; the
model: :mod:`metaeval.analyses.leaderboard_style`, Chatbot Arena's style control).

Each vote is an (input, system a, system b) comparison; a covariate gives each of the two outputs
a number: ``length`` the cell attribute ``output_length`` (``ingest preferences`` stores it from an
AlpacaEval file's lengths or texts; ``ingest attributes`` from any table), else the length in
characters of the stored text (``ingest summaries``); ``headers``, ``lists``, ``bold`` the
markdown counts of the stored text; any other name a numeric attribute of the cell (or of its
input). A vote whose output lacks a covariate is refused, naming the system and input and what
to ingest: never left out silently. The controlled ratings and the coefficients are computed by
:func:`metaeval.runs.votes.leaderboard.leaderboard` (the same bootstrap rounds for both) and written by
one run to ``leaderboard`` and ``leaderboard_style``.
"""

from __future__ import annotations

from dataclasses import dataclass

from metaeval.errors import Argument, Message, WarehouseError

TABLE = "leaderboard_style"
LENGTH_ATTRIBUTE = "output_length"


def canonical(style) -> tuple[str, ...]:
    """The covariates, each once: the built-in ones in the arena's order, then attributes by name."""
    given = [str(s).strip() for s in ([style] if isinstance(style, str) else (style or ()))]
    if not given:
        return ()
    from metaeval.analyses import leaderboard_style as ls    # (with scipy.special: only when asked for)

    if any(not s for s in given):
        raise WarehouseError(Message("an empty ", Argument("style", ""), ": name a covariate (length, headers, "
                                     "lists, bold) or a numeric attribute"))
    return tuple(s for s in ls.BUILT_IN if s in given) + tuple(sorted(set(given) - set(ls.BUILT_IN)))


@dataclass(frozen=True)
class Covariates:
    """The standardised features ``Z`` (distinct rows x covariates) and how each was made."""

    names: tuple[str, ...]
    Z: object
    scale: object
    features: tuple[str, ...]
    sources: tuple[str, ...]


def design(wh, dataset: str, judge: str | None, style: tuple[str, ...]):
    """(systems, counted distinct rows, fingerprint, votes per system, Covariates) of the votes."""
    import hashlib

    import numpy as np
    import pandas as pd

    from metaeval import schema
    from metaeval.analyses import leaderboard as lb
    from metaeval.analyses import leaderboard_style as ls

    votes = pd.DataFrame(wh.con.execute(schema.statements("leaderboard_style")["votes"],
                                        {"dataset": dataset, "judge": judge}).fetchall(),
                         columns=["input", "system_a", "system_b", "winner", "n"])
    systems = sorted(set(votes["system_a"]) | set(votes["system_b"]))
    index = {s: i for i, s in enumerate(systems)}
    raw, features, sources, texts = [], [], [], {}
    for name in style:
        values, source = _values(wh, dataset, name, texts)
        fa = np.array([values.get((s, i), np.nan) for s, i in zip(votes["system_a"], votes["input"])], dtype=float)
        fb = np.array([values.get((s, i), np.nan) for s, i in zip(votes["system_b"], votes["input"])], dtype=float)
        _refuse_missing(dataset, name, votes, fa, fb)
        ratio = name in ls.BUILT_IN
        raw.append(ls.raw_feature(fa, fb, ratio))
        features.append("ratio" if ratio else "difference")
        sources.append(source)
    half = {"a": 2, "b": 0, "tie": 1}
    table = np.column_stack([votes["system_a"].map(index), votes["system_b"].map(index),
                             votes["winner"].map(half), *raw]).astype(float)
    rows, inverse = np.unique(table, axis=0, return_inverse=True)
    w = np.bincount(inverse.ravel(), votes["n"].to_numpy(dtype=float), len(rows))
    counted = lb.Counted(a=rows[:, 0].astype(np.int64), b=rows[:, 1].astype(np.int64), y=rows[:, 2] / 2.0, w=w,
                         n_systems=len(systems))
    Z, scale = ls.standardise(rows[:, 3:], w)
    for name, s in zip(style, scale):
        if not s > 0:
            raise WarehouseError(Message(Argument("style", name), " has the same feature in every vote (the two "
                                         "outputs never differ in it): its coefficient cannot be estimated; leave "
                                         "it out"))
    digest = hashlib.sha256(("\n".join(systems) + "\x1e" + "\n".join(style)).encode())
    for part in (counted.a, counted.b, counted.y, counted.w, rows[:, 3:]):
        digest.update(np.ascontiguousarray(part, dtype="<f8").tobytes())
    per_system = np.bincount(counted.a, counted.w, len(systems)) + np.bincount(counted.b, counted.w, len(systems))
    return (systems, counted, digest.hexdigest(), per_system.astype(np.int64),
            Covariates(style, Z, scale, tuple(features), tuple(sources)))


def _values(wh, dataset: str, name: str, texts: dict) -> tuple[dict, str]:
    """{(system, input): the output's value of covariate ``name``} and where the values come from
    (``texts``: the stored texts, read once into it when first needed)."""
    from metaeval.analyses import leaderboard_style as ls

    if name in ls.MARKDOWN:
        return {key: ls.markdown_counts(text)[name] for key, text in _texts(wh, dataset, texts).items()}, "stored texts"
    attribute = LENGTH_ATTRIBUTE if name == "length" else name
    if name != "length" and attribute not in wh.attributes(dataset):
        have = ", ".join(wh.attributes(dataset)) or "none"
        raise WarehouseError(Message(Argument("style", name), f" is neither length, headers, lists nor bold, nor an "
                                     f"attribute of {dataset!r} (its attributes: {have})"))
    values = _numeric(wh, dataset, attribute, name)
    if name != "length":
        return values, f"attribute {attribute}"
    stored = _texts(wh, dataset, texts)
    return _Cells({**{key: float(len(t)) for key, t in stored.items()}, **values}, values.inputs), (
        f"attribute {attribute}, else the text's characters" if stored else f"attribute {attribute}")


def _numeric(wh, dataset: str, attribute: str, name: str) -> dict:
    """The cells' numeric values of ``attribute`` (an input-level value for each system's cell)."""
    from metaeval import schema

    rows = wh.con.execute(schema.statements("attributes")["cells"],
                          {"dataset": dataset, "attribute": attribute}).fetchall()
    out, inputs_level = {}, {}
    for system, input_, value in rows:
        if system == "":
            inputs_level[input_] = _number(value, system, input_, attribute, name)
        else:
            out[system, input_] = _number(value, system, input_, attribute, name)
    return _Cells(out, inputs_level)


class _Cells(dict):
    """Cell values, falling back to the input's value (an input-level attribute) where a cell has none."""

    def __init__(self, cells: dict, inputs: dict):
        super().__init__(cells)
        self.inputs = inputs

    def get(self, key, default=None):
        return super().get(key, self.inputs.get(key[1], default))


def _number(value, system: str, input_: str, attribute: str, name: str) -> float:
    import math

    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x):
        where = f"{system}'s output for input {input_}" if system else f"input {input_}"
        raise WarehouseError(Message(Argument("style", name), f": attribute {attribute!r} of {where} is {value!r}, "
                                     "not a number"))
    return x


def _texts(wh, dataset: str, texts: dict) -> dict:
    """{(system, input): the stored text} of the dataset, read into ``texts`` when it is empty."""
    from metaeval import schema

    if not texts:
        texts.update({(s, i): t for s, i, t in wh.con.execute(schema.statements("texts")["summaries"],
                                                               {"dataset": dataset}).fetchall()})
    return texts


def _refuse_missing(dataset: str, name: str, votes, fa, fb) -> None:
    """One line naming the first output without the covariate, how many votes lack it, and the fix."""
    import numpy as np

    lacking = np.isnan(fa) | np.isnan(fb)
    if not lacking.any():
        return
    first = int(np.flatnonzero(lacking)[0])
    system = votes["system_a"].iloc[first] if np.isnan(fa[first]) else votes["system_b"].iloc[first]
    fix = {"length": f"ingest the outputs' lengths (the cell attribute {LENGTH_ATTRIBUTE}: an AlpacaEval file's "
                     "length_1/length_2 or output_1/output_2, or ingest attributes) or their texts (ingest summaries)",
           }.get(name, "ingest the outputs' texts (ingest summaries)" if name in ("headers", "lists", "bold") else
                 f"ingest the attribute {name!r} for every output compared (ingest attributes)")
    n = int(votes["n"].to_numpy()[lacking].sum())
    raise WarehouseError(Message(Argument("style", name), f": {n} of {int(votes['n'].sum())} votes of {dataset!r} lack "
                                 f"it, the first {system}'s output for input {votes['input'].iloc[first]}: {fix}"))


def coefficients_frame(covariates: Covariates, coefficients: dict, setting: dict, n_votes: int):
    """The ``leaderboard_style`` rows (without dataset and fingerprint) of one run."""
    import pandas as pd

    from metaeval.runs.engine import bookkeeping

    keys = ("judge", "style", "interval", "ridge", "alpha", "k", "seed")
    conventions = {"model": "P(a beats b) = sigma(theta_a - theta_b + z'gamma); a tie is half a win each way",
                   "features": "ratio: (f_a - f_b) / (f_a + f_b + 1); difference: f_a - f_b; each divided by its root "
                               "mean square over the votes (the sd of the votes taken both ways round), once, on "
                               "the observed votes",
                   "markdown": "code blocks removed; headers ^#{1,6}\\s; lists ^\\s*\\d+\\.\\s and ^\\s*[-*+]\\s; "
                               "bold **...** and __...__ within a line",
                   "coefficient": "logits per unit of the scaled feature",
                   "interval": ("percentile over the bootstrap rounds of the ratings" if setting["interval"] ==
                                "bootstrap" else "coefficient +- z * sandwich standard error")}
    none = bookkeeping.none_if_nan
    return pd.DataFrame({"covariate": list(covariates.names), "feature": list(covariates.features),
                         "source": list(covariates.sources), "feature_scale": [float(x) for x in covariates.scale],
                         "coefficient": [float(x) for x in coefficients["coefficient"]],
                         "lower": [none(x) for x in coefficients["lower"]],
                         "upper": [none(x) for x in coefficients["upper"]]}).assign(
        **{c: setting[c] for c in keys if c in setting}, n_valid=coefficients["n_valid"], votes=int(n_votes),
        conventions=bookkeeping.conventions_json(conventions))


def present(rows) -> str:
    """The coefficients as text, under the controlled ratings."""
    from metaeval.present import plain, tables

    if rows.empty:
        return ""
    r = rows.iloc[0]

    def three(x):
        return plain.number_text(x, 3, undefined="")

    shown = rows.assign(coefficient=rows["coefficient"].map(three), interval=[
        f"[{three(lo)}, {three(hi)}]" if lo is not None and lo == lo else "" for lo, hi in zip(rows["lower"],
                                                                                              rows["upper"])])
    how = (f"percentile bootstrap, the rounds of the ratings" if r["interval"] == "bootstrap"
           else "sandwich standard errors")
    caption = (f"Style coefficients (logits per unit of each scaled feature; {100 * (1 - r['alpha']):g}% "
               f"intervals, {how}):")
    table = tables.render(shown[["covariate", "coefficient", "interval", "feature", "source"]], "text")
    return plain.wrap(caption) + "\n" + table.rstrip("\n") + "\n"
