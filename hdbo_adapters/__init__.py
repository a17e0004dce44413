"""Framework adapters for the hdbo engine: thin translations, no algorithm logic.

    optuna.py       <Algo>Sampler, an optuna.samplers.BaseSampler
    skopt.py        <Algo>Optimizer, a drop-in for skopt.Optimizer
    nevergrad.py    registered Nevergrad optimizers (``import hdbo_adapters.nevergrad``)
    ray.py          Ray Tune's OptunaSearch with early-stopped trials told as pruned

Each translates its framework's space to the engine's unit cube and back.
The ``hdbo`` command line lives in :mod:`hdbo_cli`.
"""
