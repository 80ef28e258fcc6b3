"""The ``zoo`` command line."""
