from .sampler import BKBSampler

__all__ = ["BKBSampler"]
