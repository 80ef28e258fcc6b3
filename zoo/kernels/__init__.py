"""Compiled C++ kernels (``src/*.cpp``, built on first use by :mod:`.compiled`) and the
elementary operations on them that field bodies and fast paths share: softmax over a short axis,
products with one shared matrix, the folded LayerNorm's scale, float32 tanh, a cubic spline at
many times. Each falls back to plain torch where no kernel can run (no compiler, CUDA tensors,
``ZOO_COMPILED_KERNELS=0``) and computes the same numbers either way.
"""
