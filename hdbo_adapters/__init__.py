"""Framework adapters for the hdbo engine (Optuna, scikit-optimize, Nevergrad) and the CLI."""
