"""``BKBSampler``: the hdbo package's BKB sampler (``hdbo_adapters.optuna``).

The algorithm lives in the ``hdbo`` package, which ``requirements.txt`` installs; this
package only makes it loadable with ``optunahub.load_module("samplers/hdbo_bkb")``.
"""

from hdbo_adapters.optuna import BKBSampler

__all__ = ["BKBSampler"]
