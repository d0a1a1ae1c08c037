"""TEMPORARY: a stand-in for runs/families.py (the registry, built on another branch to
docs/CONTRACT) so that runs/system_tests.py imports and runs before the merge. Installed only when
the real module is missing; delete this file once runs/families.py is merged."""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, replace
from typing import Any, Callable


def install() -> None:
    if "metaeval.runs.families" in sys.modules or importlib.util.find_spec("metaeval.runs.families") is not None:
        return
    from metaeval.runs import parameters

    @dataclass(frozen=True)
    class Option:
        name: str
        default: Any = None
        help: str | None = None
        kind: str = "str"
        choices: tuple | str | None = None
        multiple: bool = False
        required: bool = False
        flag: str | None = None
        metavar: str | None = None
        check: Callable[[Any], None] | None = None

        def but(self, **changes) -> "Option":
            return replace(self, **changes)

    class Family:
        name = summary = ""
        tables: tuple = ()
        tests_table = None
        options: tuple = ()

    registered: dict[str, Family] = {}

    def register(cls):
        registered[cls.name] = cls()
        return cls

    module = types.ModuleType("metaeval.runs.families")
    vocabulary = "metaeval.analyses.stats.vocabulary:"
    module.__dict__.update(
        Option=Option, Family=Family, register=register, FAMILIES=registered,
        DATASET=Option("dataset", required=True), K=Option("k", default=1000, kind="resamples"),
        ALPHA=Option("alpha", default=0.05, kind="probability"),
        SEED=Option("seed", default=parameters.DEFAULT_SEED, kind="seed"),
        ALTERNATIVE=Option("alternative", default=parameters.DEFAULT_ALTERNATIVE, kind="choice",
                           choices=vocabulary + "ALTERNATIVES"),
        CORRECTION=Option("correction", default=parameters.DEFAULT_CORRECTION, kind="choice",
                          choices=vocabulary + "CORRECTIONS"),
        WHERE=Option("where", kind="where", multiple=True), FORCE=Option("force", default=False, kind="flag"))
    sys.modules["metaeval.runs.families"] = module
