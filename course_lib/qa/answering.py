"""Assignment 07: from start/end logits back to answers in the text, their scores, and how good they are.

`decode` takes each question's windows, asks the learner's `best_span` for the best spans over all of them and
maps token positions to characters through the windows' offsets (the same answer found in two overlapping
windows is one candidate). `evaluate` averages the learner's `squad_em_f1` over the questions. `Reader` puts
tokenizer, model and the learner's functions together: `reader.answer(question, context)` for any text, and
`highlight` shows the answer in its paragraph as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from course_lib.qa.features import Windows, encode_examples


@dataclass
class Prediction:
    text: str
    start: int  # character offsets in the context, end exclusive
    end: int
    score: float  # start logit + end logit
    candidates: list  # (text, score) of the next best distinct answers


def _span(window: dict, start: int, end: int) -> tuple[int, int]:
    return window[start][0], window[end][1]


def decode(examples: Sequence, windows: Windows, start_logits, end_logits, best_span: Callable, *,
           max_answer_length: int = 30, n_best: int = 20, candidates: int = 5) -> list[Prediction]:
    """The best answer of each example, from its windows' logits; an empty answer when no span is valid."""
    predictions = []
    for index, example in enumerate(examples):
        rows = windows.of_example(index)
        spans = best_span(start_logits[rows], end_logits[rows], windows.context_mask[rows],
                          max_answer_length=max_answer_length, n_best=n_best)
        found: dict[tuple[int, int], float] = {}
        for span in spans or []:
            offsets = windows.offsets[rows[int(span["window"])]]
            first, last = offsets[int(span["start"])], offsets[int(span["end"])]
            if first is None or last is None:
                raise ValueError(f"best_span chose tokens {span['start']}..{span['end']} of a window of question "
                                 f"{getattr(example, 'id', index)}, which are not both context tokens")
            found.setdefault((first[0], last[1]), float(span["score"]))
        ranked = sorted(found.items(), key=lambda item: -item[1])
        if not ranked:
            predictions.append(Prediction("", 0, 0, float("-inf"), []))
            continue
        (start, end), score = ranked[0]
        others = [(example.context[s:e], value) for (s, e), value in ranked[1:candidates]]
        predictions.append(Prediction(example.context[start:end], start, end, score, others))
    return predictions


def evaluate(examples: Sequence, predictions: Sequence[Prediction], squad_em_f1: Callable) -> dict:
    """Mean exact match and F1 (in %) over the questions, and each question's row."""
    rows = []
    for example, prediction in zip(examples, predictions, strict=True):
        golds = [answer.text for answer in example.answers]
        em, f1 = squad_em_f1(prediction.text, golds)
        rows.append({"id": example.id, "question": example.question, "gold": golds[0] if golds else "",
                     "predicted": prediction.text, "em": float(em), "f1": float(f1), "score": prediction.score})
    count = max(len(rows), 1)
    return {"exact_match": 100 * sum(r["em"] for r in rows) / count, "f1": 100 * sum(r["f1"] for r in rows) / count,
            "questions": len(rows), "rows": rows}


@dataclass
class _Question:
    question: str
    context: str
    id: str = "your question"
    answers: tuple = ()


class Reader:
    """A fine-tuned QA model with the tokenizer and the learner's window and decoding functions."""

    def __init__(self, model, tokenizer, make_windows: Callable, best_span: Callable, *, max_length: int = 256,
                 stride: int = 64, max_answer_length: int = 30):
        self.model, self.tokenizer = model, tokenizer
        self.make_windows, self.best_span = make_windows, best_span
        self.max_length, self.stride, self.max_answer_length = max_length, stride, max_answer_length

    def windows(self, examples: Sequence, *, with_answers: bool = False) -> Windows:
        return encode_examples(self.tokenizer, examples, self.make_windows, max_length=self.max_length,
                               stride=self.stride, with_answers=with_answers)

    def predict(self, examples: Sequence, *, batch_size: int = 32) -> list[Prediction]:
        from course_lib.qa.training import predict_logits

        windows = self.windows(examples)
        start, end = predict_logits(self.model, windows.arrays, batch_size)
        return decode(examples, windows, start, end, self.best_span, max_answer_length=self.max_answer_length)

    def answer(self, question: str, context: str) -> Prediction:
        """The answer to `question` found in `context` (any text: long ones are read window by window)."""
        if not isinstance(question, str) or not isinstance(context, str):
            raise TypeError("answer(question, context) takes two strings; for many questions, call "
                            "reader.many(questions, contexts)")
        return self.many([question], [context])[0]

    def many(self, questions: Sequence[str], contexts: Sequence[str] | str, *,
             batch_size: int = 32) -> list[Prediction]:
        """The answer to each question in its context (one context for all, or one per question), every window
        of every question scored in the same batches: far faster than one `answer` call per question."""
        if isinstance(questions, str):
            raise TypeError("many takes a list of questions; for one question, call answer(question, context)")
        contexts = [contexts] * len(questions) if isinstance(contexts, str) else list(contexts)
        if len(contexts) != len(questions):
            raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts: give one context for all "
                             "or one per question")
        for number, (question, context) in enumerate(zip(questions, contexts, strict=True)):
            if not question.strip() or not context.strip():
                raise ValueError(f"question {number} or its context has no text: give both some text")
        return self.predict([_Question(q, c) for q, c in zip(questions, contexts, strict=True)], batch_size=batch_size)


def highlight(context: str, prediction: Prediction, *, question: str = "", gold: str | None = None) -> str:
    """The context as HTML with the predicted answer marked (and its score); the gold answer is named if given."""
    marked = (html.escape(context[:prediction.start])
              + f'<mark style="background:#ffd54f;padding:0 2px;border-radius:3px">'
                f'{html.escape(context[prediction.start:prediction.end])}</mark>'
              + html.escape(context[prediction.end:])).replace("\n", "<br>")
    header = f"<b>Q:</b> {html.escape(question)}<br>" if question else ""
    verdict = f" &middot; gold: <i>{html.escape(gold)}</i>" if gold is not None else ""
    answer = html.escape(prediction.text) if prediction.text else "(no valid span)"
    return (f'<div style="font-family:sans-serif;line-height:1.5;max-width:60em">{header}'
            f"<b>A:</b> {answer} <small>(score {prediction.score:.2f}{verdict})</small>"
            f'<div style="margin-top:4px;padding:6px;border-left:3px solid #bbb">{marked}</div></div>')


def worst(result: dict, count: int = 5) -> list[dict]:
    """The questions with the lowest F1, the most confident mistakes first."""
    rows = [row for row in result["rows"] if row["f1"] < 1.0]
    return sorted(rows, key=lambda row: (row["f1"], -row["score"]))[:count]



def plot_span_probabilities(windows: Windows, row: int, start_logits, end_logits, tokenizer, *, gold=None,
                            title: str = "", around: int = 40):
    """p(start) and p(end) over the context tokens of window `row` (softmax over the window's context), with
    the gold answer's tokens shaded when `gold` (char_start, char_end) lies in the window; at most `around`
    tokens either side of the most likely start are shown, so that the token labels stay readable."""
    import matplotlib.pyplot as plt

    from course_lib.layers import char_span_to_token_span

    positions = np.flatnonzero(windows.context_mask[row])
    probabilities = {}
    for name, logits in (("start", start_logits), ("end", end_logits)):
        z = np.asarray(logits[row], np.float64)[positions]
        probabilities[name] = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    centre = int(np.argmax(probabilities["start"]))
    gold_tokens = None
    if gold is not None:
        sequence_ids = [1 if keep else None for keep in windows.context_mask[row]]
        offsets = [o if o is not None else (0, 0) for o in windows.offsets[row]]
        found = char_span_to_token_span(offsets, sequence_ids, *gold)
        if found is not None:
            gold_tokens = (int(np.searchsorted(positions, found[0])), int(np.searchsorted(positions, found[1])))
            centre = gold_tokens[0]
    shown = np.arange(max(0, centre - around), min(len(positions), centre + around + 1))
    tokens = [tokenizer.id_to_token(int(i)) for i in windows.arrays["token_ids"][row][positions[shown]]]
    fig, ax = plt.subplots(figsize=(12, 3.4), constrained_layout=True)
    if gold_tokens is not None:
        ax.axvspan(gold_tokens[0] - 0.5, gold_tokens[1] + 0.5, color="#ffd54f", alpha=0.5, label="gold answer")
    ax.plot(shown, probabilities["start"][shown], "o-", markersize=3, color="#4c72b0", label="p(start)")
    ax.plot(shown, probabilities["end"][shown], "o-", markersize=3, color="#dd8452", label="p(end)")
    ax.set_xticks(shown, tokens, rotation=90, fontsize=8)
    ax.set_ylabel("probability")
    ax.set_title(title)
    ax.legend()
    return fig
