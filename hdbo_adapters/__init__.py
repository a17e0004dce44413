"""Framework adapters for the hdbo engine (Optuna, scikit-optimize, Nevergrad).

Each adapter lives in its own module and imports its framework only when that
module is imported, e.g. ``from hdbo_adapters.optuna import MSUCBSampler``.
"""
