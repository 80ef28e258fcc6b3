"""Dense layers initialised as TensorFlow's (the LTC repository's cells and readouts).

``tf.get_variable`` and ``tf.layers.Dense`` use Glorot-uniform kernels; the LTC traffic and power
scripts give their readout ``tf.keras.initializers.TruncatedNormal()`` (mean 0, std 0.05, redrawn
beyond 2 std). Biases start at 0.
"""

from __future__ import annotations

from torch import nn

TRUNCATED_STD = 0.05  # tf.keras.initializers.TruncatedNormal's default stddev


def glorot_linear(inputs: int, outputs: int) -> nn.Linear:
    """y = x W + b with W ~ Glorot-uniform and b = 0."""
    layer = nn.Linear(inputs, outputs)
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


def truncated_normal_linear(inputs: int, outputs: int) -> nn.Linear:
    """y = x W + b with W ~ N(0, 0.05²) truncated to ±2 std and b = 0."""
    layer = nn.Linear(inputs, outputs)
    nn.init.trunc_normal_(layer.weight, std=TRUNCATED_STD, a=-2 * TRUNCATED_STD,
                          b=2 * TRUNCATED_STD)
    nn.init.zeros_(layer.bias)
    return layer
