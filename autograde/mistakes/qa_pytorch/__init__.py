"""Named mistakes of assignment 08: the module and the loss (`model.py`), the training step and the evaluation loop
(`training.py`)."""
