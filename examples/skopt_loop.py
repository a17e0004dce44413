"""A scikit-optimize ask/tell loop driven by Auto, then skopt's own tools on the result.

Run:  python examples/skopt_loop.py [--n-calls 40] [--out objective.png]

The only change from a plain skopt loop is the optimizer class:
``skopt.Optimizer(dims)`` -> ``AutoOptimizer(dims)`` (or MSUCBOptimizer, CobBOOptimizer,
GOUCBOptimizer, BKBOptimizer). The objective is a 12-parameter problem with a
log-uniform learning rate, an integer and a categorical parameter (optimum 0).

It prints the best value after each batch of 4 asks and the best point of the
ask/tell loop; then ``auto_minimize`` (with a progress bar, stopped early by
skopt's ``DeltaYStopper`` once its three best values lie within 0.01: after 28 of the 40
evaluations with the defaults) prints its best value and number of evaluations, and
``skopt.utils.expected_minimum`` the surrogate's expected minimum of the loop's
result. ``--out`` adds skopt's ``plot_objective`` figure. A run with the
defaults takes about 15 CPU seconds (a 2-core Xeon).
"""

from __future__ import annotations

import argparse

import numpy as np
import skopt
from skopt.callbacks import DeltaYStopper
from skopt.space import Categorical, Integer, Real
from tqdm.auto import tqdm

from hdbo_adapters.skopt import AutoOptimizer, auto_minimize

DIMENSIONS = [
    Real(1e-5, 1e-1, prior="log-uniform", name="lr"),
    Integer(16, 512, prior="log-uniform", name="width"),
    Categorical(["relu", "tanh", "gelu"], name="activation"),
] + [Real(-2.0, 2.0, name=f"w{i}") for i in range(9)]


def objective(x: list) -> float:
    """A smooth stand-in for a validation loss (minimum near lr=1e-3, width=128, gelu)."""
    lr, width, activation, *w = x
    penalty = {"relu": 0.2, "tanh": 0.4, "gelu": 0.0}[activation]
    return float((np.log10(lr) + 3.0) ** 2 + (np.log2(width) - 7.0) ** 2 / 4.0
                 + np.sum((np.asarray(w) - 0.5) ** 2) / 9.0 + penalty)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-calls", type=int, default=40, help="evaluations per run [40]")
    parser.add_argument("--out", default=None, help="save a plot_objective figure here")
    args = parser.parse_args(argv)

    # 1. The ask/tell loop, in batches of 4 as a parallel skopt user would write it.
    opt = AutoOptimizer(DIMENSIONS, n_initial_points=12, random_state=0)
    for _ in range(args.n_calls // 4):
        points = opt.ask(n_points=4)
        result = opt.tell(points, [objective(x) for x in points])
        print(f"  {len(result.func_vals)} evaluations, best so far {result.fun:.4f}", flush=True)
    print(f"ask/tell: best {result.fun:.4f} at lr={result.x[0]:.2e}, width={result.x[1]}, "
          f"activation={result.x[2]} after {len(result.func_vals)} evaluations")

    # 2. The gp_minimize-style function, stopped early by a skopt callback.
    with tqdm(total=args.n_calls, desc="auto_minimize") as bar:

        def advance(_result: object) -> None:  # None: a skopt callback returning True stops
            bar.update(1)

        res = auto_minimize(objective, DIMENSIONS, n_calls=args.n_calls, n_initial_points=12,
                             random_state=0, callback=[DeltaYStopper(0.01, n_best=3), advance])
    print(f"auto_minimize: best {res.fun:.4f} after {len(res.func_vals)} evaluations")

    # 3. skopt's tools accept the result.
    x_min, f_min = skopt.utils.expected_minimum(result, n_random_starts=5, random_state=0)
    print(f"surrogate's expected minimum: {f_min:.4f}")
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        from skopt.plots import plot_objective

        axes = plot_objective(result, plot_dims=["lr", "width", "activation", "w0"])
        np.ravel(axes)[0].figure.savefig(args.out, dpi=80)
        print(f"plot_objective figure: {args.out}")


if __name__ == "__main__":
    main()
