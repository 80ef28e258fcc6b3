"""Dense layers initialised as TensorFlow's defaults (the LTC repository's baselines).

``tf.get_variable`` and ``tf.layers.Dense`` use Glorot-uniform kernels; the biases start at 0.
"""

from __future__ import annotations

from torch import nn


def glorot_linear(inputs: int, outputs: int) -> nn.Linear:
    """y = x W + b with W ~ Glorot-uniform and b = 0."""
    layer = nn.Linear(inputs, outputs)
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer
