"""Assignment 08: assignment 07's extractive QA model again, trained with PyTorch.

Keras 3 runs on several backends; with `KERAS_BACKEND=torch` keras-hub's `BertBackbone` is a `torch.nn.Module`
with the same pretrained weights, and the learner writes the rest in plain PyTorch: the module, the loss, the
training step and the evaluation loop. Modules here:

- `setup`: the torch backend checked, seeds, versions, and the device to compute on (`setup.py`);
- the visible checks, `model.py` (QAModel, qa_loss) and `training.py` (train_step, evaluate), with their stand-in
  network (`standin.py`);
- `loop.py`: windows as torch batches, the warm-up/decay schedule, AdamW's parameter groups, the fine-tuning loop;
- `training_budget.py`: the learner's training step timed on this machine, and the questions a budget in minutes buys;
- `backends.py`: code run in a child process under another Keras backend (a process has exactly one);
- `throughput.py`: examples per second of a fine-tuning step in each framework.
"""
