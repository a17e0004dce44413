from .sampler import AutoSampler

__all__ = ["AutoSampler"]
