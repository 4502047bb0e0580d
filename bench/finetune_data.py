"""The data of bench/finetune_throughput.py, made in a process of its own: a sample of the NER corpus through the
course's encoding and batch plan, saved as NumPy arrays so that both frameworks get identical batches."""

from __future__ import annotations

from bench.finetune_common import BUCKETS, FIXED_LENGTH, INPUTS, SETTINGS


def sample(sentences, count: int, seed: int) -> list:
    import numpy as np

    if len(sentences) < count:
        raise SystemExit(f"{count} sentences needed, the split has {len(sentences)}: fewer --steps or --batch-size")
    return [sentences[i] for i in sorted(np.random.default_rng(seed).choice(len(sentences), count, replace=False))]


def encoded_samples(args) -> dict:
    """{"train", "eval"}: encode_sentences arrays of the sentences each part trains and evaluates on."""
    from autograde.reference.ner.alignment import align_labels_with_tokens
    from course_lib.ner import LABELS, corpus, encoding
    from course_lib.pretrained import load_tokenizer

    if not (corpus.DATA_DIR / "train.conll").is_file():
        raise SystemExit(f"no corpus: {corpus.DATA_DIR / 'train.conll'} is missing "
                         "(build it with `python -m course_lib.ner.corpus build`)")
    data = corpus.load_corpus()
    tokenizer = load_tokenizer()  # load_bert().tokenizer without loading the encoder
    label_to_id = {label: i for i, label in enumerate(LABELS)}
    encode = lambda sentences: encoding.encode_sentences(  # noqa: E731  (as the notebook's `encode`)
        tokenizer, sentences, label_to_id=label_to_id, align=align_labels_with_tokens, max_length=FIXED_LENGTH,
        verbose=False)
    # Exactly warm-up + timed batches of training sentences (a random sample, so the lengths are the split's), so
    # that one epoch of training.fine_tune is those steps; a few validation batches for the loss before and after.
    train = sample(data["train"], (args.warmup + args.steps) * args.batch_size, seed=0)
    evaluation = sample(data["validation"], args.eval_batches * args.batch_size, seed=1)
    return {"train": encode(train), "eval": encode(evaluation), "train_sentences": len(data["train"])}


def plan(arrays, batch_size: int, bucket: int, *, shuffled: bool) -> list[tuple[dict, object]]:
    """The batches fine_tune makes of `arrays` in its first epoch (seed 0): course_lib.finetuning's own batch_plan,
    called as its batch source calls it; run_ours checks that fit received exactly these."""
    import numpy as np

    from course_lib import finetuning

    rng = np.random.default_rng(0) if shuffled else None
    steps = finetuning.batch_plan(finetuning.lengths_of(arrays), batch_size, bucket=bucket, max_length=FIXED_LENGTH,
                                  rng=rng)
    return [({name: np.asarray(arrays[name][rows, :width], np.int32) for name in INPUTS},
             np.asarray(arrays["labels"][rows, :width], np.int32)) for rows, width in steps]


def build_data(args) -> dict:
    """Save every setting's batches (and the validation batches) to args.data_file; what the report says of them."""
    from course_lib import env

    env.setup(verbose=False)  # course_lib.finetuning imports Keras: TensorFlow without its start-up lines
    import numpy as np

    samples = encoded_samples(args)
    settings = {setting: plan(samples["train"], args.batch_size, BUCKETS[setting], shuffled=True)
                for setting in SETTINGS}
    settings["eval"] = plan(samples["eval"], args.batch_size, BUCKETS["per batch"], shuffled=False)
    arrays = {}
    for setting, batches in settings.items():
        for index, (inputs, labels) in enumerate(batches):
            for name in INPUTS:
                arrays[f"{setting}/{index}/{name}"] = inputs[name]
            arrays[f"{setting}/{index}/labels"] = labels
    np.savez(args.data_file, **arrays)
    timed = settings["per batch"][args.warmup:]
    widths = [labels.shape[1] for _, labels in timed]
    real = sum(int(inputs["padding_mask"].sum()) for inputs, _ in timed)
    return {"train_sentences": samples["train_sentences"], "timed_batch_widths": widths,
            "mean_timed_width": sum(widths) / len(widths),
            "real_token_share_per_batch": real / (args.batch_size * sum(widths)),
            "real_token_share_fixed": real / (args.batch_size * FIXED_LENGTH * len(widths)),
            "batch_sizes": sorted({len(labels) for _, labels in timed})}


def load_batches(path) -> dict[str, list[tuple[dict, object]]]:
    """{"fixed 128" | "per batch" | "eval": [(inputs, labels), ...]} from the data process's file."""
    import numpy as np

    stored = np.load(path)
    found: dict[str, dict[int, dict]] = {}
    for key in stored.files:
        setting, index, name = key.split("/")
        found.setdefault(setting, {}).setdefault(int(index), {})[name] = stored[key]
    return {setting: [({name: parts[name] for name in INPUTS}, parts["labels"])
                      for _, parts in sorted(by_index.items())]
            for setting, by_index in found.items()}


def same_batches(seen, expected) -> bool:
    import numpy as np

    return len(seen) == len(expected) and all(
        np.array_equal(labels, want_labels) and all(np.array_equal(inputs[name], want[name]) for name in INPUTS)
        for (inputs, labels), (want, want_labels) in zip(seen, expected, strict=True))
