"""Bit-identity check of the analysis engine: run a fixed set of commands on a SummEval
warehouse (or, ``--registry``, every registered family on the repository's examples) and dump
every result table, sorted, without run ids and times.

Usage (the warehouse must hold SummEval, ingested as README "Real data" says)::

    python bench/engine_identity.py --db /tmp/before.duckdb --out /tmp/before-dump
    python bench/engine_identity.py --db /tmp/after.duckdb --out /tmp/after-dump
    diff -r /tmp/before-dump /tmp/after-dump          # nothing: identical rows

Each table becomes ``OUT/<table>.csv``: the columns except ``run_id``, ``result_id``,
timestamps and ``analysis_runs``' owner and time columns (the warehouse's path in a
command line written ``<DB>``), values written with ``repr`` (every
bit of a float), rows sorted. The commands' printed output goes to ``OUT/_stdout/``: it is
informative only (it names run ids) and not part of the comparison unless ``--with-stdout``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

COMMANDS = [
    ["correlate", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-*", "--metric", "bertscore.*", "--metric", "qa-eval.*",
     "--level", "system", "--level", "summary", "--level", "global",
     "--coefficient", "pearson", "--coefficient", "spearman", "--coefficient", "kendall",
     "--format", "csv"],
    ["ci", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.*", "--metric", "bertscore.f1", "--metric", "qa-eval.f1",
     "--level", "system", "--level", "summary",
     "--coefficient", "pearson", "--coefficient", "kendall",
     "--method", "fisher",  # was --method boot-both --method boot-systems --method fisher: click kept the last
     "--k", "200", "--seed", "3", "--format", "csv"],
    ["compare", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.f1", "--metric", "bertscore.f1", "--metric", "qa-eval.f1",
     "--metric", "s3.pyr",
     "--level", "system", "--level", "summary", "--coefficient", "kendall",
     "--coefficient", "pearson",
     "--method", "williams",  # was --method perm-both --method boot-inputs --method williams: click kept the last
     "--correction", "holm", "--k", "200", "--seed", "5", "--format", "csv"],
    ["compare", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-1.f1", "--metric", "bertscore.f1", "--metric", "s3.pyr",
     "--level", "system", "--coefficient", "pearson", "--method", "perm-both",
     "--sequential", "--k-max", "2000", "--seed", "7", "--format", "csv"],
    ["accuracy", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-*", "--metric", "bertscore.*", "--soft", "--k", "200",
     "--seed", "4", "--format", "csv"],
    ["accuracy", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.*", "--metric", "bertscore.*", "--level", "system",
     "--level", "micro", "--format", "csv"],
    ["annotators", "--dataset", "summeval", "--human", "expert.*",
     "--level", "system", "--level", "summary", "--coefficient", "pearson",
     "--coefficient", "kendall", "--k", "200", "--splits", "20", "--seed", "1",
     "--format", "csv"],
    ["simulate", "coverage", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.f1", "--metric", "bertscore.f1", "--coefficient", "kendall",
     "--trials", "60", "--k", "100", "--seed", "2"],
    ["compare", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.f1", "--metric", "bertscore.f1", "--metric", "qa-eval.f1",
     "--metric", "s3.pyr", "--level", "system", "--coefficient", "kendall",
     "--method", "perm-both", "--alternative", "two-sided", "--correction", "holm",
     "--k", "200", "--seed", "6", "--format", "csv"],
    ["winners", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.f1", "--metric", "bertscore.f1", "--metric", "qa-eval.f1",
     "--metric", "s3.pyr", "--level", "system", "--coefficient", "kendall",
     "--method", "perm-both", "--correction", "holm", "--format", "csv"],
    ["evaluate", "--dataset", "summeval", "--human", "expert.relevance",
     "--metric", "rouge-2.*", "--against", "bertscore.f1", "--against", "s3.pyr",
     "--k", "200", "--seed", "0", "--format", "csv"],
]

#: The families beyond the engine's (issue 32 item 6): detection and judges on the repository's
#: examples, categories on SummEval's criteria; ``--with-examples`` ingests the examples first.
EXAMPLES = [
    ["ingest", "table", "examples/factuality/scores.csv", "--dataset", "factuality", "--human", "human.*"],
    ["ingest", "attributes", "examples/factuality/attributes.csv", "--dataset", "factuality"],
    ["ingest", "preferences", "docs/examples/preferences.csv", "--dataset", "judges-demo"],
]
FAMILIES = [
    ["detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1",
     "--tune", "split=validation", "--where", "split=test", "--by", "source", "--k", "200", "--format", "csv"],
    ["detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1", "--k", "50",
     "--format", "csv"],
    ["correlate", "--dataset", "factuality", "--human", "human.consistency", "--level", "global",
     "--control", "system", "--coefficient", "pearson", "--format", "csv"],
    ["judges", "--dataset", "judges-demo", "--k", "200", "--format", "json"],
    ["judges", "--dataset", "judges-demo", "--k", "50", "--format", "json"],
    ["categories", "--dataset", "summeval", "--human", "expert.relevance",
     "--category", "coherence=expert.coherence", "--category", "fluency=expert.fluency",
     "--ablation", "coherence=expert.consistency", "--ablation", "fluency=turker.relevance",
     "--metric", "rouge-2.f1", "--metric", "bertscore.f1", "--level", "system", "--level", "summary",
     "--coefficient", "pearson", "--format", "csv"],
]

#: Every registered family at least once on the repository's own data (issue 44 item 7; no
#: SummEval needed): the demo datasets, ``examples/`` and ``docs/examples/``, and the texts of
#: ``docs/examples/texts.jsonl`` with a human judgment of :func:`texts_human` (written to
#: ``{TMP}``). ``--registry`` runs REGISTRY_SETUP then REGISTRY (``tests/test_family_entry_points.py``
#: runs the same commands and the same calls from Python).
REGISTRY_SETUP = [
    ["demo", "--systems", "5", "--inputs", "8", "--k", "40"],
    ["demo", "--dataset", "lp2", "--systems", "4", "--inputs", "8", "--k", "40", "--seed", "2"],
    *EXAMPLES,
    ["ingest", "attributes", "docs/examples/preferences-lengths.csv", "--dataset", "judges-demo"],
    ["ingest", "preferences", "docs/examples/alpaca.csv", "--dataset", "alpaca", "--judge", "gpt4"],
    ["ingest", "mqm", "docs/examples/mqm.tsv", "--dataset", "mqm-demo"],
    ["ingest", "mqm", "docs/examples/mqm-metric.tsv", "--dataset", "mqm-demo", "--judge", "xcomet"],
    ["ingest", "summaries", "docs/examples/texts.jsonl", "--dataset", "texts"],
    ["ingest", "table", "{TMP}/texts-human.csv", "--dataset", "texts", "--human", "human.*"],
    ["score", "texts", "--metric", "rouge"],
]
#: (family, command line): each family's command once or more, in an order where what a family
#: reads (compare's tests for winners, replicability, optimal-set) is written before.
REGISTRY = [
    ("correlate", ["correlate", "--dataset", "demo", "--human", "expert.relevance"]),
    ("correlate", ["correlate", "--dataset", "factuality", "--human", "human.consistency", "--by", "source",
                   "--level", "global", "--coefficient", "pearson"]),
    ("ci", ["ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--k", "40", "--seed", "1"]),
    ("plot-ci", ["plot", "ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
                 "--out", "{TMP}/ci.svg", "--overwrite"]),
    ("compare", ["compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
                 "--coefficient", "kendall", "--k", "40", "--seed", "1"]),
    ("compare", ["compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
                 "--coefficient", "kendall", "--alternative", "greater", "--k", "40"]),
    ("compare", ["compare", "--dataset", "lp2", "--human", "expert.relevance", "--level", "system",
                 "--coefficient", "kendall", "--alternative", "greater", "--k", "40"]),
    ("compare", ["compare", "--dataset", "texts", "--human", "human.quality", "--level", "system",
                 "--coefficient", "kendall", "--k", "40"]),
    ("accuracy", ["accuracy", "--dataset", "demo", "--human", "expert.relevance"]),
    ("systems-agreement", ["systems-agreement", "--dataset", "demo", "--human", "expert.relevance",
                           "--test", "permutation", "--k", "40"]),
    ("winners", ["winners", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
                 "--coefficient", "kendall"]),
    ("winners", ["winners", "--dataset", "texts", "--human", "human.quality", "--level", "system",
                 "--coefficient", "kendall"]),
    ("replicability", ["replicability", "--dataset", "demo", "--human", "expert.relevance", "--dataset", "lp2",
                       "--level", "system", "--coefficient", "kendall"]),
    ("rank-tasks", ["rank-tasks", "--task", "demo:expert.relevance:system:kendall",
                    "--task", "demo:expert.relevance:summary:pearson:2", "--k", "40"]),
    ("agreement", ["agreement", "--dataset", "demo"]),
    ("annotators", ["annotators", "--dataset", "demo", "--k", "40", "--splits", "5"]),
    ("normality", ["normality", "--dataset", "demo"]),
    ("simulate-coverage", ["simulate", "coverage", "--dataset", "demo", "--human", "expert.relevance",
                           "--metric", "sim-high.f1", "--coefficient", "kendall", "--trials", "5", "--k", "40"]),
    ("simulate-power", ["simulate", "power", "--dataset", "texts", "--human", "human.quality", "--trials", "5",
                        "--k", "40", "--proportions", "0.5,1.0", "--method", "williams"]),
    ("detection", ["detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1",
                   "--k", "40"]),
    ("categories", ["categories", "--dataset", "factuality", "--human", "human.consistency",
                    "--category", "a=human.label", "--level", "global", "--coefficient", "pearson"]),
    ("judges", ["judges", "--dataset", "judges-demo", "--k", "40"]),
    ("error-overlap", ["error-overlap", "--dataset", "demo", "--human", "expert.relevance",
                       "--metric", "sim-high.f1", "--metric", "sim-low.f1"]),
    ("held-out-ties", ["held-out-ties", "--dataset", "demo", "--human", "expert.relevance", "--fraction", "0.5",
                       "--seed", "3"]),
    ("judge-diagnostics", ["judge-diagnostics", "--dataset", "judges-demo", "--k", "40"]),
    ("judge-leaderboard", ["judge-leaderboard", "--dataset", "judges-demo", "--k", "40"]),
    ("leaderboard", ["leaderboard", "--dataset", "judges-demo", "--k", "40"]),
    ("lc-winrate", ["lc-winrate", "--dataset", "alpaca", "--baseline", "baseline", "--judge", "gpt4", "--k", "40"]),
    ("measure-correlation", ["measure-correlation", "--dataset", "demo", "--measure", "expert.relevance",
                             "--measure", "sim-high.f1"]),
    ("optimal-set", ["optimal-set", "--dataset", "texts", "--human", "human.quality", "--level", "system",
                     "--coefficient", "kendall", "--k", "40"]),
    ("plan", ["plan", "--dataset", "demo", "--human", "expert.relevance", "--system", "S00", "--system", "S01",
              "--trials", "5"]),
    ("ppi", ["ppi", "--dataset", "demo", "--human", "expert.relevance", "--metric", "sim-high.f1",
             "--labelled-share", "0.5"]),
    ("rank-change", ["rank-change", "--dataset", "demo", "--metric", "sim-high.f1", "--metric", "expert.relevance"]),
    ("raters", ["raters", "--dataset", "mqm-demo", "--human", "mqm", "--k", "40"]),
    ("span-eval", ["span-eval", "--dataset", "mqm-demo", "--k", "40"]),
    ("system-tests", ["system-tests", "--dataset", "demo", "--measure", "sim-high.f1", "--k", "40"]),
]


def texts_human(path: Path) -> Path:
    """A human judgment (``human.quality``, 1..5, seeded) of every summary of
    ``docs/examples/texts.jsonl``, as a score table: ``simulate power`` and ``optimal-set`` need
    texts or ROUGE scores with a human judgment, which no example has."""
    import json
    import random

    draw = random.Random(1)
    root = Path(__file__).resolve().parents[1]
    lines = ["input,system,human.quality"]
    for line in (root / "docs" / "examples" / "texts.jsonl").read_text().splitlines():
        row = json.loads(line)
        lines.append(f"{row['instance_id']},{row['summarizer_id']},{draw.randint(1, 5)}")
    path.write_text("\n".join(lines) + "\n")
    return path


DROP = {"run_id", "result_id", "started_at", "finished_at", "created_at", "time",
        "computed_at", "owner", "owner_pid", "owner_host", "heartbeat_at", "pid", "host",
        "command", "duration_s", "elapsed_s", "block_seconds", "seconds"}


def run(db: str, out: Path, commands=COMMANDS) -> None:
    env = dict(os.environ, METAEVAL_DB=db)
    (out / "_stdout").mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).with_name("metaeval")
    tmp = out / "_inputs"
    tmp.mkdir(exist_ok=True)
    texts_human(tmp / "texts-human.csv")
    for i, args in enumerate(commands):
        args = [a.replace("{TMP}", str(tmp)) for a in args]
        proc = subprocess.run([str(exe), "--db", db, *args], env=env, capture_output=True,
                              text=True)
        (out / "_stdout" / f"{i:02d}_{args[0]}.txt").write_text(
            proc.stdout + "\n--- stderr\n" + proc.stderr)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")


def dump(db: str, out: Path) -> list[str]:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1").fetchall()]
    dataset_tables = {"datasets", "systems", "inputs", "documents", "references", "summaries",
                      "measures", "scores", "judgments", "ingests", "schema_info", "indexes",
                      "retrievals", "annotators"}
    written = []
    for t in tables:
        if t in dataset_tables:
            continue
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main'"
            " ORDER BY column_index", [t]).fetchall()]
        keep = [c for c in cols if c not in DROP and not c.endswith("_at")
                and not (t == "analysis_runs" and c.startswith("owner"))]
        rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in keep)} FROM "{t}"'
                           ).fetchall()
        lines = sorted("\t".join(repr(v).replace(db, "<DB>") for v in row) for row in rows)
        (out / f"{t}.csv").write_text("\t".join(keep) + "\n" + "\n".join(lines) + "\n")
        written.append(f"{t}: {len(lines)} rows")
    con.close()
    return written


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="a warehouse holding SummEval")
    p.add_argument("--out", required=True, help="directory of the dump")
    p.add_argument("--dump-only", action="store_true", help="dump without running")
    p.add_argument("--registry", action="store_true",
                   help="instead of the SummEval set: every registered family on the repository's examples "
                        "(REGISTRY_SETUP, REGISTRY; an empty --db, run from the repository root)")
    p.add_argument("--with-examples", action="store_true",
                   help="also ingest the examples (run from the repository root) and run detection, judges and "
                        "categories (EXAMPLES, FAMILIES)")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if not a.dump_only:
        commands = (REGISTRY_SETUP + [c for _, c in REGISTRY] if a.registry
                    else COMMANDS + (EXAMPLES + FAMILIES if a.with_examples else []))
        run(a.db, out, commands)
    for line in dump(a.db, out):
        print(line)


if __name__ == "__main__":
    main()
