"""Numerical solvers (entry-point group ``zoo.solvers``)."""
