"""Every example runs end to end in a short mode (its own arguments, made smaller)."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script, argv, expected", [
    ("optuna_quickstart", ["--trials", "22", "--dim", "8"], "RandomSampler: best"),
    ("optuna_mixed_space", ["--trials", "12"], "best loss"),
    ("skopt_loop", ["--n-calls", "16"], "msucb_minimize: best"),
    ("nevergrad_benchmark", ["--optimizers", "CobBO", "RandomSearch", "--functions", "sphere",
                             "--budget", "8", "--seeds", "1"], "CobBO beats RandomSearch"),
    ("goucb_sklearn_tuning", ["--budget", "3", "--folds", "2"], "cumulative regret"),
])
def test_example_runs(script, argv, expected, capsys):
    spec = importlib.util.spec_from_file_location(f"example_{script}", EXAMPLES / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(argv)
    assert expected in capsys.readouterr().out
