"""Other implementations of assignment 05's exercises (see autograde/variants/__init__.py)."""

from autograde.variants import right, wrong

INPUTS = [
    wrong("build_bert_inputs", "the [SEP] that closes sentence B put in segment 0",
          old="segment_ids += [1] * (len(tokens_b) + 1)", new="segment_ids += [1] * len(tokens_b) + [0]",
          message="the [SEP] that closes B belongs to segment 1, like the tokens of B"),
    wrong("build_bert_inputs", "a tie in length costs A a token instead of B",
          old="len(tokens_a) > len(tokens_b)", new="len(tokens_a) >= len(tokens_b)",
          message="A and B were equally long and the token was taken from A; when A and B do not"),
    wrong("build_bert_inputs", "[CLS] and the first [SEP] from the notebook's constants, not the arguments",
          old="token_ids = [cls_id] + tokens_a + [sep_id]", new="token_ids = [CLS_ID] + tokens_a + [SEP_ID]",
          message="it starts with 101, but cls_id is"),
    wrong("build_bert_inputs", "truncates the caller's sequences in place (no copy: arrays have no pop)",
          old="tokens_a = list(tokens_a)\n    tokens_b = None if tokens_b is None else list(tokens_b)\n    ",
          new="", message="raised ValueError: The truth value of an array"),
    wrong("build_bert_inputs", "arrays converted, but the caller's lists truncated in place",
          old="tokens_a = list(tokens_a)\n    tokens_b = None if tokens_b is None else list(tokens_b)",
          new="tokens_a = tokens_a if isinstance(tokens_a, list) else list(tokens_a)\n"
              "    tokens_b = tokens_b if tokens_b is None or isinstance(tokens_b, list) else list(tokens_b)",
          message="changed its argument tokens_"),
    wrong("build_bert_inputs", "no ValueError when max_len cannot hold the special tokens",
          old="        raise ValueError(", new="        print(",
          message="raised IndexError: pop from empty list; raise a ValueError with a message"),
    wrong("build_bert_inputs", "the padding mask is 0 at [CLS] and [SEP]",
          old="padding_mask = [1] * len(token_ids) + [0] * padding",
          new="padding_mask = [0 if t in (cls_id, sep_id) else 1 for t in token_ids] + [0] * padding",
          message="[CLS] and [SEP] are real tokens, attended to like words: their mask value is 1"),
    wrong("build_bert_inputs", "an empty B taken for one sentence (if tokens_b: instead of is not None)",
          old="if tokens_b is not None:\n        token_ids += tokens_b",
          new="if tokens_b:\n        token_ids += tokens_b",
          message="expected 2: one after A and one after B"),
    right("build_bert_inputs", "NumPy: how much of A and B to keep counted first, then slices and np.full", source=(
        "def build_bert_inputs(tokens_a, tokens_b, max_len, *, cls_id=CLS_ID, sep_id=SEP_ID, pad_id=PAD_ID):\n"
        "    a = np.asarray(tokens_a, dtype=np.int64)\n"
        "    b = None if tokens_b is None else np.asarray(tokens_b, dtype=np.int64)\n"
        "    room = max_len - (2 if b is None else 3)\n"
        "    if room < 0:\n"
        "        raise ValueError('max_len is too small for the special tokens')\n"
        "    keep_a, keep_b = len(a), 0 if b is None else len(b)\n"
        "    while keep_a + keep_b > room:\n"
        "        if b is None or keep_a > keep_b:\n"
        "            keep_a -= 1\n"
        "        else:\n"
        "            keep_b -= 1\n"
        "    pieces = [[cls_id], a[:keep_a], [sep_id]] + ([] if b is None else [b[:keep_b], [sep_id]])\n"
        "    real = np.concatenate([np.asarray(p, dtype=np.int64) for p in pieces])\n"
        "    token_ids = np.full(max_len, pad_id, dtype=np.int32)\n"
        "    token_ids[:len(real)] = real\n"
        "    segment_ids = np.zeros(max_len, dtype=np.int32)\n"
        "    if b is not None:\n"
        "        segment_ids[keep_a + 2:len(real)] = 1\n"
        "    padding_mask = (np.arange(max_len) < len(real)).astype(np.int32)\n"
        "    return token_ids, segment_ids, padding_mask\n")),
    right("build_bert_inputs", "BERT's rule in closed form (the longer cut to fit, else both to half), lists", source=(
        "def build_bert_inputs(tokens_a, tokens_b, max_len, *, cls_id=CLS_ID, sep_id=SEP_ID, pad_id=PAD_ID):\n"
        "    a = [int(t) for t in tokens_a]\n"
        "    b = None if tokens_b is None else [int(t) for t in tokens_b]\n"
        "    room = max_len - (2 if b is None else 3)\n"
        "    if room < 0:\n"
        "        raise ValueError(f'max_len={max_len} cannot hold the special tokens')\n"
        "    if b is None:\n"
        "        a = a[:room]\n"
        "    elif len(a) + len(b) > room:\n"
        "        if 2 * min(len(a), len(b)) <= room:\n"
        "            a, b = (a[:room - len(b)], b) if len(a) > len(b) else (a, b[:room - len(a)])\n"
        "        else:\n"
        "            a, b = a[:room - room // 2], b[:room // 2]\n"
        "    tokens = [cls_id, *a, sep_id] + ([] if b is None else [*b, sep_id])\n"
        "    segments = [0] * (len(a) + 2) + ([] if b is None else [1] * (len(b) + 1))\n"
        "    pad = max_len - len(tokens)\n"
        "    out = (tokens + [pad_id] * pad, segments + [0] * pad, [1] * len(tokens) + [0] * pad)\n"
        "    return tuple(np.array(x, dtype=np.int32) for x in out)\n")),
]

EMBEDDING = [
    wrong("BertEmbedding", "the Transformer's sqrt(hidden_dim) scaling left in BERT's embedding",
          old="x = self.token_embedding(token_ids) + positions",
          new="x = self.token_embedding(token_ids) * tf.sqrt(tf.cast(tf.shape(positions)[-1], tf.float32))"
              " + positions", message="the token embeddings are multiplied by sqrt(hidden_dim): assignment 04 did"),
    wrong("BertEmbedding", "positions looked up with the token ids",
          old="positions = self.position_embedding(tf.range(seq_len))",
          new="positions = self.position_embedding(token_ids)",
          message="the position embeddings are looked up with the token ids; look up the positions"),
    wrong("BertEmbedding", "the segment embeddings left out",
          old=" + positions + self.segment_embedding(segment_ids)", new=" + positions",
          message="the segment embeddings are missing: add self.segment_embedding(segment_ids"),
    wrong("BertEmbedding", "the layer norm applied to the token embeddings alone",
          old="x = self.token_embedding(token_ids) + positions + self.segment_embedding(segment_ids)\n"
              "        return self.dropout(self.layer_norm(x), training=training)",
          new="x = self.layer_norm(self.token_embedding(token_ids)) + positions + self.segment_embedding(segment_ids)\n"
              "        return self.dropout(x, training=training)",
          message="the layer norm is applied to the token embeddings alone; add the three"),
    wrong("BertEmbedding", "dropout never applied",
          old="return self.dropout(self.layer_norm(x), training=training)", new="return self.layer_norm(x)",
          message="is the same with training=True as with training=False: dropout never acts"),
    wrong("BertEmbedding", "dropout hard-coded to training=True",
          old="return self.dropout(self.layer_norm(x), training=training)",
          new="return self.dropout(self.layer_norm(x), training=True)",
          message="changes between two calls with training=False: dropout is active at inference"),
    right("BertEmbedding", "positions gathered from the table's weights, a (batch, seq) grid of positions",
          old="positions = self.position_embedding(tf.range(seq_len))",
          new="grid = tf.broadcast_to(tf.range(seq_len)[tf.newaxis, :], tf.shape(token_ids))\n"
              "        positions = tf.gather(self.position_embedding.embeddings, grid)"),
    right("BertEmbedding", "keras.ops, and training not passed on (Keras passes the outer call's on)",
          old="seq_len = tf.shape(token_ids)[1]\n"
              "        positions = self.position_embedding(tf.range(seq_len))  # (seq, hidden_dim), the same for every "
              "sentence\n"
              "        x = self.token_embedding(token_ids) + positions + self.segment_embedding(segment_ids)\n"
              "        return self.dropout(self.layer_norm(x), training=training)",
          new="positions = self.position_embedding(keras.ops.arange(keras.ops.shape(token_ids)[1]))\n"
              "        x = keras.ops.add(self.token_embedding(token_ids), self.segment_embedding(segment_ids))\n"
              "        return self.dropout(self.layer_norm(x + positions[None, :, :]))"),
]

ENCODER = [
    wrong("BertEncoder", "encoder layers that ignore the padding mask",
          old="x = layer(x, training=training, mask=attention_mask)", new="x = layer(x, training=training)",
          message="the padding mask is not used"),
    wrong("BertEncoder", "the mask expanded on the wrong axis, (batch, seq, 1)",
          old="padding_mask[:, tf.newaxis, :]", new="padding_mask[:, :, tf.newaxis]",
          message="the mask has shape (batch, seq, 1): it blocks padding queries"),
    wrong("BertEncoder", "the layers run in reverse order",
          old="for layer in self.enc_layers:", new="for layer in self.enc_layers[::-1]:",
          message="the layers run in reverse order"),
    wrong("BertEncoder", "every layer given the embeddings instead of the previous layer's output",
          old="x = layer(x, training=training, mask=attention_mask)\n        return x",
          new="out = layer(x, training=training, mask=attention_mask)\n        return out",
          message="only the last layer counts"),
    wrong("BertEncoder", "the mask inverted (1 for padding)",
          old="attention_mask = padding_mask[:, tf.newaxis, :]",
          new="attention_mask = 1 - padding_mask[:, tf.newaxis, :]", message="has wrong values"),
    wrong("BertEncoder", "training=False everywhere: dropout never acts",
          old="x = self.embedding(token_ids, segment_ids, training=training)",
          new="training = False\n        x = self.embedding(token_ids, segment_ids, training=training)",
          message="is the same with training=True as with training=False: dropout never acts"),
    wrong("BertEncoder", "training=True hard-coded in the layers",
          old="x = layer(x, training=training, mask=attention_mask)",
          new="x = layer(x, training=True, mask=attention_mask)", message="dropout is active at inference"),
    right("BertEncoder", "a float mask made with tf.expand_dims, training not passed on (Keras passes it)",
          old="x = self.embedding(token_ids, segment_ids, training=training)\n"
              "        attention_mask = padding_mask[:, tf.newaxis, :]  # (batch, 1, seq): the same keys for every "
              "query\n"
              "        for layer in self.enc_layers:\n"
              "            x = layer(x, training=training, mask=attention_mask)",
          new="x = self.embedding(token_ids, segment_ids)\n"
              "        attention_mask = tf.expand_dims(tf.cast(padding_mask, tf.float32), axis=1)\n"
              "        for layer in self.enc_layers:\n"
              "            x = layer(x, mask=attention_mask)"),
    right("BertEncoder", "a full (batch, seq, seq) mask, the layers by index",
          old="attention_mask = padding_mask[:, tf.newaxis, :]  # (batch, 1, seq): the same keys for every query\n"
              "        for layer in self.enc_layers:\n"
              "            x = layer(x, training=training, mask=attention_mask)",
          new="keys = tf.cast(padding_mask, tf.float32)[:, tf.newaxis, :]\n"
              "        attention_mask = tf.ones_like(keys)[:, 0, :, tf.newaxis] * keys\n"
              "        for i in range(len(self.enc_layers)):\n"
              "            x = self.enc_layers[i](x, training=training, mask=attention_mask)"),
]

LOADER = [
    wrong("load_bert_weights", "layernorm1 loaded from the feed-forward layer norm",
          old="copy(layer.layernorm1, pretrained._self_attention_layer_norm)",
          new="copy(layer.layernorm1, pretrained._feedforward_layer_norm)",
          message="encoder.enc_layers[0].layernorm1.gamma has the values of"),
    wrong("load_bert_weights", "the segment embeddings never copied",
          old="copy(encoder.embedding.segment_embedding, backbone.segment_embedding)\n    ", new="",
          message="encoder.embedding.segment_embedding.embeddings still holds the zeros the check"),
    wrong("load_bert_weights", "the two dense layers of the feed-forward block swapped (a shape error)",
          old="copy(layer.ffn.layers[0], pretrained._feedforward_intermediate_dense)\n"
              "        copy(layer.ffn.layers[1], pretrained._feedforward_output_dense)",
          new="copy(layer.ffn.layers[0], pretrained._feedforward_output_dense)\n"
              "        copy(layer.ffn.layers[1], pretrained._feedforward_intermediate_dense)",
          message="A shape mismatch means a weight went to the wrong place"),
    wrong("load_bert_weights", "the layers paired in reverse order",
          old="zip(encoder.enc_layers, backbone.transformer_layers, strict=True)",
          new="zip(encoder.enc_layers, backbone.transformer_layers[::-1], strict=True)",
          message="enc_layers[0] takes the weights of transformer_layers[0]"),
    wrong("load_bert_weights", "six layers hard-coded (the shipped checkpoint's)",
          old="for layer, pretrained in zip(encoder.enc_layers, backbone.transformer_layers, strict=True):",
          new="for i in range(6):\n        layer, pretrained = encoder.enc_layers[i], backbone.transformer_layers[i]",
          message="never hard-code them"),
    wrong("load_bert_weights", "the embedding layer norm copied the wrong way, into the backbone",
          old="copy(encoder.embedding.layer_norm, backbone.embeddings_layer_norm)",
          new="copy(backbone.embeddings_layer_norm, encoder.embedding.layer_norm)",
          message="load_bert_weights changed the backbone: backbone.embeddings_layer_norm.gamma"),
    right("load_bert_weights", "variable by variable with assign", source=(
        "def load_bert_weights(encoder, backbone):\n"
        "    embedding = encoder.embedding\n"
        "    embedding.token_embedding.embeddings.assign(backbone.token_embedding.embeddings)\n"
        "    embedding.position_embedding.embeddings.assign(backbone.position_embedding.position_embeddings)\n"
        "    embedding.segment_embedding.embeddings.assign(backbone.segment_embedding.embeddings)\n"
        "    embedding.layer_norm.gamma.assign(backbone.embeddings_layer_norm.gamma)\n"
        "    embedding.layer_norm.beta.assign(backbone.embeddings_layer_norm.beta)\n"
        "    for i, layer in enumerate(encoder.enc_layers):\n"
        "        theirs = backbone.transformer_layers[i]\n"
        "        pairs = [(layer.mha, theirs._self_attention_layer),\n"
        "                 (layer.layernorm1, theirs._self_attention_layer_norm),\n"
        "                 (layer.ffn.layers[0], theirs._feedforward_intermediate_dense),\n"
        "                 (layer.ffn.layers[1], theirs._feedforward_output_dense),\n"
        "                 (layer.layernorm2, theirs._feedforward_layer_norm)]\n"
        "        for mine, source in pairs:\n"
        "            for target, value in zip(mine.weights, source.weights, strict=True):\n"
        "                target.assign(value)\n")),
    right("load_bert_weights", "a table of attribute names, NumPy copies of the arrays", source=(
        "def load_bert_weights(encoder, backbone):\n"
        "    def copy(mine, theirs):\n"
        "        mine.set_weights([np.array(w, dtype=np.float32) for w in theirs.get_weights()])\n"
        "\n"
        "    tables = ['token_embedding', 'position_embedding', 'segment_embedding']\n"
        "    for mine, theirs in [*zip(tables, tables), ('layer_norm', 'embeddings_layer_norm')]:\n"
        "        copy(getattr(encoder.embedding, mine), getattr(backbone, theirs))\n"
        "    names = [('mha', '_self_attention_layer'), ('layernorm1', '_self_attention_layer_norm'),\n"
        "             ('layernorm2', '_feedforward_layer_norm')]\n"
        "    for i in range(len(backbone.transformer_layers)):\n"
        "        layer, pretrained = encoder.enc_layers[i], backbone.transformer_layers[i]\n"
        "        for mine, theirs in names:\n"
        "            copy(getattr(layer, mine), getattr(pretrained, theirs))\n"
        "        copy(layer.ffn.layers[0], pretrained._feedforward_intermediate_dense)\n"
        "        copy(layer.ffn.layers[1], pretrained._feedforward_output_dense)\n")),
]

MASKING = [
    wrong("mask_tokens", "random replacements drawn from the whole vocabulary, special ids included",
          old="choices = np.setdiff1d(np.arange(vocab_size), list(special_ids))",
          new="choices = np.arange(vocab_size)",
          message="draw random ids from the non-special ids of range(vocab_size) only"),
    wrong("mask_tokens", "NumPy's global generator for the selection",
          old="selected = ~special & (rng.random(token_ids.shape) < select_rate)",
          new="selected = ~special & (np.random.random(token_ids.shape) < select_rate)",
          message="draw every random number from the rng argument (rng.random, rng.integers"),
    wrong("mask_tokens", "every selected token becomes [MASK]",
          old="to_mask = selected & (u < mask_rate)", new="to_mask = selected", message="unchanged 0.00%"),
    wrong("mask_tokens", "special tokens may be selected",
          old="selected = ~special & (rng.random(token_ids.shape) < select_rate)",
          new="selected = rng.random(token_ids.shape) < select_rate",
          message="only tokens whose id is not in special_ids may be chosen, select_rate of the"),
    wrong("mask_tokens", "the random replacement drawn only among the tokens not masked (a second draw)",
          old="to_random = selected & (u >= mask_rate) & (u < mask_rate + random_rate)",
          new="to_random = selected & ~to_mask & (rng.random(token_ids.shape) < random_rate)",
          message="random replacements are too rare: random_rate applies to all selected tokens"),
    wrong("mask_tokens", "the caller's int32 ids changed in place (np.asarray makes no copy)",
          old="masked_ids = token_ids.astype(np.int32)", new="masked_ids = np.asarray(token_ids, dtype=np.int32)",
          message="mask_tokens changed token_ids in place: work on a copy (np.array(token_ids) or",
          visible_gap="the visible check does not see int32 ids changed in place"),
    right("mask_tokens", "Google's way: round(select_rate * n) tokens per sequence, one loop", source=(
        "def mask_tokens(token_ids, rng, *, mask_id=MASK_ID, vocab_size=VOCAB_SIZE, special_ids=SPECIAL_IDS,\n"
        "                select_rate=0.15, mask_rate=0.8, random_rate=0.1):\n"
        "    ids = np.array(token_ids)\n"
        "    rows = ids.reshape(-1, ids.shape[-1])\n"
        "    masked, selected = rows.astype(np.int32), np.zeros(rows.shape, dtype=bool)\n"
        "    special = {int(i) for i in special_ids}\n"
        "    allowed = np.array([i for i in range(vocab_size) if i not in special])\n"
        "    for r, row in enumerate(rows):\n"
        "        candidates = [i for i, t in enumerate(row) if int(t) not in special]\n"
        "        for i in rng.permutation(candidates)[:int(round(select_rate * len(candidates)))]:\n"
        "            selected[r, i] = True\n"
        "            u = rng.random()\n"
        "            if u < mask_rate:\n"
        "                masked[r, i] = mask_id\n"
        "            elif u < mask_rate + random_rate:\n"
        "                masked[r, i] = allowed[rng.integers(len(allowed))]\n"
        "    return masked.reshape(ids.shape), selected.reshape(ids.shape)\n")),
    right("mask_tokens", "one draw of the outcome per token with rng.choice, random ids by rng.integers", source=(
        "def mask_tokens(token_ids, rng, *, mask_id=MASK_ID, vocab_size=VOCAB_SIZE, special_ids=SPECIAL_IDS,\n"
        "                select_rate=0.15, mask_rate=0.8, random_rate=0.1):\n"
        "    ids = np.array(token_ids, dtype=np.int64)\n"
        "    selected = np.isin(ids, list(special_ids), invert=True) & (rng.random(ids.shape) < select_rate)\n"
        "    keep = max(0.0, 1.0 - mask_rate - random_rate)\n"
        "    p = np.array([mask_rate, random_rate, keep])\n"
        "    outcome = rng.choice(3, size=ids.shape, p=p / p.sum())  # 0: [MASK], 1: a random id, 2: unchanged\n"
        "    allowed = np.setdiff1d(np.arange(vocab_size), np.array(list(special_ids)))\n"
        "    random_ids = allowed[rng.integers(0, len(allowed), size=ids.shape)]\n"
        "    masked = np.where(selected & (outcome == 1), random_ids, ids)\n"
        "    masked = np.where(selected & (outcome == 0), mask_id, masked)\n"
        "    return masked.astype(np.int32), selected\n")),
]

VARIANTS = INPUTS + EMBEDDING + ENCODER + LOADER + MASKING
