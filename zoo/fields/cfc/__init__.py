"""Closed-form continuous-time networks (CfC; Hasani et al., Nature Machine Intelligence 2022), as
the ncps package computes them. Spec options in :mod:`.config` (no torch); the update in
:mod:`.update`, the wired layers in :mod:`.wired`, the recurrent step in :mod:`.cell`."""
