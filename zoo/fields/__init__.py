"""Vector-field families (entry-point group ``zoo.fields``)."""
