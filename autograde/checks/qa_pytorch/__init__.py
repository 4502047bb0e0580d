"""Hidden checks of assignment 08 (QA on Keras's PyTorch backend): the module and the loss (`model.py`), the
training step and the evaluation loop (`training.py`). The student's kernel runs Keras on PyTorch (the released
notebook declares KERAS_BACKEND=torch for it); this process keeps its own backend, TensorFlow, and computes every
reference here, in NumPy float64 (keras-hub on TensorFlow gives the tiny backbone's sequence output)."""
