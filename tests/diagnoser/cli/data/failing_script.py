"""A script that fails before it launches anything: the IR rung cannot capture it."""
raise RuntimeError("the script's own bug")
