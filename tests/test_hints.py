"""Hints of errors (metaeval.errors.Hint): runs/ names the Python call, the CLI renders flags."""

from __future__ import annotations

from metaeval.cli.app import command_line, error_text
from metaeval.errors import Hint, WarehouseError


def test_a_hint_is_a_python_call_and_a_command_line():
    hint = Hint("compare", (("dataset", "d"), ("human", "h"), ("metrics", ["a b", "c"]), ("levels", ["system"]),
                            ("correction_group", "metric")), "/tmp/w.duckdb")
    error = WarehouseError("3 tests are missing; produce them with:", hint=hint)
    assert str(error) == ("3 tests are missing; produce them with:\n  wh.compare(dataset='d', human='h', "
                          "metrics=['a b', 'c'], levels=['system'], correction_group='metric')")
    assert error.message == "3 tests are missing; produce them with:"
    assert command_line(hint) == ("metaeval --db /tmp/w.duckdb compare --dataset d --human h --metric 'a b' "
                                  "--metric c --level system --correction-group metric")
    assert error_text(error) == f"{error.message}\n  {command_line(hint)}"
    assert error_text(WarehouseError("plain")) == str(WarehouseError("plain")) == "plain"
