"""Other implementations of the model side of assignment 06 (see autograde/variants/__init__.py): the
token-classification head and the masked loss."""

from autograde.variants import right, wrong


def _subclassed(default: str = "False", dropout_training: str = "training") -> str:
    """A subclassed token classifier whose call defaults to training=`default` and gives its Dropout
    training=`dropout_training`."""
    return ("def build_token_classifier(backbone, num_labels, dropout=0.1):\n"
            "    class TokenClassifier(keras.Model):\n"
            "        def __init__(self):\n"
            "            super().__init__()\n"
            "            self.encoder = backbone\n"
            "            self.drop = keras.layers.Dropout(dropout)\n"
            "            self.classify = keras.layers.Dense(num_labels)\n"
            "\n"
            f"        def call(self, inputs, training={default}):\n"
            "            vectors = self.encoder(inputs, training=training)['sequence_output']\n"
            f"            return self.classify(self.drop(vectors, training={dropout_training}))\n"
            "\n"
            "    return TokenClassifier()\n")


CLASSIFIER = [
    wrong("build_token_classifier", "the head on pooled_output (the [CLS] path): one vector per sentence",
          old='backbone(inputs)["sequence_output"]', new='backbone(inputs)["pooled_output"]',
          message="the head reads pooled_output"),
    wrong("build_token_classifier", "a softmax activation on the head",
          old='keras.layers.Dense(num_labels, name="token_logits")',
          new='keras.layers.Dense(num_labels, activation="softmax", name="token_logits")',
          message="the head has a softmax activation"),
    wrong("build_token_classifier", "9 labels hard-coded", old="keras.layers.Dense(num_labels,",
          new="keras.layers.Dense(9,", message="not 9 or len(LABELS)"),
    wrong("build_token_classifier", "num_labels - 1 units", old="keras.layers.Dense(num_labels,",
          new="keras.layers.Dense(num_labels - 1,", message="one logit too few"),
    wrong("build_token_classifier", "the backbone frozen", old="    inputs = backbone.input",
          new="    backbone.trainable = False\n    inputs = backbone.input", message="do not freeze it"),
    wrong("build_token_classifier", "the padding mask replaced by ones",
          old='sequence_output = backbone(inputs)["sequence_output"]',
          new='sequence_output = backbone({**inputs, "padding_mask": keras.ops.ones_like(inputs["token_ids"])})'
              '["sequence_output"]', message="the padding_mask does not reach it"),
    wrong("build_token_classifier", "no dropout", old="x = keras.layers.Dropout(dropout)(sequence_output)",
          new="x = sequence_output", message="no dropout acts"),
    wrong("build_token_classifier", "the dropout rate hard-coded to 0.1", old="keras.layers.Dropout(dropout)",
          new="keras.layers.Dropout(0.1)", message="use the argument `dropout`"),
    wrong("build_token_classifier", "dropout applied to the logits",
          old='x = keras.layers.Dropout(dropout)(sequence_output)\n'
              '    logits = keras.layers.Dense(num_labels, name="token_logits")(x)',
          new='x = keras.layers.Dense(num_labels, name="token_logits")(sequence_output)\n'
              '    logits = keras.layers.Dropout(dropout)(x)', message="the dropout is applied to the logits"),
    wrong("build_token_classifier", "a subclassed model whose dropout has training=True, at inference too",
          source=_subclassed(dropout_training="True"), message="dropout is active at inference"),
    right("build_token_classifier", "inputs made with keras.Input, the head a Sequential of Dropout and Dense", source=(
        "def build_token_classifier(backbone, num_labels, dropout=0.1):\n"
        "    inputs = {name: keras.Input(shape=(None,), dtype='int32', name=name)\n"
        "              for name in ('token_ids', 'segment_ids', 'padding_mask')}\n"
        "    head = keras.Sequential([keras.layers.Dropout(dropout), keras.layers.Dense(num_labels)])\n"
        "    return keras.Model(inputs, head(backbone(inputs)['sequence_output']))\n")),
    right("build_token_classifier", "a subclassed keras.Model", source=_subclassed()),
    wrong("build_token_classifier", "a subclassed model whose call defaults to training=True",
          source=_subclassed(default="True"), message="dropout acts by default"),
    right("build_token_classifier", "the unused pooler frozen", old="    inputs = backbone.input",
          new="    backbone.get_layer('pooled_dense').trainable = False\n    inputs = backbone.input"),
    wrong("build_token_classifier", "the sequence output cut from the gradient (stop_gradient)",
          old="x = keras.layers.Dropout(dropout)(sequence_output)",
          new="x = keras.layers.Dropout(dropout)(keras.ops.stop_gradient(sequence_output))",
          message="sends no gradient to"),
    wrong("build_token_classifier", "the embeddings frozen", old="    inputs = backbone.input",
          new="    for name in ('token_embedding', 'position_embedding', 'segment_embedding'):\n"
              "        backbone.get_layer(name).trainable = False\n    inputs = backbone.input",
          message="would not be trained"),
    wrong("build_token_classifier", "a functional graph on the backbone's outputs, detached", source=(
        "def build_token_classifier(backbone, num_labels, dropout=0.1):\n"
        "    x = keras.ops.stop_gradient(backbone.output['sequence_output'])\n"
        "    logits = keras.layers.Dense(num_labels)(keras.layers.Dropout(dropout)(x))\n"
        "    return keras.Model(backbone.input, logits)\n"), message="sends no gradient to"),
    right("build_token_classifier", "an EinsumDense head with a bias",
          old='keras.layers.Dense(num_labels, name="token_logits")',
          new='keras.layers.EinsumDense("bsh,hk->bsk", output_shape=(None, num_labels), bias_axes="k")'),
]

LOSS = [
    wrong("masked_token_loss", "every position counted, -100 read as class 0",
          old="mask = tf.cast(tf.not_equal(labels, -100), tf.float32)",
          new="mask = tf.ones_like(tf.cast(labels, tf.float32))", message="as if their label were 0"),
    wrong("masked_token_loss", "divided by batch * seq", old="tf.reduce_sum(mask))",
          new="tf.cast(tf.size(labels), tf.float32))", message="divided by batch * seq"),
    wrong("masked_token_loss", "the sum, not the mean",
          old="return tf.math.divide_no_nan(tf.reduce_sum(losses * mask), tf.reduce_sum(mask))",
          new="return tf.reduce_sum(losses * mask)", message="this is the sum of the losses"),
    wrong("masked_token_loss", "the mean of per-sentence means",
          old="return tf.math.divide_no_nan(tf.reduce_sum(losses * mask), tf.reduce_sum(mask))",
          new="return tf.reduce_mean(tf.math.divide_no_nan(tf.reduce_sum(losses * mask, axis=1), "
              "tf.reduce_sum(mask, axis=1)))", message="the mean over sentences of each sentence's mean"),
    wrong("masked_token_loss", "softmax before a loss that takes logits", old="logits=logits)",
          new="logits=tf.nn.softmax(logits))", message="the softmax is applied twice"),
    wrong("masked_token_loss", "Keras's loss with its default from_logits=False",
          old="losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=safe_labels, logits=logits)",
          new="losses = keras.losses.sparse_categorical_crossentropy(safe_labels, logits)",
          message="the logits are read as probabilities"),
    wrong("masked_token_loss", "NaN when no position is labelled",
          old="return tf.math.divide_no_nan(tf.reduce_sum(losses * mask), tf.reduce_sum(mask))",
          new="return tf.reduce_sum(losses * mask) / tf.reduce_sum(mask)", message="0 / 0: return 0"),
    wrong("masked_token_loss", "float labels never cast (Keras passes float32)",
          old="labels = tf.cast(labels, tf.int32)  # Keras hands a loss its labels as float32\n    ", new="",
          message="with float32 labels, as Keras passes them"),
    wrong("masked_token_loss", "NumPy inside the loss (fails when Keras traces it)",
          old="labels = tf.cast(labels, tf.int32)", new="labels = np.asarray(labels).astype(np.int32)",
          message="when called as Keras calls a loss"),
    right("masked_token_loss", "Keras's SparseCategoricalCrossentropy with ignore_class=-100", source=(
        "def masked_token_loss(labels, logits):\n"
        "    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100)\n"
        "    return loss(labels, logits)\n")),
    right("masked_token_loss", "tf.boolean_mask, then a mean guarded against an empty batch", source=(
        "def masked_token_loss(labels, logits):\n"
        "    labels = tf.reshape(tf.cast(labels, tf.int32), [-1])\n"
        "    logits = tf.reshape(logits, [-1, tf.shape(logits)[-1]])\n"
        "    keep = labels != -100\n"
        "    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.boolean_mask(labels, keep),\n"
        "                                                            logits=tf.boolean_mask(logits, keep))\n"
        "    return tf.reduce_sum(losses) / tf.maximum(tf.cast(tf.size(losses), tf.float32), 1.0)\n")),
    right("masked_token_loss", "keras.ops: log_softmax and one_hot", source=(
        "def masked_token_loss(labels, logits):\n"
        "    labels = keras.ops.cast(labels, 'int32')\n"
        "    mask = keras.ops.cast(keras.ops.not_equal(labels, -100), 'float32')\n"
        "    log_p = keras.ops.log_softmax(logits, axis=-1)\n"
        "    one_hot = keras.ops.one_hot(keras.ops.maximum(labels, 0), keras.ops.shape(logits)[-1])\n"
        "    picked = keras.ops.sum(one_hot * log_p, axis=-1)\n"
        "    return -keras.ops.sum(picked * mask) / keras.ops.maximum(keras.ops.sum(mask), 1.0)\n")),
]

VARIANTS = CLASSIFIER + LOSS
