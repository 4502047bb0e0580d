"""The other side of bench/finetune_throughput.py, in a process of its own: Hugging Face transformers'
BertForTokenClassification on PyTorch, trained as its Trainer would (fused AdamW, linear warm-up and decay) on the
same batches. Its packages live in .venv/bench-site/ (bench/requirements.txt, installed by `make bench`), which only
this process puts on its path."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from bench.finetune_common import PEAK_LEARNING_RATE, SETTINGS, WARMUP_FRACTION, WEIGHT_DECAY, attempts
from bench.finetune_data import load_batches
from bench.quiet import OthersMeter, cores

BENCH_SITE = Path(__file__).resolve().parent.parent / ".venv" / "bench-site"


def run_theirs(args) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    sys.path.append(str(BENCH_SITE))  # after the course's site-packages: nothing there is shadowed
    try:
        import torch
        import transformers
    except ImportError as error:
        raise SystemExit(f"{error}: the PyTorch side is not installed; run `make bench` (it installs "
                         f"bench/requirements.txt into {BENCH_SITE})") from None
    import numpy as np

    from course_lib.ner import LABELS
    from course_lib.pretrained import find_checkpoint

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    torch.set_num_threads(cores())
    everything = load_batches(args.data_file)
    results = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__},
               "threads": {"intra_op": torch.get_num_threads(), "inter_op": torch.get_num_interop_threads()}}

    def tensors(inputs, labels):
        return {"input_ids": torch.from_numpy(inputs["token_ids"]).long(),
                "token_type_ids": torch.from_numpy(inputs["segment_ids"]).long(),
                "attention_mask": torch.from_numpy(inputs["padding_mask"]).long(),
                "labels": torch.from_numpy(labels).long()}

    def eval_loss(model):
        model.eval()
        total, counts = 0.0, 0
        with torch.no_grad():
            for inputs, labels in everything["eval"]:
                count = int((labels != -100).sum())
                total += float(model(**tensors(inputs, labels)).loss) * count
                counts += count
        model.train()
        return total / counts

    def step(model, optimizer, scheduler, inputs, labels):
        loss = model(**tensors(inputs, labels)).loss
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        return loss.item()

    folder = find_checkpoint()

    def once(setting):
        batches = everything[setting]
        torch.manual_seed(0)
        model = transformers.BertForTokenClassification.from_pretrained(str(folder), num_labels=len(LABELS))
        # As the course's AdamW and Hugging Face's Trainer: no weight decay on biases and layer-norm weights; fused,
        # as the Trainer's default optimizer on torch >= 2.8 (adamw_torch_fused).
        undecayed = lambda name: name.endswith("bias") or "LayerNorm" in name  # noqa: E731
        named = list(model.named_parameters())
        optimizer = torch.optim.AdamW(
            [{"params": [p for name, p in named if not undecayed(name)], "weight_decay": WEIGHT_DECAY},
             {"params": [p for name, p in named if undecayed(name)], "weight_decay": 0.0}],
            lr=PEAK_LEARNING_RATE, fused=True)
        total_steps = len(batches)  # one epoch, as fine_tune's schedule counts it
        scheduler = transformers.get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=round(WARMUP_FRACTION * total_steps), num_training_steps=total_steps)
        before = eval_loss(model)
        model.train()
        losses = [step(model, optimizer, scheduler, inputs, labels) for inputs, labels in batches[:args.warmup]]
        meter = OthersMeter()
        meter.start()
        started = time.perf_counter()
        for inputs, labels in batches[args.warmup:]:
            losses.append(step(model, optimizer, scheduler, inputs, labels))
        seconds = time.perf_counter() - started
        others = meter.stop()
        return {"seconds": seconds, "examples_per_second": args.steps * args.batch_size / seconds,
                "others_cpu_share": others,
                "train_loss_first_timed_steps": float(np.mean(losses[args.warmup:args.warmup + 10])),
                "train_loss_last_steps": float(np.mean(losses[-10:])),
                "eval_loss_before": before, "eval_loss_after": eval_loss(model),
                "optimizer_steps": int(scheduler.last_epoch)}

    for setting in SETTINGS:
        results[setting] = attempts(args, "theirs", setting, lambda: once(setting))  # noqa: B023
    return results
