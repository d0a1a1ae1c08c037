"""Every registered family reached the same way from the command line and from Python (issue 44
item 1): the same rows and the same refusals.

The command set is ``bench/engine_identity.py``'s REGISTRY (every family at least once on the
demo data, ``examples/`` and ``docs/examples/``). For each command, the command line runs first;
the same call from Python (``wh.<family>(**the parameters click parsed)``) must then compute
nothing (no new run: its defaults and checks are the command line's, so the setting is the same)
and return the very rows the command printed (their result ids). The refusals: an unknown
keyword, ``seed=-1`` and a choice not offered are the same WarehouseError from ``wh.<family>``
and from ``FAMILIES[name].run``, and the command line prints that error's text; nothing is
written on a refusal.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os

import pytest

from metaeval.cli import main
from metaeval.cli.app import error_text
from metaeval.errors import WarehouseError
from metaeval.runs import Warehouse
from metaeval.runs.engine.families import FAMILIES
from tests.conftest import ROOT, run_cli


def _bench():
    spec = importlib.util.spec_from_file_location("engine_identity", ROOT / "bench" / "engine_identity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def _args(args, tmp) -> list[str]:
    """A command line of the set with its paths under the repository (or ``tmp``)."""
    out = []
    for a in args:
        a = a.replace("{TMP}", str(tmp))
        out.append(str(ROOT / a) if a.startswith(("examples/", "docs/examples/")) else a)
    return out


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    """The REGISTRY_SETUP warehouse: its path and the tmp folder of its inputs."""
    tmp = tmp_path_factory.mktemp("walk")
    db = tmp / "walk.duckdb"
    BENCH.texts_human(tmp / "texts-human.csv")
    for args in BENCH.REGISTRY_SETUP:
        run_cli(db, *_args(args, tmp))
    return db, tmp


def _command(args):
    """The click command of a command line (a group's subcommand: ``simulate coverage``) and its
    arguments after the command's name."""
    import click

    ctx = click.Context(main)
    command, rest = main.get_command(ctx, args[0]), args[1:]
    while isinstance(command, click.Group):
        command, rest = command.get_command(ctx, rest[0]), rest[1:]
    return command, rest


def _python_keywords(family, args) -> dict:
    """The family's parameters as click parses ``args``: the keywords of the same call from Python."""
    command, rest = _command(args)
    ctx = command.make_context(family.name, list(rest), resilient_parsing=False)
    names = {o.name for o in family.options} | {"human_aggregate"}
    return {k: v for k, v in ctx.params.items() if k in names}


def _result_ids(value) -> set:
    """The result ids of a family's rows (a DataFrame or {table: DataFrame})."""
    frames = value.values() if isinstance(value, dict) else [value]
    return {int(r) for f in frames if f is not None and "result_id" in getattr(f, "columns", ())
            for r in f["result_id"]}


def _printed_ids(output: str) -> set:
    """The result ids in a command's json output (records, or {table: records})."""
    try:
        data = json.loads(output[output.index("["):] if output.lstrip()[:1] not in "[{" else output)
    except (ValueError, json.JSONDecodeError):
        return set()
    blocks = data.values() if isinstance(data, dict) else [data]
    return {int(r["result_id"]) for b in blocks if isinstance(b, list) for r in b
            if isinstance(r, dict) and r.get("result_id") is not None}


def _runs(db) -> int:
    with Warehouse(db, read_only=True) as wh:
        return len(wh.sql("SELECT run_id FROM analysis_runs"))


def test_every_family_is_in_the_set():
    assert {name for name, _ in BENCH.REGISTRY} == set(FAMILIES)


def test_the_command_line_and_python_give_the_same_rows(walked):
    db, tmp = walked
    for name, args in BENCH.REGISTRY:
        family = FAMILIES[name]
        args = _args(args, tmp)
        json_ok = any(p.name == "fmt" for p in _command(args)[0].params)
        printed = run_cli(db, *args, *(["--format", "json"] if json_ok else [])).output
        keywords = _python_keywords(family, args)
        before = _runs(db)
        with Warehouse(db) as wh:
            rows = getattr(wh, family.python_name)(**keywords)
        assert _runs(db) == before, f"{name}: the same call from Python computed again ({keywords})"
        shown = _printed_ids(printed)
        if shown and _result_ids(rows):
            assert shown <= _result_ids(rows), name


def _without(args, flag) -> list[str]:
    """``args`` without ``flag`` and its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == flag:
            skip = True
        else:
            out.append(a)
    return out


def _choice(family):
    """The first single choice option the family declares (not aggregate: the command line
    offers its metric side only)."""
    return next((o for o in family.options if o.kind == "choice" and o.name != "aggregate"), None)


@pytest.mark.parametrize("name", sorted({n for n, _ in BENCH.REGISTRY}))
def test_the_command_line_and_python_refuse_alike(walked, name):
    db, tmp = walked
    family = FAMILIES[name]
    args = _args(next(a for n, a in BENCH.REGISTRY if n == name), tmp)
    keywords = _python_keywords(family, args)
    before = _runs(db)
    with Warehouse(db) as wh:
        method = getattr(wh, family.python_name)
        refused = []
        with pytest.raises(WarehouseError, match=f"kk=5 is not a parameter of {name}") as unknown:
            method(**keywords, kk=5)
        with pytest.raises(WarehouseError) as again:
            family.run(wh, **keywords, kk=5)
        assert str(again.value) == str(unknown.value)
        if any(o.name == "seed" for o in family.options):
            with pytest.raises(WarehouseError, match="seed=-1") as seed:
                method(**{**keywords, "seed": -1})
            refused.append(("--seed", "-1", seed.value))
        choice = _choice(family)
        if choice is not None:
            value = "-1" if choice.multiple else "bogus"   # not a choice of any family
            given = (value,) if choice.multiple else value
            with pytest.raises(WarehouseError, match="unknown ") as bad:
                method(**{**keywords, choice.name: given})
            refused.append((choice.flag, value, bad.value))
    for flag, value, exc in refused:
        result = run_cli(db, *_without(args, flag), flag, value, ok=False)
        assert result.exit_code != 0 and error_text(exc) in result.output, (name, flag, result.output)
    assert _runs(db) == before


def test_the_methods_have_the_families_signatures():
    for family in FAMILIES.values():
        method = getattr(Warehouse, family.python_name)
        parameters = inspect.signature(method).parameters
        assert [p for p in parameters if p not in ("self", "human_aggregate", *family.run_keywords)] == \
            [*family.positional_names(), *(o.name for o in family.options if o.name not in family.positional_names())]
        for option in family.options:
            default = parameters[option.name].default
            if option.required:
                assert default is inspect.Parameter.empty
            else:
                assert default == (tuple(option.default or ()) if option.multiple else option.default)
        assert family.summary in method.__doc__
    evaluate = inspect.signature(Warehouse.evaluate).parameters
    assert {"metrics", "levels", "coefficients", "k", "seed", "where", "aggregate"} <= set(evaluate)
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in evaluate.values())


def test_no_module_registers_a_family_unlisted():
    """FAMILIES reads runs/engine/families.py MODULES, not the modules' text: a family module not listed
    there would be missed; this finds it."""
    import re

    from metaeval.runs.engine import families

    marker = re.compile(r"^@(families\.)?register\b", re.M)
    runs = ROOT / "runs"
    found = {".".join(f.relative_to(runs).with_suffix("").parts) for f in runs.rglob("*.py")
             if f.name != "families.py" and marker.search(f.read_text("utf-8"))}
    assert found == set(families.MODULES)
