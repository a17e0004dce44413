from .sampler import MSUCBSampler

__all__ = ["MSUCBSampler"]
