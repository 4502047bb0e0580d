"""Compare fine-tuning recipes for notebook 06's tagger, chosen on the validation splits (the test splits only to
report a chosen recipe).

    .venv/bin/python bench/ner_recipe.py --train course,real --epochs 3 --lr 5e-4 --train-from 2
    .venv/bin/python bench/ner_recipe.py --train real --steps 800 --train-from 0 --lr 2e-4 --test --record own-file

`--train` names the corpora trained on: `course` (the course's written corpus, `course_lib.ner.corpus`) and `real`
(the stand-off annotated Wikipedia paragraphs, `course_lib.ner.realtext`). `--steps` sets the number of optimizer
steps instead of `--epochs` (a recipe that scales with the file: epochs = steps x batch / sentences, rounded up).
Trains the grader's reference token classifier and loss, then reports the fine-tuning time, this process's peak
memory and entity F1 per type on both corpora's validation splits (and test splits with `--test`). Each run appends
one JSON line to bench/results/ner_recipes.jsonl; `--record NAME` also keeps its figures in bench/ner_figures.json,
which bench/notebook_blocks.py writes into notebook 06. One run at a time, on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from recipe_log import log_run, peak_rss_gib  # noqa: E402

CORPORA = ("course", "real")
FIGURES = REPO / "bench" / "ner_figures.json"  # what --record keeps, for the notebook's figure blocks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", default="course,real", help="corpora to train on, comma-separated")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=0, help="optimizer steps (overrides --epochs)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--train-from", type=int, default=2,
                        help="train the encoder layers from this one up (0: all, embeddings included)")
    parser.add_argument("--test", action="store_true", help="also score the test splits (to report a chosen recipe)")
    parser.add_argument("--record", default="", help="keep this run's figures in bench/ner_figures.json under NAME")
    parser.add_argument("--annotations", default=None, help="another annotations file of the real-text corpus")
    parser.add_argument("--budget", default="",
                        help='a budget in minutes ("5 min"): the steps chosen as notebook 06 chooses them '
                             "(course_lib.ner.training_plan), the predicted fine-tuning time logged beside the "
                             "measured one")
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.train.split(",") if name.strip()]
    if not chosen or set(chosen) - set(CORPORA):
        parser.error(f"--train takes names among {CORPORA}")

    from course_lib import env

    env.setup()
    import keras

    from autograde.reference.ner.alignment import align_labels_with_tokens
    from autograde.reference.ner.evaluation import entity_scores
    from autograde.reference.ner.model import build_token_classifier, masked_token_loss
    from course_lib.heads import train_top_layers
    from course_lib.ner import LABELS, corpus, encoding, realtext, training
    from course_lib.pretrained import load_bert

    data = {"course": corpus.load_corpus(), "real": realtext.load_realtext(args.annotations)}
    bert = load_bert()
    label_to_id = {label: i for i, label in enumerate(LABELS)}

    def encode(sentences):
        return encoding.encode_sentences(bert.tokenizer, sentences, label_to_id=label_to_id,
                                         align=align_labels_with_tokens, max_length=128)

    began = time.perf_counter()  # a budget in minutes counts from here, as 6.9's does from reading the file
    train_sentences = [s for name in chosen for s in data[name]["train"]]
    train = encode(train_sentences)
    epochs = math.ceil(args.steps * args.batch_size / len(train_sentences)) if args.steps else args.epochs
    keras.utils.set_random_seed(0)
    model = build_token_classifier(bert.backbone, num_labels=len(LABELS))
    train_top_layers(model, args.train_from)
    planned = {}
    if args.budget:  # 6.9's path: parts of about an epoch, the steps that fit the minutes
        from course_lib.ner.training_plan import plan_tagger, train_tagger

        if not args.steps:
            parser.error("--budget needs --steps: the fixed recipe's steps, shown beside it (6.9's OWN_RECIPE: 800)")
        steps = args.steps
        recipe = {"steps": steps, "train_from": args.train_from, "peak_learning_rate": args.lr,
                  "batch_size": args.batch_size,
                  "epochs": training.epochs_for_steps(steps, len(train_sentences), args.batch_size)}
        plan = plan_tagger(model, masked_token_loss, train, recipe, args.budget, named={"recipe": steps},
                           variable="--budget", since=began)
        history, planned = train_tagger(plan, verbose=0)
        seconds, epochs = planned["fine_tuning_seconds"], plan.epochs
    else:
        started = time.perf_counter()
        training.fine_tune(model, masked_token_loss, train, None, epochs=epochs, batch_size=args.batch_size,
                           peak_learning_rate=args.lr, verbose=0)
        seconds = time.perf_counter() - started

    scores = {}
    for split in ("validation", "test") if args.test else ("validation",):
        scores[split] = {}
        for name in CORPORA:
            sentences = data[name][split]
            arrays = encode(sentences)
            label_ids = training.predict_labels(model, arrays, batch_size=64)
            first = arrays["labels"] != -100
            predicted = [[LABELS[i] for i in row[keep]] for row, keep in zip(label_ids, first, strict=True)]
            predicted = [p + ["O"] * (len(s.tags) - len(p)) for p, s in zip(predicted, sentences, strict=True)]
            result = entity_scores([list(s.tags) for s in sentences], predicted)
            scores[split][name] = {kind: round(value["f1"], 3) for kind, value in result.items()}
    from course_lib.machine import describe

    row = {**vars(args), "epochs": epochs, "steps": epochs * -(-len(train_sentences) // args.batch_size),
           **planned, "machine": describe(),
           "train_sentences": len(train_sentences), "seconds": round(seconds, 1), "peak_rss_gib": peak_rss_gib(),
           **{f"{split}_f1": value for split, value in scores.items()}}
    log_run("ner_recipes", row)
    if args.record:
        from course_lib.machine import describe, kept_beside

        figures = json.loads(FIGURES.read_text()) if FIGURES.is_file() else {}
        measured = {key: row[key] for key in ("train", "epochs", "steps", "batch_size", "lr", "train_from",
                                              "train_sentences", "seconds", "peak_rss_gib")}
        measured.update({key: planned[key] for key in ("budget", "predicted_seconds", "measuring_seconds")
                         if key in planned})  # a budget's run: what it was given and what it expected
        measured.update({f"{split}_f1": value for split, value in scores.items()}, machine=describe())
        figures[args.record] = kept_beside(figures.get(args.record), measured)
        FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
