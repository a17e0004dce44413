"""Framework adapters for the hdbo engine (each submodule imports its own framework)."""
