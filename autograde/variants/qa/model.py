"""Other implementations of build_qa_model (assignment 07, see autograde/variants/__init__.py), as whole cells:
each brings its imports, so it runs in the notebook's namespace whatever the set-up cell imported."""

from autograde.mistakes.qa import model as mistakes
from autograde.variants import named, right, wrong


def _cell(*body: str, head: str = "", returned: str = "[start_logits, end_logits]") -> str:
    """A functional build_qa_model: the backbone on its inputs, then `body` lines that end with start_logits and
    end_logits; `head` lines come first (freezing the backbone, say)."""
    lines = ["import keras", "", "", "def build_qa_model(backbone, dropout=0.1):", *(f"    {line}" for line in head),
             "    inputs = backbone.input", *(f"    {line}" for line in body),
             f"    return keras.Model(inputs, {returned})", ""]
    return "\n".join(lines)


SEQUENCE = 'sequence = backbone(inputs)["sequence_output"]'
DROPPED = "x = keras.layers.Dropout(dropout)(sequence)"
UNSTACK = "start_logits, end_logits = keras.ops.unstack(logits, num=2, axis=-1)"
STANDARD = (SEQUENCE, DROPPED, "logits = keras.layers.Dense(2)(x)", UNSTACK)

SUBCLASSED = (
    "import keras\n"
    "\n"
    "\n"
    "def build_qa_model(backbone, dropout=0.1):\n"
    "    class SpanModel(keras.Model):\n"
    "        def __init__(self):\n"
    "            super().__init__()\n"
    "            self.encoder = backbone\n"
    "            self.drop = keras.layers.Dropout(dropout)\n"
    "            self.span = keras.layers.Dense(2)\n"
    "\n"
    "        def call(self, inputs, training=False):\n"
    "            vectors = self.encoder(inputs, training=training)['sequence_output']\n"
    "            logits = self.span(self.drop(vectors, training=TRAINING))\n"
    "            return [logits[..., 0], logits[..., 1]]\n"
    "\n"
    "    return SpanModel()\n")

VARIANTS = [
    right("build_qa_model", "Dense(2), then keras.ops.split and squeeze",
          source=_cell(SEQUENCE, DROPPED, "logits = keras.layers.Dense(2, name='span_logits')(x)",
                       "start, end = keras.ops.split(logits, 2, axis=-1)",
                       "start_logits = keras.ops.squeeze(start, axis=-1)",
                       "end_logits = keras.ops.squeeze(end, axis=-1)")),
    right("build_qa_model", "two Dense(1) heads, one per end", source=_cell(
        SEQUENCE, DROPPED, "start_logits = keras.ops.squeeze(keras.layers.Dense(1, name='start')(x), axis=-1)",
        "end_logits = keras.ops.squeeze(keras.layers.Dense(1, name='end')(x), axis=-1)")),
    right("build_qa_model", "two Dense(1) heads, the end head created first", source=_cell(
        SEQUENCE, DROPPED, "end_head, start_head = keras.layers.Dense(1), keras.layers.Dense(1)",
        "end_logits = keras.ops.squeeze(end_head(x), axis=-1)",
        "start_logits = keras.ops.squeeze(start_head(x), axis=-1)")),
    right("build_qa_model", "a subclassed keras.Model slicing the last axis",
          source=SUBCLASSED.replace("TRAINING", "training")),
    right("build_qa_model", "an EinsumDense head with a bias", source=_cell(
        SEQUENCE, DROPPED, "logits = keras.layers.EinsumDense('bsh,hk->bsk', output_shape=(None, 2), "
        "bias_axes='k')(x)", UNSTACK)),
    right("build_qa_model", "a functional graph on the backbone's own outputs (its pooler left out)", source=(
        "import keras\n\n\ndef build_qa_model(backbone, dropout=0.1):\n"
        "    x = keras.layers.Dropout(dropout)(backbone.output['sequence_output'])\n"
        "    logits = keras.layers.Dense(2)(x)\n"
        "    return keras.Model(backbone.input, [logits[..., 0], logits[..., 1]])\n")),
    wrong("build_qa_model", "a subclassed model whose call defaults to training=True",
          source=SUBCLASSED.replace("training=False", "training=True").replace("TRAINING", "training"),
          message="dropout acts by default"),
    wrong("build_qa_model", "the sequence output cut from the gradient (stop_gradient)", source=_cell(
        SEQUENCE, "x = keras.layers.Dropout(dropout)(keras.ops.stop_gradient(sequence))", *STANDARD[2:]),
          message="sends no gradient to"),
    wrong("build_qa_model", "the lower layers frozen", source=_cell(
        *STANDARD, head=("backbone.get_layer('transformer_layer_0').trainable = False",)),
          message="would not be trained"),
    wrong("build_qa_model", "a functional graph on the backbone's outputs, detached", source=(
        "import keras\n\n\ndef build_qa_model(backbone, dropout=0.1):\n"
        "    x = keras.ops.stop_gradient(backbone.output['sequence_output'])\n"
        "    logits = keras.layers.Dense(2)(keras.layers.Dropout(dropout)(x))\n"
        "    return keras.Model(backbone.input, [logits[..., 0], logits[..., 1]])\n"), message="sends no gradient to"),
    wrong("build_qa_model", "the head on pooled_output", source=_cell(
        'sequence = backbone(inputs)["pooled_output"]', DROPPED, "logits = keras.layers.Dense(2)(x)", UNSTACK),
          message=named(mistakes.SHAPES, "pooled_output")),
    wrong("build_qa_model", "the head on the [CLS] vector, one pair of logits per question", source=_cell(
        SEQUENCE, "x = keras.layers.Dropout(dropout)(sequence[:, 0, :])", "logits = keras.layers.Dense(2)(x)",
        returned="logits"), message=named(mistakes.SHAPES, "pooled_output_not_split")),
    wrong("build_qa_model", "start and end swapped", source=_cell(*STANDARD, returned="[end_logits, start_logits]"),
          message=named(mistakes.LOGITS, "swapped")),
    wrong("build_qa_model", "one output (batch, seq, 2), not split", source=_cell(
        SEQUENCE, DROPPED, "logits = keras.layers.Dense(2)(x)", returned="logits"),
          message=named(mistakes.SHAPES, "one_output")),
    wrong("build_qa_model", "keras.ops.split without squeeze", source=_cell(
        SEQUENCE, DROPPED, "logits = keras.layers.Dense(2)(x)",
        "start_logits, end_logits = keras.ops.split(logits, 2, axis=-1)"),
          message=named(mistakes.SHAPES, "not_squeezed")),
    wrong("build_qa_model", "a softmax activation on the Dense(2)", source=_cell(
        SEQUENCE, DROPPED, "logits = keras.layers.Dense(2, activation='softmax')(x)", UNSTACK),
          message=named(mistakes.LOGITS, "softmax_over_pair")),
    wrong("build_qa_model", "a softmax over the tokens on each output", source=_cell(
        *STANDARD, "start_logits = keras.ops.softmax(start_logits, axis=-1)",
        "end_logits = keras.ops.softmax(end_logits, axis=-1)"), message=named(mistakes.LOGITS, "softmax_over_tokens")),
    wrong("build_qa_model", "Dense(1): one logit used as start and end", source=_cell(
        SEQUENCE, DROPPED, "start_logits = end_logits = keras.ops.squeeze(keras.layers.Dense(1)(x), axis=-1)"),
          message="the head has one unit, Dense(1)"),
    wrong("build_qa_model", "Dense(3), its first two columns used", source=_cell(
        SEQUENCE, DROPPED, "logits = keras.layers.Dense(3)(x)",
        "start_logits, end_logits = logits[..., 0], logits[..., 1]"), message="the head has 3 units"),
    wrong("build_qa_model", "the padding mask replaced by ones", source=_cell(
        'sequence = backbone({**inputs, "padding_mask": keras.ops.ones_like(inputs["token_ids"])})'
        '["sequence_output"]', *STANDARD[1:]), message=named(mistakes.LOGITS, "no_padding_mask")),
    wrong("build_qa_model", "the backbone frozen", source=_cell(*STANDARD, head=("backbone.trainable = False",)),
          message="do not freeze it"),
    wrong("build_qa_model", "no dropout", source=_cell(SEQUENCE, "x = sequence", *STANDARD[2:]),
          message="no dropout acts"),
    wrong("build_qa_model", "the dropout rate hard-coded to 0.1", source=_cell(
        SEQUENCE, "x = keras.layers.Dropout(0.1)(sequence)", *STANDARD[2:]), message="use the argument `dropout`"),
    wrong("build_qa_model", "dropout applied to the logits", source=_cell(
        SEQUENCE, "logits = keras.layers.Dropout(dropout)(keras.layers.Dense(2)(sequence))", UNSTACK),
          message="the dropout is applied to the logits"),
    wrong("build_qa_model", "a subclassed model whose dropout has training=True, at inference too",
          source=SUBCLASSED.replace("TRAINING", "True"), message="dropout is active at inference"),
]
