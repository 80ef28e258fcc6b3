"""Experiment tracking with MLflow."""
