"""The warehouse's SQL: table definitions and views, applied in file-name order.

Files named ``NN_*.sql`` define the schema (idempotent: ``CREATE ... IF NOT EXISTS`` and
``CREATE OR REPLACE VIEW``); other ``*.sql`` files hold statements the Python layer runs
with bound parameters and reads with :func:`read`.
"""

from __future__ import annotations

import re
from importlib import resources

#: Bumped whenever a table changes shape; a warehouse of another version is refused, except
#: that `metaeval init` upgrades one of a version listed in MIGRATIONS.
SCHEMA_VERSION = 5

#: version -> the script (``schema/<name>.sql``) that brings it to the next version.
MIGRATIONS = {1: "migrate_1", 2: "migrate_2", 3: "migrate_3", 4: "migrate_4"}

#: The result tables and the views of their latest rows: the one registry. Every table an
#: analysis writes, with the ``latest_*`` view holding the latest row of each key
#: (``analysis_runs``: itself). :func:`metaeval.runs.engine.latest_rows` reads through it, and
#: the ``results`` and ``export`` commands offer exactly these tables; a new analysis family adds
#: its table here (docs/architecture.md).
RESULT_TABLES: dict[str, str] = {
    # correlate, ci, compare (runs/runner.py), evaluate
    "correlations": "latest_correlations",
    "confidence_intervals": "latest_confidence_intervals",
    "hypothesis_tests": "latest_hypothesis_tests",
    # accuracy, systems-agreement, winners, replicability (runs/ranking.py)
    "pairwise_accuracy": "latest_pairwise_accuracy",
    "soft_pairwise_accuracy": "latest_soft_pairwise_accuracy",
    "delta_bin_accuracy": "latest_delta_bin_accuracy",
    "input_significance": "latest_input_significance",
    "system_agreement": "latest_system_agreement",
    "winners": "latest_winners",
    "replicability": "latest_replicability",
    # agreement (runs/agreement.py)
    "score_range_agreement": "latest_score_range_agreement",
    "input_properties": "latest_input_properties",
    "property_agreement": "latest_property_agreement",
    # annotators (runs/annotators.py)
    "annotator_agreement": "latest_annotator_agreement",
    "human_ceiling": "latest_human_ceiling",
    # simulate, normality (runs/simulation.py)
    "ci_coverage": "latest_ci_coverage",
    "power": "latest_power",
    "normality": "latest_normality",
    # rank-tasks (runs/task_ranking.py)
    "task_rankings": "latest_task_rankings",
    # detection (runs/detection.py)
    "detection": "latest_detection",
    "detection_tests": "latest_detection_tests",
    # judges (runs/judges.py)
    "judge_statistics": "latest_judge_statistics",
    "judge_tests": "latest_judge_tests",
    "preference_rankings": "latest_preference_rankings",
    # categories (runs/categories.py)
    "error_categories": "latest_error_categories",
    # every run of every analysis
    "analysis_runs": "analysis_runs",
}


def latest_view(table: str) -> str:
    """The view of ``table``'s latest rows; a KeyError names the registered tables."""
    try:
        return RESULT_TABLES[table]
    except KeyError:
        raise KeyError(f"{table!r} is not a registered result table; one of {sorted(RESULT_TABLES)}") from None


_DDL = re.compile(r"^\d\d_.*\.sql$")


def read(name: str) -> str:
    """The text of ``schema/<name>.sql``."""
    return resources.files(__package__).joinpath(f"{name}.sql").read_text(encoding="utf-8")


_SECTIONS: dict[str, dict[str, str]] = {}


def statements(name: str) -> dict[str, str]:
    """The ``-- name: X`` sections of ``schema/<name>.sql``: section name -> statement (without
    its closing semicolon)."""
    if name not in _SECTIONS:
        parts = re.split(r"^-- name: (\w+)\s*$", read(name), flags=re.M)
        _SECTIONS[name] = {parts[i]: parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}
    return _SECTIONS[name]


def ddl_scripts() -> list[tuple[str, str]]:
    """``(file name, SQL)`` of every schema script, in the order they are applied."""
    files = sorted(f for f in resources.files(__package__).iterdir() if _DDL.match(f.name))
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]
