"""Datasets (entry-point group ``zoo.datasets``)."""
