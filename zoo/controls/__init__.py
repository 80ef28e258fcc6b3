"""Controls: how discrete observations become a path (entry-point group ``zoo.controls``)."""
