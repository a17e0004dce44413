"""``MSUCBSampler``: the hdbo package's MS-UCB sampler (``hdbo_adapters.optuna``).

The algorithm lives in the ``hdbo`` package, which ``requirements.txt`` installs; this
package only makes it loadable with ``optunahub.load_module("samplers/hdbo_msucb")``.
"""

from hdbo_adapters.optuna import MSUCBSampler

__all__ = ["MSUCBSampler"]
