"""Assignment 06: keep a fine-tuned tagger. `save_tagger(tagger, folder)` writes three files, `load_tagger(folder,
to_entities)` reads them back into a `Tagger` that gives the same entities:

- `model.keras`: the token classifier, Keras's own format (architecture and weights);
- `tokenizer.json`: the WordPiece tokenizer it was trained with (the `tokenizers` library's file);
- `tagger.json`: the label names in id order, the window length, the tokenizer file's SHA-256 (its identity:
  a tagger read with another vocabulary would read other words) and what saved it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from course_lib.ner.tagging import Tagger

MODEL_FILE, TOKENIZER_FILE, DESCRIPTION_FILE = "model.keras", "tokenizer.json", "tagger.json"
FORMAT = 1


class SavedTaggerError(ValueError):
    """A folder that does not hold a saved tagger, or holds a damaged one; the message says which file."""


def save_tagger(tagger: Tagger, folder) -> Path:
    """Save the tagger's model, tokenizer and labels in `folder` (created if needed); return the folder."""
    import keras

    if not isinstance(tagger, Tagger):
        raise TypeError(f"save_tagger takes a Tagger (Tagger(model, tokenizer, predictions_to_entities)), "
                        f"got a {type(tagger).__name__}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tagger.model.save(folder / MODEL_FILE)
    tokenizer_text = tagger.tokenizer.to_str()
    (folder / TOKENIZER_FILE).write_text(tokenizer_text, encoding="utf-8")
    labels = [tagger.id_to_label[i] for i in range(len(tagger.id_to_label))]
    description = {"format": FORMAT, "labels": labels, "max_length": tagger.max_length,
                   "tokenizer_sha256": hashlib.sha256(tokenizer_text.encode("utf-8")).hexdigest(),
                   "saved_with": {"keras": keras.__version__, "backend": keras.config.backend()}}
    (folder / DESCRIPTION_FILE).write_text(json.dumps(description, indent=1) + "\n", encoding="utf-8")
    return folder


def _description(folder: Path) -> dict:
    missing = [name for name in (MODEL_FILE, TOKENIZER_FILE, DESCRIPTION_FILE) if not (folder / name).is_file()]
    if missing:
        raise SavedTaggerError(f"{folder} holds no saved tagger: {', '.join(missing)} missing (save_tagger writes "
                               "them)")
    try:
        description = json.loads((folder / DESCRIPTION_FILE).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SavedTaggerError(f"{folder / DESCRIPTION_FILE} is not valid JSON: {error}") from error
    if not isinstance(description, dict) or description.get("format") != FORMAT or \
            not isinstance(description.get("labels"), list):
        raise SavedTaggerError(f"{folder / DESCRIPTION_FILE} is not a saved tagger's description of format {FORMAT}")
    return description


def load_tagger(folder, to_entities: Callable) -> Tagger:
    """The tagger saved in `folder`, with `to_entities` (your predictions_to_entities) turning predictions into
    entities. Refuses a tokenizer file that is not the one saved with the model."""
    import keras
    from tokenizers import Tokenizer

    folder = Path(folder)
    description = _description(folder)
    tokenizer_text = (folder / TOKENIZER_FILE).read_text(encoding="utf-8")
    if hashlib.sha256(tokenizer_text.encode("utf-8")).hexdigest() != description.get("tokenizer_sha256"):
        raise SavedTaggerError(f"{folder / TOKENIZER_FILE} is not the tokenizer the model was saved with (its "
                               "SHA-256 differs from the one in tagger.json): save the tagger again")
    tokenizer = Tokenizer.from_str(tokenizer_text)
    try:
        model = keras.saving.load_model(folder / MODEL_FILE, compile=False)
    except (OSError, ValueError) as error:
        raise SavedTaggerError(f"{folder / MODEL_FILE} cannot be read as a Keras model: {error}") from error
    outputs = int(model.output.shape[-1])
    if outputs != len(description["labels"]):
        raise SavedTaggerError(f"the model gives {outputs} logits per token, tagger.json names "
                               f"{len(description['labels'])} labels")
    return Tagger(model, tokenizer, to_entities, labels=description["labels"],
                  max_length=int(description.get("max_length", 128)))
