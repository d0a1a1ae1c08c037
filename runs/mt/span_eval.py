"""``metaeval span-eval``: metrics' predicted error spans against the human ones (the statistics:
:mod:`metaeval.analyses.spans`).

A metric's spans are ingested with ``ingest mqm FILE --judge NAME`` (an automatic judge of
``error_spans``). On the segments (system x input) the judge and at least one human rater rated,
the human spans are the union over the raters; each judge's character-level precision, recall
and F1 (partial overlaps earn partial credit), without and with severity matching, micro and
macro over the segments, with percentile bootstrap intervals over segments. One run writes the
rows of every judge; the same command on the same spans computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError, ingest_hint
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, CORRECTION, DATASET, FORCE, K, SEED, Option

COMMAND, TABLE, TESTS = "span-eval", "span_evaluation", "span_tests"

JUDGES = Option("judges", multiple=True, flag="--judge", metavar="NAME",
                help="The automatic judges (metrics' predicted spans) evaluated; default: every one. Repeatable.")


@register
class SpanEval(Family):
    name = COMMAND
    topic = "mt"
    headline = "Metrics' predicted error spans against the human ones (character P/R/F1)."
    summary = "Metrics' predicted error spans against the human ones: character precision, recall, F1"
    tables = (TABLE, TESTS)
    report = ("metaeval.runs.report.spans:span_eval",)
    report_position = 48
    tests_table = TESTS
    options = (DATASET, JUDGES, K.but(help="Bootstrap resamples of the segments, and permutations of the tests."),
               SEED, ALPHA, CORRECTION, FORCE)

    def inputs(self, wh, dataset: str, judges=(), *, k: int = K.default, seed: int = SEED.default,
               alpha: float = ALPHA.default, correction: str = CORRECTION.default):
        """The spans of the humans and the chosen judges (their fingerprint); each table's keys."""
        import hashlib

        from metaeval.runs.engine import store

        rows, judges = _read(wh, dataset, judges)
        used = rows[(rows["kind"] == "human") | rows["judge"].isin(judges)]
        fingerprint = hashlib.sha256(used.to_csv(index=False).encode()).hexdigest()
        return store.Inputs(dataset, fingerprint, {"k": k, "seed": seed, "alpha": alpha, "judge": judges},
                            data=(used, judges),
                            more={TESTS: {"k": k, "seed": seed, "alpha": alpha, "correction": correction}})

    def rows(self, wh, inputs, *, k: int = K.default, seed: int = SEED.default, alpha: float = ALPHA.default,
             correction: str = CORRECTION.default, **params):
        return _rows(inputs, k, seed, alpha, correction)

    def enough(self, stored, inputs, **params) -> bool:
        """Every judge's evaluation stored, and the tests between them when there are two or more."""
        judges = inputs.data[1]
        return stored[TABLE] is not None and set(stored[TABLE]["judge"]) == set(judges) and \
            (len(judges) < 2 or stored[TESTS] is not None)

    def outcome(self, stored, inputs, **params):
        import pandas as pd

        return ordered({t: (v if v is not None else pd.DataFrame()) for t, v in stored.items()})   # one judge: no test


def _segments(rows) -> dict:
    """(system, input) -> (characters, {judge: flattened spans}) of the given span rows."""
    from metaeval.analyses import spans

    out = {}
    for (system, input_), seg in rows.groupby(["system", "input"], sort=True):
        lengths = {"source": int(seg["source_length"].iloc[0]), "target": int(seg["target_length"].iloc[0])}
        judged = {}
        for judge, g in seg.groupby("judge", sort=True):
            marked = [(r.side, int(r.span_start), int(r.span_end), r.severity) for r in g.itertuples()
                      if isinstance(r.side, str)]
            judged[judge] = spans.flatten(lengths, marked)[1]
        out[(system, input_)] = (sum(lengths.values()), judged)
    return out


def _counts(judge: str, keys, human: dict, predicted: dict, matching: bool):
    from metaeval.analyses import spans

    lengths = [human[key][0] for key in keys]
    gold = [[s for marks in human[key][1].values() for s in marks] for key in keys]
    return spans.span_counts(lengths, [predicted[key][1][judge] for key in keys], gold, severity=matching)


def _judged(judge: str, human: dict, predicted: dict) -> list:
    keys = sorted(k for k in set(human) & set(predicted) if judge in predicted[k][1])
    if not keys:
        raise WarehouseError(Message("the judge ", Argument("judges", [judge]), " rated no segment a human rated"))
    return keys


def _evaluate(judge: str, human: dict, predicted: dict, k: int, seed: int, alpha: float) -> list[dict]:
    from metaeval.analyses import spans

    keys = _judged(judge, human, predicted)
    rows = []
    for matching in (False, True):
        out = spans.bootstrap(_counts(judge, keys, human, predicted, matching), k, seed, alpha)
        for averaging in ("micro", "macro"):
            row = {"judge": judge, "severity_matching": matching, "averaging": averaging, "n_segments": len(keys)}
            for statistic in spans.STATISTICS:
                value, lower, upper = out[(averaging, statistic)]
                row.update({statistic: value, f"{statistic}_lower": lower, f"{statistic}_upper": upper})
            rows.append(row)
    return rows


def _tests(judges, human: dict, predicted: dict, k: int, seed: int, alpha: float, correction: str) -> list[dict]:
    """Every pair of judges' paired test, corrected over the pairs per severity matching."""
    import itertools

    from metaeval.analyses import conclusions, spans

    rows = []
    for matching in (False, True):
        family = []
        for a, b in itertools.combinations(sorted(judges), 2):
            keys = sorted(set(_judged(a, human, predicted)) & set(_judged(b, human, predicted)))
            test = (spans.paired_test(_counts(a, keys, human, predicted, matching),
                                      _counts(b, keys, human, predicted, matching), k, seed)
                    if keys else spans.PairedTest(float("nan"), float("nan"), 0))
            family.append({"judge_a": a, "judge_b": b, "severity_matching": matching, "n_segments": len(keys),
                           "delta": test.delta, "pvalue": test.pvalue, "n_valid": test.n_valid})
        if not family:
            continue
        verdict = conclusions.decide([r["pvalue"] for r in family], formula="add-one", k=k, correction=correction,
                                     alpha=alpha, n_valid=[r["n_valid"] for r in family])
        r = verdict.resolution      # the family's resolution, as typed columns (None: no defined test)
        resolution = {"pvalue_formula": r.formula if r else None, "family_tests": r.m if r else None,
                      "smallest_p": r.smallest_p if r else None, "needed_p": r.needed_p if r else None,
                      "k_needed": r.k_needed if r else None}
        for i, row in enumerate(family):
            rows.append({**row, "pvalue_corrected": float(verdict.adjusted[i]), "correction": correction,
                         "significant": bool(verdict.significant[i]) if verdict.defined[i] else None,
                         "resolvable": verdict.resolvable, **resolution})
    return rows


def _rows(inputs, k: int, seed: int, alpha: float, correction: str):
    """The ``span_evaluation`` rows of every judge and the ``span_tests`` between them (``{table: rows}``)."""
    import pandas as pd

    from metaeval.runs.engine import bookkeeping, persist, store

    (used, judges), dataset, fingerprint = inputs.data, inputs.dataset, inputs.fingerprint
    human = _segments(used[used["kind"] == "human"])
    predicted = _segments(used[used["kind"] == "automatic"])
    conventions = {"gold": "the union of the human raters' spans", "units": "characters of source and target",
                   "matching": "severity_matching: a severity covering the character in both (case-folded)",
                   "macro": "mean over the segments where the value is defined",
                   "bootstrap": "segments with replacement, numpy default_rng(seed); percentile interval"}
    base = {"dataset": dataset, "subset": "", "k": k, "seed": seed, "alpha": alpha, "fingerprint": fingerprint}
    frames = {TABLE: pd.DataFrame([{**base, **row, "conventions": bookkeeping.conventions_json(conventions)}
                                   for judge in judges for row in _evaluate(judge, human, predicted, k, seed, alpha)])}
    tests = _tests(judges, human, predicted, k, seed, alpha, correction)
    test_conventions = {"statistic": "micro F1(judge_a) - micro F1(judge_b)", "pvalue_formula": "add-one",
                        "permutation": "each segment's counts swapped between the judges with probability 1/2"}
    frames[TESTS] = pd.DataFrame([{**base, **row, "conventions": bookkeeping.conventions_json(test_conventions)}
                                  for row in tests])
    return store.Rows({t: persist.nan_as_null(f) for t, f in frames.items()},
                      {"dataset": dataset, "judges": list(judges), "k": k, "alpha": alpha, "correction": correction},
                      seed)




def ordered(tables: dict) -> dict:
    """The rows in an order that is the same on every dataset (not the store's): the settings in
    a fixed order (severity matching off then on; micro then macro), in each the judges by F1, the
    best first (undefined last; equal F1s by name); the tests per matching by delta, descending."""
    out = dict(tables)
    rows = out.get(TABLE)
    if rows is not None and len(rows):
        out[TABLE] = rows.assign(_avg=rows["averaging"].map({"micro": 0, "macro": 1}), _f1=-rows["f1"].astype(float)) \
            .sort_values(["severity_matching", "_avg", "_f1", "judge"], na_position="last", kind="stable") \
            .drop(columns=["_avg", "_f1"]).reset_index(drop=True)
    tests = out.get(TESTS)
    if tests is not None and len(tests):
        out[TESTS] = tests.assign(_d=-tests["delta"].astype(float)) \
            .sort_values(["severity_matching", "_d", "judge_a", "judge_b"], na_position="last", kind="stable") \
            .drop(columns=["_d"]).reset_index(drop=True)
    return out


def _read(wh, dataset: str, judges):
    """The dataset's span rows and the judges evaluated (every automatic one by default)."""
    from metaeval.runs.mt.raters import rated_rows

    wh.require_dataset(dataset)
    exists = wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'error_spans'").fetchall()[0][0]
    rows = rated_rows(wh, dataset) if exists else None
    automatic = sorted(rows.loc[rows["kind"] == "automatic", "judge"].unique()) if rows is not None else []
    judges = tuple(dict.fromkeys(judges)) or tuple(automatic)
    unknown = [j for j in judges if j not in automatic]
    if not judges or unknown:
        raise WarehouseError(Message(f"dataset {dataset!r} has no predicted spans of ", Argument("judges", unknown or
                                     ["NAME"]), f"; its automatic judges: {', '.join(automatic) or 'none'}"))
    if not (rows["kind"] == "human").any():
        raise WarehouseError(Message(f"dataset {dataset!r} has no human error spans to evaluate against; ingest "
                                     "the raters' spans with `", ingest_hint("mqm", dataset), "`"))
    return rows, judges
