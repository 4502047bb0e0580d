"""The exercise registry: one row per graded cell, naming every file that serves it.

    python -m autograde.registry            # print CONTRIBUTING.md's exercise table

A row says where the learner's answer is checked (visible check, `course_lib`), graded (hidden check,
`autograde.checks`), what it is compared with (`autograde.reference`) and where its unit tests are; the
wrong and right versions the grading tests submit are in `autograde.variants`. Objects are named
`module:attribute`, so each file is one hop from here. tests/test_registry.py keeps the notebooks, the files
and CONTRIBUTING.md in agreement with this table.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

from autograde.course import REPO_ROOT


@dataclass(frozen=True)
class Exercise:
    stem: str  # assignment stem, NN_topic
    name: str  # the learner's function or class; also the grade id of its solution cell
    points: int
    visible: str  # module:function of the check the learner runs
    hidden: str  # module:function of the grader's check
    reference: tuple[str, ...]  # module:attribute of what the hidden check compares with
    tests: str  # unit tests of the checks and the reference
    grade_id: str = ""  # the test cell's grade id (default test_<name>)
    imports: str = ""  # what the notebook's set-up gives its solution cells (imports, constants), to define them here
    kernel_setup: str = ""  # checked only in a kernel started with this code (another Keras backend), not in-process
    tensors: bool = False  # the checks want tf.Tensor results where the (NumPy) reference returns arrays

    @property
    def test_id(self) -> str:
        return self.grade_id or f"test_{self.name}"

    @property
    def checked(self) -> str:
        """The reference the checks take: the one named like the exercise (a Keras layer's class), else the first."""
        return next((r for r in self.reference if r.partition(":")[2] == self.name), self.reference[0])


def topic(stem: str) -> str:
    """`04_transformer` -> `transformer`: the name of the assignment's module or package in each folder."""
    return stem.split("_", 1)[1]


def _rows(stem: str, tests: str, *rows: tuple, imports: str = "") -> list[Exercise]:
    """Rows of one assignment; `visible`, `hidden` and `reference` are written relative to its topic:
    ".layers:check_x" means course_lib.<topic>.layers:check_x, ":check_x" course_lib.<topic>:check_x.
    `imports`: what the notebook's set-up cell gives its solution cells."""
    package = topic(stem)

    def where(root: str, relative: str) -> str:
        module, attribute = relative.split(":")
        return f"{root}.{package}{module}:{attribute}"

    made = []
    for name, points, visible, hidden, references, *rest in rows:
        extra = rest[0] if rest else {}
        made.append(Exercise(
            stem=stem, name=name, points=points, visible=where("course_lib", visible),
            hidden=where("autograde.checks", hidden),
            reference=tuple(where("autograde.reference", r) for r in references),
            tests=extra.get("tests", tests), grade_id=extra.get("grade_id", ""), imports=imports,
            kernel_setup=extra.get("kernel_setup", ""), tensors=extra.get("tensors", False),
        ))
    return made


EXERCISES: list[Exercise] = [
    *_rows(
        "01_positional_encoding", "tests/test_01_positional_encoding.py",
        ("get_angles", 2, ":check_get_angles", ":grade_get_angles", [":get_angles"]),
        ("positional_encoding", 3, ":check_positional_encoding", ":grade_positional_encoding",
         [":positional_encoding"], {"tensors": True}),
        imports="import keras\nimport numpy as np\nimport tensorflow as tf\n",
    ),
    *_rows(
        "02_scaled_dot_product_attention", "tests/test_02_scaled_dot_product_attention.py",
        ("dot_score", 1, ":check_dot_score", ":grade_dot_score", [":dot_score"]),
        ("scaled_dot_score", 1, ":check_scaled_dot_score", ":grade_scaled_dot_score", [":scaled_dot_score"]),
        ("general_score", 1, ":check_general_score", ":grade_general_score", [":general_score"]),
        ("additive_score", 1, ":check_additive_score", ":grade_additive_score", [":additive_score"]),
        ("cosine_score", 1, ":check_cosine_score", ":grade_cosine_score", [":cosine_score"]),
        ("create_padding_mask", 1, ":check_create_padding_mask", ":grade_create_padding_mask", [":padding_mask"],
         {"tensors": True}),
        ("create_look_ahead_mask", 1, ":check_create_look_ahead_mask", ":grade_create_look_ahead_mask",
         [":look_ahead_mask"], {"tensors": True}),
        ("scaled_dot_product_attention", 4, ":check_scaled_dot_product_attention",
         ":grade_scaled_dot_product_attention", [":scaled_dot_product_attention"], {"tensors": True}),
        imports="import numpy as np\nimport tensorflow as tf\n",
    ),
    # call and copy_keras_weights use split_heads but are graded with reference parts.
    *_rows(
        "03_multi_head_attention", "tests/test_03_multi_head_attention.py",
        ("split_heads", 1, ":check_split_heads", ":grade_split_heads", [":split_heads"], {"tensors": True}),
        ("merge_heads", 1, ":check_merge_heads", ":grade_merge_heads", [":merge_heads"], {"tensors": True}),
        ("ScratchMultiHeadAttention", 4, ":check_multi_head_attention_call", ":grade_multi_head_attention_call",
         [":multi_head_attention", ".keras_layers:ScratchMultiHeadAttention"],
         {"grade_id": "test_multi_head_attention_call"}),
        ("copy_keras_weights", 2, ":check_copy_keras_weights", ":grade_copy_keras_weights",
         [":copy_keras_weights"]),
        imports="import keras\nimport numpy as np\nimport tensorflow as tf\nfrom course_lib.layers import "
                "create_look_ahead_mask, create_padding_mask, positional_encoding, scaled_dot_product_attention\n",
    ),
    # Encoder, Decoder and Transformer are graded with reference layers, so they keep their points.
    *_rows(
        "04_transformer", "tests/test_04_transformer_layers.py",
        ("EncoderLayer", 3, ".layers:check_encoder_layer", ".layers:grade_encoder_layer",
         [".layers:encoder_layer", ".keras_layers:EncoderLayer"]),
        ("Encoder", 2, ".stacks:check_encoder", ".stacks:grade_encoder",
         [".stacks:encoder", ".keras_layers:Encoder"], {"tests": "tests/test_04_transformer_stacks.py"}),
        ("DecoderLayer", 3, ".layers:check_decoder_layer", ".layers:grade_decoder_layer",
         [".layers:decoder_layer", ".keras_layers:DecoderLayer"]),
        ("Decoder", 2, ".stacks:check_decoder", ".stacks:grade_decoder",
         [".stacks:decoder", ".keras_layers:Decoder"], {"tests": "tests/test_04_transformer_stacks.py"}),
        ("Transformer", 2, ".stacks:check_transformer", ".stacks:grade_transformer",
         [".stacks:transformer", ".keras_layers:Transformer"], {"tests": "tests/test_04_transformer_stacks.py"}),
        ("greedy_decode", 2, ".decoding:check_greedy_decode", ".decoding:grade_greedy_decode",
         [".decoding:greedy_decode"], {"tests": "tests/test_04_transformer_decoding.py"}),
        ("beam_search", 3, ".decoding:check_beam_search", ".decoding:grade_beam_search",
         [".decoding:beam_search"], {"tests": "tests/test_04_transformer_decoding.py"}),
        imports="import keras\nimport numpy as np\nimport tensorflow as tf\nfrom course_lib.layers import "
                "create_look_ahead_mask, create_padding_mask, positional_encoding\n"
                "from course_lib.transformer.decoding import toy_predict_next\n"
                "from course_lib.transformer.layers import FullyConnected\n",
    ),
    # BertEncoder is graded with the reference BertEmbedding and load_bert_weights with a reference encoder,
    # so each keeps its points when the other graded parts are wrong.
    *_rows(
        "05_bert", "tests/test_05_bert_encoder.py",
        ("build_bert_inputs", 2, ".inputs:check_build_bert_inputs", ".inputs:grade_build_bert_inputs",
         [".inputs:build_bert_inputs"], {"tests": "tests/test_05_bert_inputs.py"}),
        ("BertEmbedding", 2, ".encoder:check_bert_embedding", ".encoder:grade_bert_embedding",
         [".encoder:bert_embedding", ".keras_layers:BertEmbedding"]),
        ("BertEncoder", 2, ".encoder:check_bert_encoder", ".encoder:grade_bert_encoder",
         [".encoder:bert_encoder", ".keras_layers:BertEncoder"]),
        ("load_bert_weights", 3, ".weights:check_load_bert_weights", ".weights:grade_load_bert_weights",
         [".weights:load_bert_weights"], {"tests": "tests/test_05_bert_weights.py"}),
        ("mask_tokens", 3, ".masking:check_mask_tokens", ".masking:grade_mask_tokens",
         [".masking:mask_tokens"], {"tests": "tests/test_05_bert_masking.py"}),
        imports="import keras\nimport numpy as np\nimport tensorflow as tf\n"
                "from course_lib.bert.encoder import ENCODER_ARGS\nfrom course_lib.layers import EncoderLayer\n"
                "from autograde.reference.bert.keras_layers import gelu_tanh\n"  # the notebook's own, the same
                # the notebook's constants, from the checkpoint's tokenizer rather than the whole model
                "from course_lib.pretrained import SPECIAL_TOKENS, load_tokenizer\n_vocabulary = load_tokenizer()\n"
                "CLS_ID, SEP_ID, PAD_ID, MASK_ID = (_vocabulary.token_to_id(t) for t in ('[CLS]', '[SEP]', '[PAD]', "
                "'[MASK]'))\nVOCAB_SIZE = _vocabulary.get_vocab_size()\n"
                "SPECIAL_IDS = sorted(_vocabulary.token_to_id(t) for t in SPECIAL_TOKENS)\n",
    ),
    # entity_scores and predictions_to_entities are graded with the reference entity_spans.
    *_rows(
        "06_ner", "tests/test_06_ner_evaluation.py",
        ("align_labels_with_tokens", 2, ".alignment:check_align_labels_with_tokens",
         ".alignment:grade_align_labels_with_tokens", [".alignment:align_labels_with_tokens"],
         {"tests": "tests/test_06_ner_alignment.py"}),
        ("build_token_classifier", 2, ".model:check_build_token_classifier", ".model:grade_build_token_classifier",
         [".model:build_token_classifier"], {"tests": "tests/test_06_ner_model.py"}),
        ("masked_token_loss", 2, ".model:check_masked_token_loss", ".model:grade_masked_token_loss",
         [".model:masked_token_loss"], {"tests": "tests/test_06_ner_model.py"}),
        ("entity_spans", 3, ".evaluation:check_entity_spans", ".evaluation:grade_entity_spans",
         [".evaluation:entity_spans"]),
        ("entity_scores", 3, ".evaluation:check_entity_scores", ".evaluation:grade_entity_scores",
         [".evaluation:entity_scores"]),
        ("predictions_to_entities", 3, ".entities:check_predictions_to_entities",
         ".entities:grade_predictions_to_entities", [".entities:predictions_to_entities"],
         {"tests": "tests/test_06_ner_entities.py"}),
        imports="import keras\nimport numpy as np\nimport tensorflow as tf\n"
                "from course_lib.ner import ENTITY_TYPES, LABELS\n",
    ),
    # make_windows is graded with the reference char_span_to_token_span, and best_span on logits the grader draws,
    # so a wrong span function or model builder costs only its own points.
    *_rows(
        "07_qa", "tests/test_07_qa_spans.py",
        ("char_span_to_token_span", 2, ".spans:check_char_span_to_token_span", ".spans:grade_char_span_to_token_span",
         [".spans:char_span_to_token_span"]),
        ("make_windows", 3, ".windows:check_make_windows", ".windows:grade_make_windows", [".windows:make_windows"],
         {"tests": "tests/test_07_qa_windows.py"}),
        ("build_qa_model", 2, ".model:check_build_qa_model", ".model:grade_build_qa_model",
         [".model:build_qa_model"], {"tests": "tests/test_07_qa_model.py"}),
        ("best_span", 3, ".decoding:check_best_span", ".decoding:grade_best_span", [".decoding:best_span"],
         {"tests": "tests/test_07_qa_decoding.py"}),
        ("squad_em_f1", 2, ".metrics:check_squad_em_f1", ".metrics:grade_squad_em_f1", [".metrics:squad_em_f1"],
         {"tests": "tests/test_07_qa_metrics.py"}),
        imports="import keras\nimport numpy as np\n",
    ),
    # Assignment 08 runs on Keras's PyTorch backend; train_step and evaluate are graded with the reference QAModel
    # and loss, so each keeps its points when the learner's module or loss is wrong.
    *_rows(
        "08_qa_pytorch", "tests/test_08_qa_pytorch_model.py",
        ("QAModel", 3, ".model:check_qa_model", ".model:grade_qa_model", [".model:QAModel"],
         {"kernel_setup": "from course_lib.qa_pytorch.setup import setup\nsetup(verbose=False)\n"}),
        ("qa_loss", 2, ".model:check_qa_loss", ".model:grade_qa_loss", [".model:qa_loss"]),
        ("train_step", 3, ".training:check_train_step", ".training:grade_train_step", [".training:train_step"],
         {"tests": "tests/test_08_qa_pytorch_training.py"}),
        ("evaluate", 2, ".training:check_evaluate", ".training:grade_evaluate", [".training:evaluate"],
         {"tests": "tests/test_08_qa_pytorch_training.py"}),
        imports="import numpy as np\nimport torch\nimport torch.nn.functional as F\n",
    ),
]


def stems() -> list[str]:
    return sorted({exercise.stem for exercise in EXERCISES})


def exercises(stem: str) -> list[Exercise]:
    """The rows of one assignment, in notebook order."""
    return [exercise for exercise in EXERCISES if exercise.stem == stem]


def resolve(dotted: str):
    """The object named by `module:attribute`."""
    module, _, attribute = dotted.partition(":")
    return getattr(importlib.import_module(module), attribute)


def module_file(dotted: str) -> str:
    """The repository path of the module in `module:attribute` (a package's `__init__.py` if it is one)."""
    base = REPO_ROOT / dotted.partition(":")[0].replace(".", "/")
    package = base / "__init__.py"
    return (package if package.is_file() else base.with_suffix(".py")).relative_to(REPO_ROOT).as_posix()


def markdown_table() -> str:
    """CONTRIBUTING.md's table: every graded cell and the file of each part that serves it."""
    lines = ["| assignment | exercise (points) | visible check | hidden check | reference | unit tests |",
             "| --- | --- | --- | --- | --- | --- |"]

    def cell(dotted: str) -> str:
        return f"`{module_file(dotted)}` `{dotted.partition(':')[2]}`"

    for exercise in EXERCISES:
        references = "<br>".join(cell(r) for r in exercise.reference)
        lines.append(f"| {exercise.stem} | `{exercise.name}` ({exercise.points}) | {cell(exercise.visible)} | "
                     f"{cell(exercise.hidden)} | {references} | `{exercise.tests}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
