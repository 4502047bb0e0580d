"""Compare fine-tuning recipes for notebook 07's reader on held-out training paragraphs (never the test split).

    .venv/bin/python bench/qa_recipe.py --max-length 256 --stride 64 --epochs 3 --stories 2000 [...]

Trains the reference reader (the course's blocks in course_lib.layers and the notebook's model) on the course's
training questions plus generated stories, and reports the fine-tuning time,
this process's peak memory and exact match/F1 on the validation questions and on held-out stories (seed 1).
Each run appends one JSON line to bench/results/qa_recipes.jsonl. Run one at a time on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from recipe_log import log_run, peak_rss_gib  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--stride", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--stories", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--train-from", type=int, default=0,
                        help="train the encoder layers from this one up (0: all, embeddings included)")
    parser.add_argument("--unanswered", type=float, default=1.0,
                        help="share of the training windows without the answer that are kept")
    parser.add_argument("--original-only", action="store_true",
                        help="train on the first writers' paragraphs only (the set before source/added/)")
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)

    from course_lib import env

    env.setup()
    import keras
    import numpy as np

    from autograde.reference.qa.model import build_qa_model
    from course_lib import layers
    from course_lib.finetuning import lengths_of
    from course_lib.heads import train_top_layers
    from course_lib.pretrained import load_bert
    from course_lib.qa import corpus, stories
    from course_lib.qa.answering import Reader, evaluate
    from course_lib.qa.features import encode_examples
    from course_lib.qa.training import fine_tune_spans

    data = corpus.load_splits()
    train, validation = data["train"], data["validation"]
    if args.original_only:
        added = corpus.added_titles()
        train = [example for example in train if example.title not in added]
    bert = load_bert()
    tokenizer = bert.tokenizer
    story_train = stories.generate_stories(args.stories, seed=0)[:args.stories] if args.stories else []
    windows = encode_examples(tokenizer, train + story_train, layers.make_windows, max_length=args.max_length,
                              stride=args.stride)
    arrays = windows.arrays
    if args.unanswered < 1.0:
        rng = np.random.default_rng(0)
        empty = (arrays["labels"] == 0).all(axis=1)
        keep = ~empty | (rng.random(len(empty)) < args.unanswered)
        arrays = {name: values[keep] for name, values in arrays.items()}
    tokens = int(lengths_of(arrays).sum())
    keras.utils.set_random_seed(0)
    model = build_qa_model(bert.backbone)
    train_top_layers(model, args.train_from)
    started = time.perf_counter()
    fine_tune_spans(model, arrays, epochs=args.epochs, batch_size=args.batch_size, peak_learning_rate=args.lr,
                    verbose=0)
    seconds = time.perf_counter() - started
    reader = Reader(model, tokenizer, layers.make_windows, layers.best_span, max_length=args.max_length,
                    stride=args.stride)
    held_out = stories.generate_stories(200, seed=1)[:200]
    scores = {}
    for name, examples in {"validation": validation, "held_out_stories": held_out}.items():
        result = evaluate(examples, reader.predict(examples), layers.squad_em_f1)
        scores[name] = {"em": round(result["exact_match"], 1), "f1": round(result["f1"], 1),
                        "questions": result["questions"]}
    row = {**vars(args), "train_questions": len(train), "windows": int(len(arrays["labels"])), "tokens": tokens,
           "seconds": round(seconds, 1), "tokens_per_second": round(args.epochs * tokens / seconds),
           "peak_rss_gib": peak_rss_gib(), **scores}
    log_run("qa_recipes", row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
