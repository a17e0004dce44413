from .sampler import GOUCBSampler

__all__ = ["GOUCBSampler"]
