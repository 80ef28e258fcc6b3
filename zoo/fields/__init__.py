"""Vector-field families (entry-point group ``zoo.fields``); each package's ``config`` module holds
its spec options and imports no torch."""
