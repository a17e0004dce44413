"""``GOUCBSampler``: the hdbo package's GO-UCB sampler (``hdbo_adapters.optuna``).

The algorithm lives in the ``hdbo`` package, which ``requirements.txt`` installs; this
package only makes it loadable with ``optunahub.load_module("samplers/hdbo_goucb")``.
"""

from hdbo_adapters.optuna import GOUCBSampler

__all__ = ["GOUCBSampler"]
