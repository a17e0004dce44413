"""The ``hdbo`` command: run, demo, bench, report, plot and reproduce.

Built on :mod:`hdbo_engine` and the Optuna adapter (``--frontend optuna``);
the adapters in :mod:`hdbo_adapters` never import this package. Layout::

    cli.py          argument parsing and the subcommands (entry point ``hdbo``)
    runs.py         one engine run: trajectory.csv, summary.json, convergence.png
    optuna_run.py   ``hdbo run --frontend optuna``: workers sharing an Optuna storage
    bench.py        ``hdbo bench``: suites of cells against peer optimizers
    suites/         the committed suites (TOML)
    report.py       ``hdbo report`` / ``hdbo plot``: Markdown tables and figures
    reproduce/      ``hdbo reproduce``: each paper's headline experiment
    functions.py, tasks.py, problems.py, constrained.py   the benchmark problems
    kernels.py      numerical kernels held to x86-64-v2 (the demo, the behaviour lock)
"""
