"""Issue 44.1: the public functions of ``metaeval.analyses.stats`` default to what the command line does.

The CLI's defaults are read from the registry (``metaeval.runs.engine.families``), not restated here: a
change of a command's default shows up as a failure of this walk until the Python default follows.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import metaeval.analyses.stats as stats
from metaeval.analyses.stats import soft_pairwise
from metaeval.runs.engine.families import FAMILIES
from metaeval.runs.engine.options import ALTERNATIVE, SEED


def _option(family: str, name: str):
    return next(o for o in FAMILIES[family].options if o.name == name)


def _cli_seed(function) -> int:
    """The seed default of the command that runs ``function``: mt-metrics-eval's soft pairwise
    accuracy is ``accuracy --soft`` (its own seed default, the anchor's draw); every other
    resampling function is the shared ``--seed``."""
    if function.__module__ == soft_pairwise.__name__:
        return _option("accuracy", "seed").default
    return SEED.default


def _public_callables():
    """(name, callable) of ``stats.__all__`` and of the public functions of every module of the
    package (e.g. ``hypothesis.system_scores_permutation_test``, ``partial.partial_permutation_test``)."""
    seen = {name: getattr(stats, name) for name in stats.__all__}
    for info in pkgutil.iter_modules(stats.__path__):
        module = importlib.import_module(f"{stats.__name__}.{info.name}")
        for name, value in vars(module).items():
            if not name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__:
                seen.setdefault(f"{info.name}.{name}", value)
    return [(n, f) for n, f in seen.items() if callable(f)]


def test_the_registry_defaults_are_the_commands_defaults():
    assert _option("compare", "alternative").default == ALTERNATIVE.default
    assert _option("ci", "seed").default == _option("compare", "seed").default == SEED.default


def test_every_alternative_and_seed_default_is_the_command_lines():
    checked = {"alternative": [], "seed": []}
    for name, function in _public_callables():
        for parameter in inspect.signature(function).parameters.values():
            if parameter.default is inspect.Parameter.empty:   # required (an internal helper's): no default
                continue
            if parameter.name == "alternative":
                assert parameter.default == ALTERNATIVE.default, (name, parameter.default)
                checked["alternative"].append(name)
            elif parameter.name == "seed":
                assert parameter.default == _cli_seed(function), (name, parameter.default)
                checked["seed"].append(name)
    # the walk is not vacuous: the functions the guides call are among those checked
    assert {"permutation_test", "paired_bootstrap_test", "williams_test"} <= set(checked["alternative"])
    assert {"permutation_test", "paired_bootstrap_test", "bootstrap_ci", "soft_pairwise_accuracy"} <= set(
        checked["seed"])
    assert {"partial.partial_permutation_test", "summed.paired_bootstrap_test", "macro.macro_bootstrap_ci",
            "hypothesis.system_scores_permutation_test"} <= set(checked["seed"])


@pytest.mark.parametrize("test", [stats.permutation_test, stats.paired_bootstrap_test])
def test_a_call_with_the_defaults_is_the_call_with_the_command_lines_options(test):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(6, 5))
    X, Y = Z + rng.normal(size=Z.shape), Z + 2 * rng.normal(size=Z.shape)
    default = test(X, Y, Z, "system", k=50)
    explicit = test(X, Y, Z, "system", k=50, alternative=ALTERNATIVE.default, seed=SEED.default)
    np.testing.assert_array_equal(default.samples, explicit.samples)
    assert default.pvalue == explicit.pvalue
    assert default.conventions["alternative"] == "two-sided" and default.conventions["seed"] == SEED.default
