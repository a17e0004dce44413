"""Auto through Ray Tune: a feature-weighted k-nearest-neighbours classifier, 32 hyperparameters.

The model is scikit-learn's ``KNeighborsClassifier`` on the standardized features of its
bundled breast-cancer data (569 tumours, 30 features, nothing downloaded), each feature
multiplied by a weight in [0, 1] before distances are taken (0 drops the feature). The
hyperparameters are the 30 weights, the number of neighbours (1-30) and the vote
(``uniform`` or ``distance``); a trial's score is the 5-fold cross-validated accuracy.
Ray Tune runs the trials, two at a time on a local two-CPU Ray, with
``OptunaSearch(sampler=AutoSampler(...))`` choosing each configuration::

    pip install -e ".[ray]"
    OMP_NUM_THREADS=1 python examples/ray_tune.py               # 60 trials
    OMP_NUM_THREADS=1 python examples/ray_tune.py --trials 100

While it runs, Tune's status table (trial, state, neighbours, vote, accuracy) is printed
every 10 s; hdbo prints nothing, and Optuna's log is set to warnings. At the end it prints::

    AutoSampler through Ray Tune: best accuracy 0.9807 at trial 59 of 60 (2 at a time)
    every feature weighted 1, 5 neighbours, uniform vote: accuracy 0.9649
    best hyperparameters:
      n_neighbors                      10
      weights                          'distance'
      w_mean_radius                    0.07795017068213651
      ...

one line per hyperparameter of the best trial, in full, so that they reproduce its accuracy
(trials are numbered from 0 in the order Tune started them). Four runs of the default gave
a best accuracy of 0.9754 or 0.9807: with two trials at a time the order in which they
finish, and so the proposals, vary from run to run. The default, 60 trials, takes 20-26 s
of wall time on two CPU cores, Ray's start included; a trial's cross-validation takes
about 25 ms, the rest is Tune's scheduling and Auto's proposals.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import optuna
import ray
from ray import tune
from ray.tune.search.optuna import OptunaSearch
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from hdbo_adapters.optuna import AutoSampler

DATA = load_breast_cancer()
WEIGHTS = ["w_" + name.replace(" ", "_") for name in DATA.feature_names]


def param_space() -> dict[str, object]:
    """Tune's search space: a weight per feature, the neighbours and the vote."""
    space: dict[str, object] = {name: tune.uniform(0.0, 1.0) for name in WEIGHTS}
    space["n_neighbors"] = tune.randint(1, 31)  # 1-30
    space["weights"] = tune.choice(["uniform", "distance"])
    return space


def cv_accuracy(config: dict[str, object]) -> float:
    """5-fold cross-validated accuracy of the classifier ``config`` describes."""
    w = np.array([config[name] for name in WEIGHTS], dtype=float)
    model = make_pipeline(StandardScaler(), FunctionTransformer(lambda X: X * w),
                          KNeighborsClassifier(n_neighbors=int(config["n_neighbors"]),
                                               weights=str(config["weights"])))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    return float(cross_val_score(model, DATA.data, DATA.target, cv=folds).mean())


def trainable(config: dict[str, object]) -> None:
    tune.report({"accuracy": cv_accuracy(config)})


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=60, help="trials [60]")
    ap.add_argument("--concurrent", type=int, default=2, help="trials at a time [2]")
    ap.add_argument("--seed", type=int, default=0, help="AutoSampler's seed [0]")
    ap.add_argument("--runs", default=None,
                    help="folder for Tune's trial records [Tune's default, ~/ray_results]")
    args = ap.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Tune's classic reporter, which shows the columns it is given (not all 32 parameters)
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    started = not ray.is_initialized()  # a running Ray (a notebook, a cluster) is used as is
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        search = OptunaSearch(sampler=AutoSampler(seed=args.seed, budget=args.trials))
        tuner = tune.Tuner(
            trainable, param_space=param_space(),
            tune_config=tune.TuneConfig(search_alg=search, num_samples=args.trials,
                                        max_concurrent_trials=args.concurrent,
                                        metric="accuracy", mode="max", reuse_actors=True),
            run_config=tune.RunConfig(
                storage_path=args.runs, verbose=1,  # Tune's status table every 10 s
                progress_reporter=tune.CLIReporter(
                    parameter_columns=["n_neighbors", "weights"], max_report_frequency=10)))
        results = tuner.fit()
    finally:
        if started:
            ray.shutdown()
    best = results.get_best_result()
    trial = int(best.metrics["experiment_tag"].split("_")[0])  # Tune's trial counter
    print(f"\nAutoSampler through Ray Tune: best accuracy {best.metrics['accuracy']:.4f} at "
          f"trial {trial} of {len(results)} ({args.concurrent} at a time)")
    default = {**dict.fromkeys(WEIGHTS, 1.0), "n_neighbors": 5, "weights": "uniform"}
    print(f"every feature weighted 1, 5 neighbours, uniform vote: accuracy "
          f"{cv_accuracy(default):.4f}")
    print("best hyperparameters:")
    for name in ["n_neighbors", "weights", *WEIGHTS]:
        print(f"  {name:32s} {best.config[name]!r}")


if __name__ == "__main__":
    main()
