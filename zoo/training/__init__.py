"""Training: recipe (optimiser, schedule, penalties), loop, evaluation and checkpoints."""
