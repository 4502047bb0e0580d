"""Fine-tuning recipes for the reader of notebooks 07 and 08, trained and chosen on SQuAD v1.1.

    .venv/bin/python bench/squad_recipe.py --questions 6500 --train-from 2 --lr 4e-4 [...]
    .venv/bin/python bench/squad_recipe.py --budget default --test all --record   # the figures the course quotes
    .venv/bin/python bench/squad_recipe.py --budget "10 min" --test all --record  # the notebooks' default budget
    .venv/bin/python bench/squad_recipe.py --questions 1500 --validation 1000 --record-curve  # quality vs data

Trains the reference reader (the course's blocks in course_lib.layers and the notebook's model) on `--questions`
seeded training questions of SQuAD v1.1 (course_lib.qa.squad_v1), then scores it with the notebook's reader on
`--validation` questions of the validation split (articles of train-v1.1.json that training never sees). Recipes
are chosen on those. `--test N|all` also scores N (or all 10,570) questions of dev-v1.1.json, the split published
readers report: only for recipes already chosen. The run is planned as notebook 07 plans it
(course_lib.qa.training_plan): a few steps are measured first, and the predicted fine-tuning time is logged beside the
measured one. Each run appends one JSON line to bench/results/squad_recipes.jsonl, with the machine; `--record`
(with `--budget`) also keeps the run's figures in course_lib/qa/data/reader_figures.json, which the notebooks and the
README quote, and `--record-curve` keeps a run of the default recipe as a point of the quality-against-questions
curve (course_lib/qa/data/reader_curve.json), which notebook 07 draws. Run one at a time on a quiet
machine: the times are the point (it waits for one, and reports the share of the cores other processes used while it
fine-tuned).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from quiet import OthersMeter, wait_for_quiet  # noqa: E402
from recipe_log import log_run, peak_rss_gib  # noqa: E402

from course_lib.qa.budgets import BUDGETS  # noqa: E402  (no TensorFlow: the budgets are plain dicts)


def budget_name(value: str) -> str:
    from course_lib.time_budget import parse_budget

    try:
        return str(parse_budget(value, BUDGETS))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=budget_name,
                        help="start from a budget of course_lib.qa.budgets (the notebook's CONFIG): "
                             f"{', '.join(BUDGETS)} or minutes (\"10 min\"); the options below then change it")
    parser.add_argument("--questions", type=int, help="training questions of SQuAD's train split")
    parser.add_argument("--max-length", type=int, help="tokens per training window")
    parser.add_argument("--stride", type=int)
    parser.add_argument("--read-max-length", type=int, help="tokens per window when reading (evaluation)")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float, dest="peak_learning_rate")
    parser.add_argument("--warmup", type=float, dest="warmup_fraction")
    parser.add_argument("--clip-norm", type=float, dest="clip_norm", help="0: no clipping")
    parser.add_argument("--train-from", type=int, help="train the encoder layers from this one up (0: all)")
    parser.add_argument("--unanswered", type=float, help="share of training windows without the answer kept")
    parser.add_argument("--validation", type=int, default=2000, help="validation questions scored")
    parser.add_argument("--test", default="", help="also score this many dev-v1.1 questions ('all': 10,570)")
    parser.add_argument("--record", action="store_true", help="keep the figures of a --budget run for the notebooks")
    parser.add_argument("--record-curve", action="store_true",
                        help="keep the run (default recipe, --questions N) as a point of notebook 07's curve")
    parser.add_argument("--note", default="")
    parser.add_argument("--wait-idle", type=float, default=600.0, help="seconds to wait for a quiet machine first")
    return parser.parse_args(argv)


def save_rows(name: str, rows: list[dict], examples) -> Path:
    """Each test question's answer, golds and scores, in bench/results/ (git-ignored: SQuAD's text stays out of git)."""
    import json

    from recipe_log import RESULTS

    path = RESULTS / f"squad_test_answers_{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    golds = {example.id: [answer.text for answer in example.answers] for example in examples}
    path.write_text(json.dumps([{**row, "golds": golds[row["id"]]} for row in rows]))
    return path


def recipe_of(args) -> dict:
    from course_lib.qa.budgets import recipe as budget_recipe

    recipe = budget_recipe(args.budget or "default")
    for key in recipe:
        value = getattr(args, key, None)
        if value is not None:
            recipe[key] = value
    if not recipe.get("clip_norm"):
        recipe["clip_norm"] = None
    return recipe


def main(argv=None) -> int:
    args = arguments(argv)
    if args.record and not args.budget:
        raise SystemExit("--record keeps the figures of a budget: add --budget NAME (or \"10 min\")")
    from course_lib import env

    env.setup(verbose=False)
    from course_lib import layers
    from course_lib.qa import squad_v1
    from course_lib.qa.answering import Reader, evaluate
    from course_lib.qa.training_plan import plan_reader, train_reader

    recipe = recipe_of(args)
    print("recipe:", recipe, flush=True)
    from course_lib.pretrained import load_bert

    bert = load_bert()
    quiet = wait_for_quiet(args.wait_idle, 0.15)  # other work on the cores skews the fine-tuning time badly
    others = OthersMeter()
    others.start()
    started = time.perf_counter()
    from autograde.reference.qa.model import build_qa_model

    plan = plan_reader(bert, recipe, make_windows=layers.make_windows, build_qa_model=build_qa_model)
    model, report = train_reader(plan, verbose=0)
    recipe = plan.recipe  # with the questions a budget in minutes chose
    seconds = time.perf_counter() - started
    quiet["others_cpu_share"] = round(others.stop(), 3)  # of all cores, by other processes, while it fine-tuned
    if quiet["others_cpu_share"] > 0.05:
        print(f"not quiet: other processes used {quiet['others_cpu_share']:.0%} of the cores while it fine-tuned",
              flush=True)
    report.pop("history")
    reader = Reader(model, bert.tokenizer, layers.make_windows, layers.best_span,
                    max_length=recipe["read_max_length"], stride=recipe["stride"])
    scored = {"validation": squad_v1.sample("validation", args.validation, seed=1)}
    if args.test:
        scored["test"] = squad_v1.sample("test", None if args.test == "all" else int(args.test), seed=1)
    scores = {}
    for name, examples in scored.items():
        begun = time.perf_counter()
        result = evaluate(examples, reader.predict(examples), layers.squad_em_f1)
        scores[name] = {"em": round(result["exact_match"], 1), "f1": round(result["f1"], 1),
                        "questions": result["questions"], "seconds": round(time.perf_counter() - begun, 1)}
        print(name, scores[name], flush=True)
        if name == "test":  # every answer, for the error analysis (bench/squad_errors.py)
            save_rows(args.budget or "recipe", result["rows"], examples)
    from course_lib.machine import describe

    row = {"budget": args.budget, "recipe": recipe, "note": args.note, **report,
           "total_seconds": round(seconds, 1), "peak_rss_gib": peak_rss_gib(), "quiet": quiet, **scores,
           "machine": describe()}
    log_run("squad_recipes", row)
    print(f"fine-tuning {report['fine_tuning_seconds']:.0f} s, predicted {report['predicted_seconds']:.0f} s "
          f"(measuring {report['measuring_seconds']:.0f} s); measuring and fine-tuning "
          f"{report['measuring_seconds'] + report['fine_tuning_seconds']:.0f} s", flush=True)
    if args.record:
        from course_lib.qa.budgets import record_figures

        record_figures(args.budget, row)
    if args.record_curve:
        from course_lib.qa.curve import record_point

        record_point(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
