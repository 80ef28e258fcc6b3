"""How gradients flow through a solve (entry-point group ``zoo.backprop``)."""
