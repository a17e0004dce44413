"""``AutoSampler``: the hdbo package's Auto sampler (``hdbo_adapters.optuna``).

The algorithm lives in the ``hdbo`` package, which ``requirements.txt`` installs; this
package only makes it loadable with ``optunahub.load_module("samplers/hdbo_auto")``.
"""

from hdbo_adapters.optuna import AutoSampler

__all__ = ["AutoSampler"]
