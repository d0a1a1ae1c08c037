"""Hints of errors (metaeval.errors.Hint): runs/ names the Python call, the CLI renders flags."""

from __future__ import annotations

import pytest

from metaeval.cli.app import COMMANDS, FLAGS, argument_text, command_line, error_text, flag
from metaeval.errors import Argument, Hint, Message, WarehouseError


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


# --- issue 25: runs/ names parameters by their Python names; the CLI renders them as flags ------------
def test_a_parameter_is_its_python_name_and_its_flag():
    cases = [(Argument("k", 5), "k=5", "--k 5"),
             (Argument("system_inputs", "some"), "system_inputs='some'", "--system-inputs 'some'"),
             (Argument("metrics", ["r*"]), "metrics=['r*']", "--metric 'r*'"),
             (Argument("metrics", ["a", "b"]), "metrics=['a', 'b']", "--metric 'a' --metric 'b'"),
             (Argument("k_block"), "k_block", "--k-block"),
             (Argument("overwrite", True), "overwrite=True", "--overwrite"),
             (Argument("dataset", placeholder="NAME"), "dataset=NAME", "--dataset NAME"),
             (Argument("calibrate"), "calibrate", "--tie-calibration")]
    for argument, python, cli in cases:
        assert (str(argument), argument_text(argument)) == (python, cli)
    assert flag("human_tolerance") == "--human-tolerance" and FLAGS["tasks"] == "--task"


def test_a_message_reads_as_each_caller_writes():
    message = Message(Argument("sequential"), " and ", Argument("k_block", 3), " conflict; run `",
                      Hint("simulate_coverage", (("dataset", "d"),)), "`")
    error = WarehouseError(message)
    assert str(error) == error.message == "sequential and k_block=3 conflict; run `wh.simulate_coverage(dataset='d')`"
    assert error_text(error) == "--sequential and --k-block 3 conflict; run `metaeval simulate coverage --dataset d`"
    assert COMMANDS["simulate_coverage"] == "simulate coverage"
    # composed (a ConflictError's headline), the parts stay structured
    assert str(Message("a ", message)) == "a " + str(message) and ("x" + Message(Argument("k"))).parts == ("x", Argument("k"))
    positional = Hint("build_index", (("overwrite", True),), positional=("ix", "..."),
                      python="metaeval.runs.texts.index.build(wh, 'ix', ..., overwrite=True)")
    assert command_line(positional) == "metaeval index build ix ... --overwrite"
    assert str(positional) == "metaeval.runs.texts.index.build(wh, 'ix', ..., overwrite=True)"


def test_the_errors_of_runs_name_python_parameters_and_the_cli_flags():
    from metaeval.files import check_output_file
    from metaeval.runs.engine import parameters, selection

    with pytest.raises(WarehouseError) as caught:
        parameters.check_k(5, 0.05, "interval")
    assert str(caught.value).startswith("k=5 is too small for a percentile interval") and "so k=39 or more" in str(caught.value)
    assert error_text(caught.value).startswith("--k 5 is too small") and error_text(caught.value).endswith("so --k 39 or more")
    with pytest.raises(WarehouseError) as caught:
        selection.with_tie_threshold(["pearson"], 0.1, True)
    assert str(caught.value) == "give a tie threshold (epsilon) or calibrate, not both"
    assert error_text(caught.value) == "give a tie threshold (--epsilon) or --tie-calibration, not both"
    with pytest.raises(WarehouseError) as caught:
        check_output_file(__file__, warehouse=None, overwrite=False)
    assert str(caught.value) == f"out {__file__} already exists; pass overwrite=True to replace it"
    assert error_text(caught.value) == f"--out {__file__} already exists; pass --overwrite to replace it"


def test_an_error_naming_parameters_crosses_process_boundaries():
    """Workers (local processes, Dask) send their errors back pickled: the parts stay structured."""
    import pickle

    error = WarehouseError(Message(Argument("resample_annotators"), " needs ", Argument("system_inputs", "judged"),
                                   "; run `", Hint("ci", (("dataset", "d"),)), "`"))
    back = pickle.loads(pickle.dumps(error))
    assert str(back) == str(error) == "resample_annotators needs system_inputs='judged'; run `wh.ci(dataset='d')`"
    assert error_text(back) == "--resample-annotators needs --system-inputs 'judged'; run `metaeval ci --dataset d`"
    assert pickle.loads(pickle.dumps(Argument("k"))).value is Argument("k").value
