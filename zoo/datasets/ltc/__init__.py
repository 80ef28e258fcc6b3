"""The datasets of the LTC paper's experiments ([LTC] ``experiments_with_ltcs``; facts §5.6)."""
