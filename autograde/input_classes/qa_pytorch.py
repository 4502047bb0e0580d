"""The inputs assignment 08's graded functions must handle (see autograde/input_classes/__init__.py)."""

from autograde.input_classes import InputClass


def _shape(value) -> tuple:
    return tuple(int(d) for d in value.shape)


def _forward(a) -> bool:
    return "token_ids" in a


CLASSES = {
    "QAModel": (
        InputClass("other_hidden_size", "a backbone whose hidden size is not 384 (read it from the backbone)",
                   lambda a: "backbone" in a and a["backbone"].hidden_dim not in (384,)),
        InputClass("two_sizes", "a second backbone: one layer, three heads, hidden size 12",
                   lambda a: "backbone" in a and a["backbone"].num_layers == 1 and a["backbone"].hidden_dim == 12),
        InputClass("batch_of_one", "a batch of one window (squeeze must keep the batch axis)",
                   lambda a: _forward(a) and _shape(a["token_ids"])[0] == 1),
        InputClass("int32_ids", "token ids as int32 rather than int64",
                   lambda a: _forward(a) and str(a["token_ids"].dtype) == "torch.int32"),
        InputClass("padding", "windows with padding (padding_mask 0) after their tokens",
                   lambda a: _forward(a) and bool((a["padding_mask"] == 0).any())),
        InputClass("evaluation_mode", "called after model.eval()", lambda a: _forward(a) and not a["self"].training),
        InputClass("training_mode", "called after model.train()", lambda a: _forward(a) and a["self"].training),
    ),
    "qa_loss": (
        InputClass("answer_at_cls", "a window without the answer: start and end at position 0 ([CLS])",
                   lambda a: bool(((a["start_positions"] == 0) & (a["end_positions"] == 0)).any())),
        InputClass("answer_at_last_token", "an answer that ends at the window's last token",
                   lambda a: bool((a["end_positions"] == a["end_logits"].shape[1] - 1).any())),
        InputClass("batch_of_one", "a batch of one window", lambda a: a["start_logits"].shape[0] == 1),
        InputClass("large_logits", "logits of scale 40 (a naive softmax overflows)",
                   lambda a: float(a["start_logits"].abs().max()) > 50),
        InputClass("small_logits", "logits of scale 0.5, close to uniform",
                   lambda a: float(a["start_logits"].abs().max()) < 2.5),
    ),
    "train_step": (
        InputClass("stale_gradients", "a model whose .grad already holds gradients when the step starts",
                   lambda a: any(p.grad is not None and bool(p.grad.abs().sum() > 0)
                                 for p in a["model"].parameters())),
        InputClass("sgd", "an SGD optimizer", lambda a: type(a["optimizer"]).__name__ == "SGD"),
        InputClass("adamw", "an AdamW optimizer", lambda a: type(a["optimizer"]).__name__ == "AdamW"),
        InputClass("default_max_grad_norm", "max_grad_norm left at its default, 1.0",
                   lambda a: a["max_grad_norm"] == 1.0),
        InputClass("clipping_norm", "a max_grad_norm small enough to clip", lambda a: a["max_grad_norm"] < 0.1),
        InputClass("window_without_answer", "a batch with a window whose answer is at [CLS] (0, 0)",
                   lambda a: bool(((a["batch"]["start_positions"] == 0) & (a["batch"]["end_positions"] == 0)).any())),
        InputClass("small_batch", "a batch of two windows", lambda a: a["batch"]["token_ids"].shape[0] == 2),
    ),
    "evaluate": (
        InputClass("handed_over_training", "a model handed over in training mode", lambda a: a["model"].training),
        InputClass("handed_over_evaluation", "a model handed over in evaluation mode",
                   lambda a: not a["model"].training),
        InputClass("smaller_last_batch", "batches whose last one is smaller",
                   lambda a: len(a["batches"]) > 1 and a["batches"][-1]["token_ids"].shape[0]
                   < a["batches"][0]["token_ids"].shape[0]),
        InputClass("one_batch", "a single batch", lambda a: len(a["batches"]) == 1),
        InputClass("batch_of_one", "a batch of one window",
                   lambda a: any(batch["token_ids"].shape[0] == 1 for batch in a["batches"])),
    ),
}
