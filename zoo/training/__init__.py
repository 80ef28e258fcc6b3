"""Training: recipe, loop, evaluation, early stopping and checkpoints."""
