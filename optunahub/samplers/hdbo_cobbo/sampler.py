"""``CobBOSampler``: the hdbo package's CobBO sampler (``hdbo_adapters.optuna``).

The algorithm lives in the ``hdbo`` package, which ``requirements.txt`` installs; this
package only makes it loadable with ``optunahub.load_module("samplers/hdbo_cobbo")``.
"""

from hdbo_adapters.optuna import CobBOSampler

__all__ = ["CobBOSampler"]
