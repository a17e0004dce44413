from .sampler import CobBOSampler

__all__ = ["CobBOSampler"]
