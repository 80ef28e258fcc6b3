"""``zoo report``: reproduced results side by side with the published ones."""
