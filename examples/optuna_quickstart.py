"""Quickstart: swap Optuna's sampler for an hdbo one (MS-UCB) on a 30-dimensional problem.

    python examples/optuna_quickstart.py [--trials 60] [--dim 30]

The objective is the Styblinski-Tang function on [-5, 5]^D (minimum
-39.166 * D). Any of ``MSUCBSampler``, ``CobBOSampler``, ``GOUCBSampler``,
``BKBSampler`` (or ``HDBOSampler("<algorithm>")``) can be dropped in.
"""

from __future__ import annotations

import argparse

import optuna

from hdbo_adapters.optuna import MSUCBSampler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--dim", type=int, default=30)
    args = parser.parse_args()

    def objective(trial: optuna.Trial) -> float:
        x = [trial.suggest_float(f"x{i}", -5.0, 5.0) for i in range(args.dim)]
        return 0.5 * sum(v**4 - 16 * v**2 + 5 * v for v in x)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=MSUCBSampler(seed=0, n_startup_trials=10))
    study.optimize(objective, n_trials=args.trials)
    print(f"best value after {args.trials} trials: {study.best_value:.3f} "
          f"(global minimum {-39.16616570377142 * args.dim:.3f})")
    print("best trial:", study.best_trial.number)


if __name__ == "__main__":
    main()
