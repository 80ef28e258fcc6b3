"""Example nde-zoo plugin: a linear CDE vector field and a ramps dataset."""
