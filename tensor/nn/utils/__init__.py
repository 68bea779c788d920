"""tensor.nn.utils: helpers that work on whole modules (fusion for inference)."""

from . import fusion
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fusion"]
