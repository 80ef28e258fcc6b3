"""Task heads: output layer, loss and metrics (entry-point group ``zoo.readouts``)."""
