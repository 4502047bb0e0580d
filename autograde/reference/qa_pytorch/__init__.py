"""Reference implementations of assignment 08 (QA on Keras's PyTorch backend): the module and the loss
(`model.py`), the training step and the evaluation loop (`training.py`), and the NumPy float64 computations the
hidden checks compare with (`model.py`, `standin.py`, `training.py`)."""
