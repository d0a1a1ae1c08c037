"""The registry of analysis families (runs/engine/families.py and the family modules of its MODULES)."""

from __future__ import annotations

import pytest

from metaeval import schema
from metaeval.errors import WarehouseError
from metaeval.runs.engine import parameters
from metaeval.runs.engine.families import FAMILIES, Family, by_table, family, register
from metaeval.runs.engine.options import ALPHA, DATASET, K, SEED, Option

EXISTING = ("correlate", "ci", "compare", "accuracy", "systems-agreement", "winners", "replicability", "rank-tasks",
            "agreement", "annotators", "normality", "simulate-coverage", "simulate-power", "detection", "judges",
            "categories")


def test_every_existing_family_is_registered():
    assert set(EXISTING) <= set(FAMILIES)
    assert "evaluate" not in FAMILIES          # the orchestrator, not a family


def test_every_result_table_belongs_to_exactly_one_family():
    owners = {}
    for f in FAMILIES.values():
        for table in f.tables:
            owners.setdefault(table, []).append(f.name)
    assert {t: o for t, o in owners.items() if len(o) > 1} == {}
    assert set(owners) == set(schema.RESULT_TABLES) - {"analysis_runs"}
    assert set(by_table()) == set(owners)


def test_tests_tables_are_result_tables():
    for f in FAMILIES.values():
        assert f.tests_table is None or f.tests_table in schema.RESULT_TABLES, f.name
        assert f.summary and f.options, f.name


def test_a_family_storing_tests_with_verdicts_declares_its_tests_table():
    """The conclusion layer (and the report) find a family's stored tests through its
    ``tests_table``: every result table whose rows hold a corrected p-value and a verdict is its
    family's tests_table (winners reads compare's: hypothesis_tests)."""
    import duckdb

    con = duckdb.connect()
    for _, sql in schema.ddl_scripts():
        con.execute(sql)
    corrected = {"p_adjusted", "pvalue_adjusted", "pvalue_corrected"}
    for f in FAMILIES.values():
        for table in f.tables:
            columns = {c for (c,) in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ?",
                                                 [table]).fetchall()}
            if columns & corrected and "significant" in columns:
                assert f.tests_table == table, (f.name, table)
    assert FAMILIES["winners"].tests_table == FAMILIES["compare"].tests_table == "hypothesis_tests"


def test_option_names_are_unique_within_a_family():
    for f in FAMILIES.values():
        names = [o.name for o in f.options]
        assert len(names) == len(set(names)), f.name
        flags = [o.flag for o in f.options]
        assert len(flags) == len(set(flags)), f.name


def test_the_default_number_of_resamples_is_defined_once():
    assert K.default == parameters.DEFAULT_K == 1000
    assert SEED.default == parameters.DEFAULT_SEED and ALPHA.default == parameters.DEFAULT_ALPHA
    from metaeval.runs.studies import plan

    for f in FAMILIES.values():
        if "k" in [o.name for o in f.options]:
            # plan's --k is the permutations inside each of --trials simulated studies (issue 45: 200 by default)
            expected = plan.PERMUTATIONS if f.name == plan.COMMAND else parameters.DEFAULT_K
            assert f.option("k").default == expected, f.name


def test_k_is_checked_once_naming_the_parameter():
    from metaeval.analyses.stats.validation import K_MAX

    for bad in (0, -1, K_MAX + 1, 2.5, True):
        with pytest.raises(WarehouseError, match=r"^k="):
            K.value(bad)
    assert K.value(None) == 1000 and K.value(7) == 7


def test_judges_ridge_default_is_the_analysis_default():
    from metaeval.analyses import preferences

    assert FAMILIES["judges"].option("ridge").default == preferences.DEFAULT_RIDGE


def test_parameters_fill_defaults_check_choices_and_refuse_unknown_names():
    f = FAMILIES["compare"]
    params = f.parameters("summeval", "expert.relevance", metrics=["rouge-*"])
    assert params["k"] == 1000 and params["correction"] == "holm" and params["metrics"] == ("rouge-*",)
    assert params["levels"] == () and params["force"] is False
    with pytest.raises(WarehouseError, match="unknown correction='nope'"):
        f.parameters("d", "h", correction="nope")
    with pytest.raises(WarehouseError, match="kk=5 is not a parameter of compare"):
        f.parameters("d", "h", kk=5)
    with pytest.raises(WarehouseError, match="dataset=NAME|dataset"):
        f.parameters(human="h")


def test_register_refuses_a_taken_name_or_table_and_a_bad_name():
    class Again(Family):
        name = "compare"
        tables = ()

    class Table(Family):
        name = "probe-table"
        tables = ("correlations",)

    class Bad(Family):
        name = "Bad_Name"

    for cls in (Again, Table, Bad):
        with pytest.raises(ValueError):
            register(cls)
    assert "probe-table" not in FAMILIES


def test_family_by_name_or_python_name():
    assert family("rank_tasks") is FAMILIES["rank-tasks"]
    assert FAMILIES["simulate-coverage"].python_name == "simulate_coverage"
    with pytest.raises(WarehouseError, match="unknown analysis family 'nosuch'"):
        family("nosuch")


def test_option_flags_and_kinds():
    assert Option("system_inputs").flag == "--system-inputs"
    assert DATASET.required and DATASET.flag == "--dataset"
    with pytest.raises(ValueError):
        Option("x", kind="nope")
    assert Option("c", kind="choice", choices="metaeval.analyses.stats.vocabulary:CORRECTIONS").choice_values() \
        == ("bonferroni", "holm", "bh", "none")


def test_a_family_without_a_command_gets_a_generated_one(monkeypatch, tmp_path):
    """options -> compute -> present: the flags, defaults, choices and checks come from the declaration."""
    import pandas as pd
    from click.testing import CliRunner

    from metaeval.cli.families import command_of
    from metaeval.runs.engine import families
    from metaeval.runs.engine import options as shared

    class Probe(Family):
        """Probe family.

        A second paragraph of help."""

        name = "probe-family"
        summary = "Probe family."
        options = (DATASET.but(required=False, default="d"), K, Option("measures", multiple=True, flag="--measure"),
                   Option("mode", default="a", kind="choice", choices=("a", "b")), shared.FORCE)

        def compute(self, wh, **params):
            return pd.DataFrame([{"dataset": params["dataset"], "k": params["k"], "measures": ",".join(params["measures"]),
                                  "mode": params["mode"], "force": params["force"]}])

    monkeypatch.setitem(families._REGISTERED, "probe-family", Probe())
    command = command_of(FAMILIES["probe-family"])
    from metaeval.cli.app import Context

    db = str(tmp_path / "w.duckdb")
    from metaeval.core import Store

    Store.create(db).close()
    out = CliRunner().invoke(command, ["--k", "7", "--measure", "x", "--measure", "y", "--format", "csv"],
                             obj=Context(db))
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0] == "dataset,k,measures,mode,force", out.output
    assert out.output.splitlines()[1].startswith("d,7,") and ",a," in out.output, out.output
    assert CliRunner().invoke(command, ["--k", "0"], obj=Context(db)).exit_code == 2
    assert CliRunner().invoke(command, ["--mode", "c"], obj=Context(db)).exit_code == 2
    text = CliRunner().invoke(command, ["--help"], terminal_width=200).output
    assert "Probe family." in text and "A second paragraph" in text and "[default: 1000;" in text


def test_the_cli_offers_each_family_a_command():
    from metaeval.cli.app import main

    commands = set(main.commands) | {f"{g}-{s}" for g, c in main.commands.items() if hasattr(c, "commands")
                                     for s in c.commands}
    assert set(FAMILIES) <= commands


def test_a_registered_family_is_a_warehouse_method(monkeypatch, tmp_path):
    from metaeval.runs import Warehouse
    from metaeval.runs.engine import families

    class Probe(Family):
        name = "probe-method"
        summary = "Probe."
        options = (DATASET, K)

        def compute(self, wh, **params):
            return (type(wh).__name__, params)

    monkeypatch.setitem(families._REGISTERED, "probe-method", Probe())
    with Warehouse.create(tmp_path / "w.duckdb") as wh:
        assert wh.probe_method("d", k=5) == ("Warehouse", {"dataset": "d", "k": 5})
        assert wh.probe_method(dataset="d")[1]["k"] == 1000
        with pytest.raises(WarehouseError, match="^k=0 must be"):
            wh.probe_method("d", k=0)
        assert not hasattr(wh, "nosuch_family") and not hasattr(wh, "probe-method")
        assert wh.judges.__func__ is Warehouse.judges        # a hand-written method stays


def test_the_declared_computes_give_the_methods_rows(warehouse_copy):
    """compute of the declared families calls today's functions: the same stored rows."""
    from metaeval.runs import Warehouse

    scope = dict(metrics=["rouge-1*"], levels=["system"], coefficients=["kendall"])
    with Warehouse(warehouse_copy) as wh:
        by_family = FAMILIES["correlate"].run(wh, "summeval", "expert.relevance", **scope)
        assert by_family.equals(wh.correlate("summeval", "expert.relevance", **scope))
        tied = FAMILIES["correlate"].run(wh, "summeval", "expert.relevance", **{**scope, "coefficients": ["acc-23"]},
                                         epsilon=0.01)
        assert set(tied["coefficient"]) == {"acc-23[eps=0.01]"}
        ci = FAMILIES["ci"].run(wh, "summeval", "expert.relevance", k=99, method="boot-inputs", **scope)
        assert ci.equals(wh.ci("summeval", "expert.relevance", k=99, method="boot-inputs", **scope))
        tests = FAMILIES["compare"].run(wh, "summeval", "expert.relevance", k=99, method="perm-inputs", **scope)
        assert tests.equals(wh.compare("summeval", "expert.relevance", k=99, method="perm-inputs", **scope))
        assert len(tests) and set(tests["correction"]) == {"holm"}


def test_declared_flags_agree_with_the_cli_flag_of_each_parameter():
    """An error names a parameter by its Python name, rendered as cli/messages.py's flag(name,
    command): of a family's command, every declared option is its declared flag (``ci``'s method
    ``--ci-method``), and FLAGS, used where the command is not known, agrees wherever it names one
    but for the options a family spells its own way."""
    from metaeval.cli.messages import FLAGS, flag

    own = {("ci", "method"), ("simulate_coverage", "methods")}
    for f in FAMILIES.values():
        for o in f.options:
            assert o.flag == flag(o.name, f.python_name), (f.name, o.name)
            if o.name in FLAGS and (f.python_name, o.name) not in own:
                assert o.flag == flag(o.name), (f.name, o.name)


def test_migrated_commands_read_their_options_from_the_registry():
    """Each family command's options are exactly its declared ones (same flags, defaults, help),
    plus the command line's own (--format, --layout, --scheduler, --db, ...); ``aggregate``
    carries ``--human-aggregate`` (HUMAN_AGGREGATE, the human's side of the one option)."""
    import click

    from metaeval.cli.app import main
    from metaeval.runs.engine.options import HUMAN_AGGREGATE

    cli_only = {"fmt", "layout", "scheduler", "db", "wide", "figure", "overwrite"}
    for f in FAMILIES.values():
        group, _, sub = f.name.partition("-") if f.name.startswith(("simulate-", "plot-")) else (f.name, "", "")
        command = main.commands[group].commands[sub] if sub else main.commands[group]
        params = {p.name: p for p in command.params if isinstance(p, click.Option) and p.name not in cli_only}
        declared = [o for o in f.options for o in ((o, *o.companions) if o.name == "aggregate" else (o,))
                    if o.name not in cli_only]
        assert all(c.name == HUMAN_AGGREGATE.name for o in f.options if o.name == "aggregate" for c in o.companions)
        assert list(params) == [o.name for o in declared], f.name
        for o in declared:
            p = params[o.name]
            assert p.opts[0] == o.flag and p.help == o.help and p.multiple == o.multiple, (f.name, o.name)
            if o.default not in (None, ()) and o.kind != "flag":
                assert p.default == o.default, (f.name, o.name)


def test_one_subset_type_whatever_the_shape_it_is_given_in():
    """--where, a list of ATTR=VALUE, pairs, a mapping, one string: one Subset, equal to (and
    stored as) the canonical pairs, whose label is the subset column."""
    import json
    import pickle

    from metaeval.runs.engine.selection import Subset, parse_where, subset_label

    canonical = (("source", "xsum"), ("split", "test"))
    shapes = (["split=test", "source=xsum"], [("split", "test"), ("source", "xsum")], {"split": "test", "source": "xsum"},
              Subset(["source=xsum", "split=test"]))
    for shape in shapes:
        s = parse_where(shape)
        assert type(s) is Subset and s == canonical and hash(s) == hash(canonical)
        assert s.label == subset_label(shape) == "source=xsum & split=test"
        assert json.dumps(s) == json.dumps(canonical) and pickle.loads(pickle.dumps(s)) == s
    assert Subset("split=test") == (("split", "test"),) and Subset().label == "" and Subset() == ()
    where = FAMILIES["correlate"].option("where")
    assert where.value({"split": "test"}) == (("split", "test"),) and type(where.value(None)) is Subset


# --- a family's parameters are one typed object, carried whole ------------------------------------
def test_parameters_are_one_read_only_checked_object():
    from metaeval.runs.engine.families import Parameters

    p = family("compare").parameters("summeval", "expert.relevance", method="perm-systems", k=200)
    assert isinstance(p, Parameters) and p.family == "compare"
    assert p.k == 200 == p["k"] and p.method == "perm-systems" and p.alpha == parameters.DEFAULT_ALPHA
    assert p.metrics == () and p.sequential is False and p.k_max is None      # the declared defaults
    assert dict(**p)["dataset"] == "summeval"                                # a Mapping: **p works
    with pytest.raises(AttributeError, match="read-only"):
        p.k = 5
    assert p.but(k=50).k == 50 and p.k == 200
    with pytest.raises(WarehouseError, match="k=0 must be"):
        p.but(k=0)                                       # checked again, as the option checks it
    with pytest.raises(WarehouseError, match="unknown method"):
        p.but(method="perm-nope")
    assert family("compare").parameters(p) is p          # given whole, passed on as it is
    import pickle

    assert pickle.loads(pickle.dumps(p)) == p


def test_compare_carries_its_parameters_whole_from_the_command_line_to_the_analysis(db, monkeypatch):
    """`metaeval compare` builds the family's Parameters once; api.compare hands that very
    object to comparisons.analysis_of (no parameter restated on the way)."""
    import numpy as np
    import pandas as pd
    from click.testing import CliRunner

    from metaeval.cli import main
    from metaeval.ingest.table import add_scores
    from metaeval.runs import Warehouse
    from metaeval.runs.metrics import comparisons

    rng = np.random.default_rng(0)
    rows = [{"system": f"S{i}", "input": f"d{j}", "h": rng.normal(), "m1": rng.normal(), "m2": rng.normal()}
            for i in range(5) for j in range(4)]
    with Warehouse(db) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
    seen = []
    real = comparisons.analysis_of
    monkeypatch.setattr(comparisons, "analysis_of", lambda scope, p: seen.append(p) or real(scope, p))
    result = CliRunner().invoke(main, ["--db", str(db), "compare", "--dataset", "tiny", "--human", "h",
                                       "--level", "system", "--coefficient", "pearson", "--k", "60",
                                       "--seed", "7", "--format", "json"])
    assert result.exit_code == 0, result.output
    [p] = seen
    assert (p.family, p.k, p.seed, p.levels, p.coefficients) == ("compare", 60, 7, ("system",), ("pearson",))
    assert "progress" in p.run                           # what is no parameter of the results rides along


def test_k_max_and_risk_are_refused_without_sequential(db):
    import pandas as pd

    from metaeval.ingest.table import add_scores
    from metaeval.runs import Warehouse

    rows = [{"system": f"S{i}", "input": f"d{j}", "h": i + j, "m1": i * j, "m2": i - j} for i in range(4)
            for j in range(3)]
    with Warehouse(db) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
        with pytest.raises(WarehouseError, match="k_max.*risk.*sequential"):
            wh.compare("tiny", "h", k_max=500)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0   # nothing written


def test_an_automatic_measure_given_as_human_names_measure_correlation(db):
    import pandas as pd

    from metaeval.ingest.table import add_scores
    from metaeval.runs import Warehouse

    rows = [{"system": f"S{i}", "input": f"d{j}", "h": i + j, "m1": i * j, "m2": i - j} for i in range(4)
            for j in range(3)]
    with Warehouse(db) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
        with pytest.raises(WarehouseError, match=r"'m1' is stored as an automatic metric.*drop.*metaeval "
                                                 r"measure-correlation --dataset tiny --measure m1 --measure OTHER"):
            wh.correlate("tiny", "m1")


def _genre_join(where, genres):
    """A probe subset condition: ``genre=`` each genre given, joined into ``where``."""
    return (*where, *(f"genre={g}" for g in genres))


def test_a_shared_option_says_what_it_is_and_run_applies_it(monkeypatch, tmp_path):
    """Issue 44 item 4: an Option's role (key, subset, setting), the option it joins and how,
    its companions and its command-line followers are declared once; Family.parameters and
    cli/families.py apply them from the declaration, never by the option's name: a new subset
    condition declared on a probe family reaches its where from Python and from the command line."""
    import pandas as pd
    from click.testing import CliRunner

    from metaeval.cli.app import Context
    from metaeval.cli.families import command_of
    from metaeval.core import Store
    from metaeval.runs.engine import families
    from metaeval.runs.engine import options as shared

    assert shared.JOBS.role == shared.FORCE.role == "setting"
    assert (shared.SYSTEM_TYPE.role, shared.SYSTEM_TYPE.into) == ("subset", "where")
    assert shared.HUMAN_AGGREGATE in shared.AGGREGATE.companions
    assert all(o.role in shared.ROLES for f in FAMILIES.values() for o in f.options)
    genre = Option("genres", multiple=True, flag="--genre", role="subset", into="where",
                   fold="tests.test_families:_genre_join")

    class Probe(Family):
        name = "probe-subset"
        summary = "Probe subset."
        options = (DATASET.but(required=False, default="d"), Option("where", multiple=True), genre,
                   shared.AGGREGATE, shared.JOBS)

        def compute(self, wh, **params):
            return pd.DataFrame([{"where": ";".join(params["where"]), "aggregate": params["aggregate"],
                                  "jobs": params["jobs"], "has_genres": "genres" in params}])

    monkeypatch.setitem(families._REGISTERED, "probe-subset", Probe())
    f = FAMILIES["probe-subset"]
    p = f.parameters(where=["split=test"], genres=["news"], human_aggregate="median")
    assert p["where"] == ("split=test", "genre=news") and "genres" not in p
    assert p["aggregate"] == parameters.aggregate_value("mean", "median")
    db = str(tmp_path / "w.duckdb")
    Store.create(db).close()
    out = CliRunner().invoke(command_of(f), ["--where", "split=test", "--genre", "news", "--human-aggregate", "median",
                                             "--format", "csv"], obj=Context(db))
    assert out.exit_code == 0, out.output
    row = pd.read_csv(__import__("io").StringIO(out.output)).iloc[0]
    assert row["where"] == "split=test;genre=news" and row["aggregate"] == p["aggregate"] and not row["has_genres"]
    assert "--scheduler" in CliRunner().invoke(command_of(f), ["--help"]).output


def test_option_value_checks_bounds_as_the_command_line_does():
    """Option.value refuses an int or float outside minimum/maximum (open: the bounds excluded) and a
    float that is not finite, naming Argument(name, value) in the words of the click type the
    command line builds from the same declaration (cli/families._type)."""
    import math

    import click

    from metaeval.cli.families import _type
    from metaeval.errors import Argument

    cases = [(Option("jobs", kind="int", minimum=1), [0, -3], [1, 7]),
             (Option("share", kind="float", minimum=0.0, maximum=1.0, open=True), [0.0, 1.0, 1.5, math.nan, math.inf],
              [0.5, 1e-9]),
             (Option("ridge", kind="float", minimum=0), [-0.1, math.nan], [0, 0.0, 3.5]),
             (Option("rating", kind="float"), [math.inf, -math.inf], [-1e9, 0.0])]
    for option, refused, accepted in cases:
        for v in accepted:
            assert option.value(v) == v
        for v in refused:
            with pytest.raises(WarehouseError) as python:
                option.value(v)
            arguments = [p for p in python.value.args[0].parts if isinstance(p, Argument)]
            assert arguments[0].name == option.name
            assert arguments[0].value is v
            with pytest.raises(click.BadParameter) as cli:
                _type(option).convert(repr(v) if isinstance(v, float) else str(v), None, None)
            said = str(python.value).removeprefix(str(arguments[0]))
            given = repr(v) if isinstance(v, float) else str(v)
            cli_said = cli.value.message.removeprefix(repr(given)).removeprefix(given)   # 'nan' / inf
            assert cli_said.rstrip(".") == said, (option, v)
    with pytest.raises(WarehouseError, match="is not an integer"):
        Option("n", kind="int", minimum=1).value(2.5)
    assert FAMILIES["correlate"].option("jobs").minimum == 1      # a registered family's call refuses it
    with pytest.raises(WarehouseError, match=r"^jobs=0 is not in the range x>=1$"):
        FAMILIES["correlate"].parameters(dataset="d", human="h", jobs=0)
