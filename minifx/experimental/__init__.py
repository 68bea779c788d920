"""Passes that torch.fx keeps under ``torch.fx.experimental``: here, Conv+BN fusion.

``minifx.experimental.optimization.fuse`` folds each BatchNorm that follows a
convolution into that convolution, for inference (chapter 7).
"""
