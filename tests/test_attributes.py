"""Attributes of inputs and cells (issue 26 item 1): `metaeval ingest attributes` (atomic,
idempotent, conflicts, unknown ids refused with file, line and field), the Store's
attribute_values / attribute_labels / attribute_mask, and parse_where / subset_label."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.errors import ConflictError, InputError, WarehouseError
from metaeval.ingest import attributes as ingest_attributes
from metaeval.ingest.table import add_scores
from metaeval.runs.engine.selection import parse_where, subset_label
from tests.conftest import digest, run_cli

SYSTEMS = ("A", "B", "C")
INPUTS = ("d1", "d2", "d3", "d4")


@pytest.fixture
def tiny(db):
    """3 systems x 4 inputs, one metric and one judgment."""
    rows = [{"system": s, "input": i, "m": float(k), "h": float(k % 5)}
            for k, (s, i) in enumerate((s, i) for s in SYSTEMS for i in INPUTS)]
    with Store(db) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
    return db


def _write(path, text):
    path.write_text(text)
    return path


INPUT_LEVEL = "input,attribute,value\nd1,split,validation\nd2,split,validation\nd3,split,test\nd4,split,test\n" \
              "d1,source,cnndm\nd2,source,xsum\nd3,source,cnndm\nd4,source,xsum\n"


def test_ingest_input_and_cell_level_then_labels_and_mask_by_hand(tiny, tmp_path):
    run_cli(tiny, "ingest", "attributes", _write(tmp_path / "a.csv", INPUT_LEVEL), "--dataset", "tiny")
    # a cell-level value overrides the input's: system B's summary of d3 is in the validation split
    cells = _write(tmp_path / "c.jsonl", json.dumps({"system": "B", "input": "d3", "attribute": "split",
                                                     "value": "validation"}) + "\n")
    out = run_cli(tiny, "ingest", "attributes", cells, "--dataset", "tiny").output
    assert "inserted 1" in out
    with Store(tiny, read_only=True) as wh:
        assert wh.attributes("tiny") == ["source", "split"]
        assert wh.attribute_values("tiny", "split") == ["test", "validation"]
        labels = wh.attribute_labels("tiny", "split", SYSTEMS, INPUTS)
        v, t = "validation", "test"
        expected = np.array([[v, v, t, t], [v, v, v, t], [v, v, t, t]], dtype=object)
        assert labels.dtype == object and (labels == expected).all()
        # a grid in another order, with an input that has no value (an input-level value is every row's)
        labels = wh.attribute_labels("tiny", "source", ["C", "A"], ["d4", "zz", "d1"])
        assert labels.tolist() == [["xsum", None, "cnndm"], ["xsum", None, "cnndm"]]
        mask = wh.attribute_mask("tiny", (("source", "cnndm"), ("split", "test")), SYSTEMS, INPUTS)
        assert mask.tolist() == [[False, False, True, False], [False, False, False, False],
                                 [False, False, True, False]]
        assert wh.attribute_mask("tiny", (), SYSTEMS, INPUTS).all()
        with pytest.raises(WarehouseError, match="no attribute 'spilt'; its attributes: source, split"):
            wh.attribute_values("tiny", "spilt")
        with pytest.raises(WarehouseError, match="never has the value 'tset'; its values: test, validation"):
            wh.attribute_mask("tiny", (("split", "tset"),), SYSTEMS, INPUTS)


def test_ingest_is_idempotent_and_conflicts_are_reported(tiny, tmp_path):
    path = _write(tmp_path / "a.tsv", INPUT_LEVEL.replace(",", "\t"))
    assert "inserted 8" in run_cli(tiny, "ingest", "attributes", path, "--dataset", "tiny").output
    before = digest(tiny)
    again = run_cli(tiny, "ingest", "attributes", path, "--dataset", "tiny").output
    assert "nothing changed" in again and digest(tiny) == before
    changed = _write(tmp_path / "b.csv", "input,attribute,value\nd1,split,validation\nd3,split,validation\n")
    result = run_cli(tiny, "ingest", "attributes", changed, "--dataset", "tiny", ok=False)
    assert result.exit_code != 0 and digest(tiny) == before
    assert f"{changed}:3: system=(every system) input=d3 attribute=split: warehouse has 'test', file has 'validation'" \
        in result.output and "--replace" in result.output
    out = run_cli(tiny, "ingest", "attributes", changed, "--dataset", "tiny", "--replace").output
    assert "replaced 1" in out
    with Store(tiny, read_only=True) as wh:
        assert wh.attribute_labels("tiny", "split", ["A"], INPUTS).tolist() == [["validation"] * 3 + ["test"]]
        ingests = wh.sql("SELECT format, rows, inserted, replaced FROM ingests WHERE format = 'attributes' "
                         "ORDER BY ingest_id")
    assert ingests.values.tolist() == [["attributes", 8, 8, 0], ["attributes", 2, 0, 1]]


@pytest.mark.parametrize("text, line, field, words", [
    ("input,attribute,value\nd1,split,test\nd1,split,validation\n", 3, "attribute", "more than once (lines 2, 3)"),
    ("input,attribute,value\nd1,split,\n", 2, "value", "got missing"),
    ("input,attribute,label\nd1,split,test\n", None, "label", "unknown column"),
    ("input,value\nd1,test\n", None, "attribute", "missing column"),
])
def test_malformed_files_are_refused_naming_file_line_and_field(tmp_path, text, line, field, words):
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as err:
        ingest_attributes.parse(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), line, field)
    assert words in str(err.value)


def test_unknown_inputs_and_systems_are_refused_naming_file_line_and_field(tiny, tmp_path):
    before = digest(tiny)
    for text, line, field, words in (
            ("input,attribute,value\nd1,split,test\nd9,split,test\n", 3, "input", "has no input 'd9'"),
            ("system,input,attribute,value\nA,d1,split,test\nQ,d2,split,test\n", 3, "system", "has no system 'Q'")):
        path = _write(tmp_path / "bad.csv", text)
        with Store(tiny) as wh, pytest.raises(InputError) as err:
            ingest_attributes.ingest(wh, "tiny", path)
        assert (err.value.file, err.value.line, err.value.field) == (str(path), line, field)
        assert words in str(err.value)
        result = run_cli(tiny, "ingest", "attributes", path, "--dataset", "tiny", ok=False)
        assert result.exit_code != 0 and words in result.output and "Traceback" not in result.output
        assert digest(tiny) == before


def test_a_typed_float_and_an_unknown_dataset_are_refused(tiny, tmp_path):
    path = _write(tmp_path / "f.jsonl", '{"input": "d1", "attribute": "fold", "value": 1.0}\n')
    with Store(tiny) as wh:
        with pytest.raises(InputError, match="field 'value'.*float"):
            ingest_attributes.ingest(wh, "tiny", path)
        ok = _write(tmp_path / "i.jsonl", '{"input": "d1", "attribute": "fold", "value": 1}\n')
        with pytest.raises(WarehouseError, match="unknown dataset 'nope'"):
            ingest_attributes.ingest(wh, "nope", ok)
        assert ingest_attributes.ingest(wh, "tiny", ok).inserted == 1
        assert wh.attribute_values("tiny", "fold") == ["1"]


def test_parquet_and_drop_dataset(tiny, tmp_path):
    path = tmp_path / "a.parquet"
    pd.DataFrame({"system": ["A", None], "input": ["d1", "d2"], "attribute": ["split"] * 2,
                  "value": ["test", "validation"]}).to_parquet(path)
    with Store(tiny) as wh:
        ingest_attributes.ingest(wh, "tiny", path)
        assert wh.attribute_labels("tiny", "split", SYSTEMS, ["d1", "d2"]).tolist() == [
            ["test", "validation"], [None, "validation"], [None, "validation"]]
        removal = wh.drop_dataset("tiny")
        assert removal.data["attributes"] == 2
        assert wh.sql("SELECT count(*) AS n FROM attributes")["n"][0] == 0


def test_parse_where_and_subset_label():
    assert parse_where(["split=test", "source=xsum", "split=test"]) == (("source", "xsum"), ("split", "test"))
    assert parse_where([" a = b=c "]) == (("a", "b=c"),)
    assert parse_where([("split", "test")]) == (("split", "test"),)
    assert parse_where([]) == ()
    assert subset_label([]) == ""
    assert subset_label(["split=test", "source=xsum"]) == "source=xsum & split=test"
    for bad in (["split"], ["=test"], ["split="], ["split=test", "split=validation"], ["split=*"]):
        with pytest.raises(WarehouseError):
            parse_where(bad)


def test_where_option_is_parsed_by_the_cli():
    import click
    from click.testing import CliRunner

    from metaeval.cli.families import click_option
    from metaeval.runs.engine.options import BY, WHERE

    @click.command()
    @click_option(WHERE)
    @click_option(BY)
    def show(where, by):
        click.echo(repr((where, by)))

    assert CliRunner().invoke(show, ["--where", "b=1", "--where", "a=2", "--by", "s"]).output.strip() == \
        "((('a', '2'), ('b', '1')), 's')"
    bad = CliRunner().invoke(show, ["--where", "oops"])
    assert bad.exit_code == 2 and "ATTR=VALUE" in bad.output
