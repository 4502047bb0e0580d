"""Compare fine-tuning recipes for notebook 06's tagger on the validation split (never the test split).

    .venv/bin/python bench/ner_recipe.py --epochs 5 --batch-size 16 --lr 2e-4 [--train-from 0] [--no-added]

Trains the reference token classifier (the grader's reference model and loss) on the training split and
reports the fine-tuning time, this process's peak memory, entity F1 per type on the validation documents
written with the first corpus ("original") and on all of them, and how many validation sentences a second
`Tagger.many` tags. Each run appends one JSON line to bench/results/ner_recipes.jsonl. One run at a time, on a
quiet machine.
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
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--train-from", type=int, default=0,
                        help="train the encoder layers from this one up (0: all, embeddings included)")
    parser.add_argument("--no-added", action="store_true", help="train on the original documents only")
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)

    from course_lib import env

    env.setup()
    import keras

    from autograde.reference.ner.alignment import align_labels_with_tokens
    from autograde.reference.ner.entities import predictions_to_entities
    from autograde.reference.ner.evaluation import entity_scores
    from autograde.reference.ner.model import build_token_classifier, masked_token_loss
    from course_lib.heads import train_top_layers
    from course_lib.ner import LABELS, corpus, encoding, training
    from course_lib.ner.tagging import Tagger
    from course_lib.pretrained import load_bert

    data = corpus.load_corpus()
    added = {document.id for document in corpus.read_sources() if document.added}
    if args.no_added:
        data["train"] = [s for s in data["train"] if s.document not in added]
    bert = load_bert()
    label_to_id = {label: i for i, label in enumerate(LABELS)}

    def encode(sentences):
        return encoding.encode_sentences(bert.tokenizer, sentences, label_to_id=label_to_id,
                                         align=align_labels_with_tokens, max_length=128)

    train = encode(data["train"])
    keras.utils.set_random_seed(0)
    model = build_token_classifier(bert.backbone, num_labels=len(LABELS))
    train_top_layers(model, args.train_from)
    started = time.perf_counter()
    training.fine_tune(model, masked_token_loss, train, None, epochs=args.epochs, batch_size=args.batch_size,
                       peak_learning_rate=args.lr, verbose=0)
    seconds = time.perf_counter() - started

    scores = {}
    parts = {"original": [s for s in data["validation"] if s.document not in added], "all": data["validation"]}
    for name, sentences in parts.items():
        arrays = encode(sentences)
        label_ids = training.predict_labels(model, arrays, batch_size=64)
        first = arrays["labels"] != -100
        predicted = [[LABELS[i] for i in row[keep]] for row, keep in zip(label_ids, first, strict=True)]
        predicted = [p + ["O"] * (len(s.tags) - len(p)) for p, s in zip(predicted, sentences, strict=True)]
        result = entity_scores([list(s.tags) for s in sentences], predicted)
        scores[name] = {kind: round(value["f1"], 3) for kind, value in result.items()}
    tag = Tagger(model, bert.tokenizer, predictions_to_entities)
    texts = [" ".join(s.tokens) for s in data["validation"]]
    tag.many(texts[:64])  # the first batches trace the model
    started = time.perf_counter()
    tag.many(texts)
    per_second = len(texts) / (time.perf_counter() - started)
    row = {**vars(args), "train_sentences": len(data["train"]), "seconds": round(seconds, 1),
           "peak_rss_gib": peak_rss_gib(),
           "validation_f1": scores, "tagged_per_second": round(per_second, 1)}
    log_run("ner_recipes", row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
