"""Reference implementations in plain NumPy, written independently of the solution notebooks."""
