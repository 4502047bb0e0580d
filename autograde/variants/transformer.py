"""Other implementations of assignment 04's layers and decoders (see autograde/variants/__init__.py).

The Keras layers' variants change only `call` (the template's __init__ is given); their training-mode mistakes
are caught by autograde/checks/transformer/training.py. Leaving `training` out of a sublayer's call is right:
Keras passes the outer call's flag on.
"""

from autograde.variants import right, wrong

ENCODER_LAYER_BODY = """\
        attention = self.mha(x, x, x, attention_mask=mask, training=training)  # (batch, seq, embedding_dim)
        out1 = self.layernorm1(x + attention)
        ffn_output = self.dropout_ffn(self.ffn(out1), training=training)
        return self.layernorm2(out1 + ffn_output)"""


def _encoder_layer(body: str) -> dict:
    return {"old": ENCODER_LAYER_BODY, "new": body}


ENCODER_LAYER = [
    wrong("EncoderLayer", "no residual around the feed-forward block",
          old="return self.layernorm2(out1 + ffn_output)", new="return self.layernorm2(ffn_output)",
          message="the residual connection around the feed-forward block is missing: layernorm2(h"),
    wrong("EncoderLayer", "pre-norm (norm before each sublayer, residual outside)", **_encoder_layer(
        "        normed = self.layernorm1(x)\n"
        "        h = x + self.mha(normed, normed, normed, attention_mask=mask, training=training)\n"
        "        return h + self.dropout_ffn(self.ffn(self.layernorm2(h)), training=training)"),
          message="it looks pre-norm (x + Sublayer(LayerNorm(x))); this Transformer is post-norm"),
    wrong("EncoderLayer", "mask passed positionally (Keras 3 reads it as query_mask)",
          old="self.mha(x, x, x, attention_mask=mask, training=training)",
          new="self.mha(x, x, x, mask, training=training)",
          message="the mask is not used: pass it to the self-attention by keyword, self.mha(x, x"),
    wrong("EncoderLayer", "dropout_ffn never applied",
          old="self.dropout_ffn(self.ffn(out1), training=training)", new="self.ffn(out1)",
          visible_gap="the visible check runs the layer at inference only",
          message="self.dropout_ffn never acts in training: apply it to the feed-forward block's"),
    wrong("EncoderLayer", "dropout_ffn hard-coded training=True",
          old="self.dropout_ffn(self.ffn(out1), training=training)",
          new="self.dropout_ffn(self.ffn(out1), training=True)",
          message="changes between two calls with training=False: dropout is active at inference"),
    wrong("EncoderLayer", "attention called with training=False (its dropout never acts)",
          old="attention_mask=mask, training=training)", new="attention_mask=mask, training=False)",
          visible_gap="the visible check runs the layer at inference only",
          message="the self-attention's dropout (set in __init__) never acts in training: call"),
    wrong("EncoderLayer", "training ignored: every sublayer called with training=False", **_encoder_layer(
        "        attention = self.mha(x, x, x, attention_mask=mask, training=False)\n"
        "        out1 = self.layernorm1(x + attention)\n"
        "        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1), training=False))"),
          visible_gap="the visible check runs the layer at inference only", message="no dropout acts in training"),
    wrong("EncoderLayer", "dropout applied to the layer's output, after the last norm", **_encoder_layer(
        "        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask, training=training))\n"
        "        return self.dropout_ffn(self.layernorm2(out1 + self.ffn(out1)), training=training)"),
          visible_gap="the visible check runs the layer at inference only",
          message="a dropout is applied to the layer's result"),
    right("EncoderLayer", "no explicit training= (Keras passes the call's flag on to the sublayers)",
          **_encoder_layer(
              "        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask))\n"
              "        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1)))")),
    right("EncoderLayer", "keyword query/value (key defaults to value), boolean mask, tf.add", **_encoder_layer(
        "        bool_mask = None if mask is None else tf.cast(mask, tf.bool)\n"
        "        attention = self.mha(query=x, value=x, attention_mask=bool_mask, training=training)\n"
        "        out1 = self.layernorm1(tf.add(x, attention))\n"
        "        ffn_output = self.ffn(out1)\n"
        "        ffn_output = self.dropout_ffn(ffn_output, training=training)\n"
        "        return self.layernorm2(tf.add(out1, ffn_output))")),
]

DECODER_LAYER_BODY = """\
        self_attention, self_weights = self.mha1(x, x, x, attention_mask=look_ahead_mask,
                                                 return_attention_scores=True, training=training)
        out1 = self.layernorm1(x + self_attention)
        cross_attention, cross_weights = self.mha2(out1, enc_output, enc_output, attention_mask=padding_mask,
                                                   return_attention_scores=True, training=training)
        out2 = self.layernorm2(out1 + cross_attention)
        ffn_output = self.dropout_ffn(self.ffn(out2), training=training)
        out3 = self.layernorm3(out2 + ffn_output)
        return out3, self_weights, cross_weights"""


def _decoder_layer(body: str) -> dict:
    return {"old": DECODER_LAYER_BODY, "new": body}


DECODER_LAYER = [
    wrong("DecoderLayer", "cross-attention ignores the padding mask",
          old="attention_mask=padding_mask,", new="attention_mask=None,",
          message="in Keras 3 the fourth positional argument of MultiHeadAttention is query_mask"),
    wrong("DecoderLayer", "masks swapped between the two attentions", **_decoder_layer(
        "        a1, w1 = self.mha1(x, x, x, attention_mask=padding_mask, return_attention_scores=True,\n"
        "                           training=training)\n"
        "        out1 = self.layernorm1(x + a1)\n"
        "        a2, w2 = self.mha2(out1, enc_output, enc_output, attention_mask=look_ahead_mask,\n"
        "                           return_attention_scores=True, training=training)\n"
        "        out2 = self.layernorm2(out1 + a2)\n"
        "        return self.layernorm3(out2 + self.dropout_ffn(self.ffn(out2), training=training)), w1, w2"),
          message="s to the self-attention mha1"),
    wrong("DecoderLayer", "cross-attention's query is x instead of out1",
          old="self.mha2(out1, enc_output, enc_output,", new="self.mha2(x, enc_output, enc_output,",
          message="the cross-attention's query is x; it must be the first block's output"),
    wrong("DecoderLayer", "attention weights returned in the wrong order",
          old="return out3, self_weights, cross_weights", new="return out3, cross_weights, self_weights",
          message="the attention weights are returned in the wrong order",
          visible_message="self-attention weights (mha1, with look_ahead_mask) has shape"),
    wrong("DecoderLayer", "dropout_ffn never applied",
          old="self.dropout_ffn(self.ffn(out2), training=training)", new="self.ffn(out2)",
          visible_gap="the visible check runs the layer at inference only",
          message="self.dropout_ffn never acts in training: apply it to the feed-forward block's"),
    wrong("DecoderLayer", "cross-attention called with training=False (its dropout never acts)",
          old="return_attention_scores=True, training=training)\n        out2",
          new="return_attention_scores=True, training=False)\n        out2",
          visible_gap="the visible check runs the layer at inference only",
          message="the cross-attention's dropout (set in __init__) never acts in training: call"),
    wrong("DecoderLayer", "self-attention hard-coded training=True",
          old="return_attention_scores=True, training=training)\n        out1",
          new="return_attention_scores=True, training=True)\n        out1",
          message="changes between two calls with training=False: dropout is active at inference"),
    wrong("DecoderLayer", "training ignored: every sublayer called with training=False", **_decoder_layer(
        "        a1, w1 = self.mha1(x, x, x, attention_mask=look_ahead_mask, return_attention_scores=True,\n"
        "                           training=False)\n"
        "        out1 = self.layernorm1(x + a1)\n"
        "        a2, w2 = self.mha2(out1, enc_output, enc_output, attention_mask=padding_mask,\n"
        "                           return_attention_scores=True, training=False)\n"
        "        out2 = self.layernorm2(out1 + a2)\n"
        "        return self.layernorm3(out2 + self.dropout_ffn(self.ffn(out2), training=False)), w1, w2"),
          visible_gap="the visible check runs the layer at inference only", message="no dropout acts in training"),
    right("DecoderLayer", "no explicit training= (Keras passes the call's flag on), keyword arguments",
          **_decoder_layer(
              "        a1, w1 = self.mha1(query=x, value=x, key=x, attention_mask=look_ahead_mask,\n"
              "                           return_attention_scores=True)\n"
              "        out1 = self.layernorm1(x + a1)\n"
              "        a2, w2 = self.mha2(query=out1, value=enc_output, attention_mask=padding_mask,\n"
              "                           return_attention_scores=True)\n"
              "        out2 = self.layernorm2(out1 + a2)\n"
              "        return self.layernorm3(out2 + self.dropout_ffn(self.ffn(out2))), w1, w2")),
    right("DecoderLayer", "boolean masks, tf.add, results gathered in a list", **_decoder_layer(
        "        as_bool = lambda m: None if m is None else tf.cast(m, tf.bool)\n"
        "        results = []\n"
        "        h = x\n"
        "        for mha, query_source, mask, norm in ((self.mha1, None, look_ahead_mask, self.layernorm1),\n"
        "                                              (self.mha2, enc_output, padding_mask, self.layernorm2)):\n"
        "            source = h if query_source is None else query_source\n"
        "            attended, weights = mha(h, source, source, attention_mask=as_bool(mask),\n"
        "                                    return_attention_scores=True, training=training)\n"
        "            h = norm(tf.add(h, attended))\n"
        "            results.append(weights)\n"
        "        out = self.layernorm3(tf.add(h, self.dropout_ffn(self.ffn(h), training=training)))\n"
        "        return (out, *results)")),
]

ENCODER_BODY = """\
        seq_len = tf.shape(x)[1]
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x = x + self.pos_encoding[:, :seq_len, :]
        x = self.dropout(x, training=training)
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x"""


def _encoder(body: str) -> dict:
    return {"old": ENCODER_BODY, "new": body}


ENCODER = [
    wrong("Encoder", "embeddings not multiplied by sqrt(embedding_dim)",
          old="x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))",
          new="x = self.embedding(x)",
          message="the embeddings are not multiplied by sqrt(embedding_dim) before the positional"),
    wrong("Encoder", "mask not passed to the layers",
          old="x = layer(x, training=training, mask=mask)", new="x = layer(x, training=training)",
          message="the mask is not passed on",
          visible_message="encoder layer 0 received no mask"),
    wrong("Encoder", "positional encoding not added", old="x = x + self.pos_encoding[:, :seq_len, :]", new="pass",
          message="the positional encoding is not added: x += self.pos_encoding[:, :seq_len"),
    wrong("Encoder", "dropout never applied", old="x = self.dropout(x, training=training)", new="pass",
          visible_gap="the visible check runs the layer at inference only",
          message="the Encoder's own dropout never acts in training: apply self.dropout to the"),
    wrong("Encoder", "dropout hard-coded training=True",
          old="x = self.dropout(x, training=training)", new="x = self.dropout(x, training=True)",
          message="changes between two calls with training=False: dropout is active at inference"),
    wrong("Encoder", "dropout applied to the encoder's output, after the layers", **_encoder(
        "        seq_len = tf.shape(x)[1]\n"
        "        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))\n"
        "        x = x + self.pos_encoding[:, :seq_len, :]\n"
        "        for layer in self.enc_layers:\n"
        "            x = layer(x, training=training, mask=mask)\n"
        "        return self.dropout(x, training=training)"),
          visible_gap="the visible check runs the layer at inference only",
          message="a dropout is applied to the encoder's result"),
    wrong("Encoder", "layers called with training=False",
          old="x = layer(x, training=training, mask=mask)", new="x = layer(x, training=False, mask=mask)",
          visible_gap="the visible check runs the layer at inference only",
          message="the encoder layers never run in training mode, though the call has"),
    right("Encoder", "no explicit training= (Keras passes it on), the layers by index", **_encoder(
        "        x = self.embedding(x)\n"
        "        x *= self.embedding_dim ** 0.5\n"
        "        x += self.pos_encoding[:, : x.shape[1], :]\n"
        "        x = self.dropout(x)\n"
        "        for i in range(self.num_layers):\n"
        "            x = self.enc_layers[i](x, mask=mask)\n"
        "        return x")),
    right("Encoder", "tf.slice of the encoding, np.sqrt scaling, functools.reduce over the layers", **_encoder(
        "        import functools\n"
        "        length = tf.shape(x)[1]\n"
        "        scaled = self.embedding(x) * np.sqrt(self.embedding_dim).astype(np.float32)\n"
        "        positions = tf.slice(self.pos_encoding, [0, 0, 0], tf.stack([1, length, self.embedding_dim]))\n"
        "        h = self.dropout(scaled + positions, training=training)\n"
        "        step = lambda h, layer: layer(h, training=training, mask=mask)\n"
        "        return functools.reduce(step, self.enc_layers, h)")),
]

DECODER_BODY = """\
        x = self.dropout(x, training=training)
        for i, layer in enumerate(self.dec_layers):
            x, block1, block2 = layer(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                                      padding_mask=padding_mask)
            attention_weights[f"decoder_layer{i + 1}_block1_self_att"] = block1
            attention_weights[f"decoder_layer{i + 1}_block2_decenc_att"] = block2"""

DECODER = [
    wrong("Decoder", "attention dict numbered from 0",
          old='attention_weights[f"decoder_layer{i + 1}_block1_self_att"]',
          new='attention_weights[f"decoder_layer{i}_block1_self_att"]',
          message="attention dict has keys ['decoder_layer0_block1_self_att'"),
    wrong("Decoder", "masks swapped when calling the layers",
          old="look_ahead_mask=look_ahead_mask,\n                                      padding_mask=padding_mask)",
          new="look_ahead_mask=padding_mask,\n                                      padding_mask=look_ahead_mask)",
          message="the masks are swapped",
          visible_message="look_ahead_mask received padding_mask"),
    wrong("Decoder", "embeddings not multiplied by sqrt(embedding_dim)",
          old="x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))",
          new="x = self.embedding(x)",
          message="the embeddings are not multiplied by sqrt(embedding_dim) before the positional"),
    wrong("Decoder", "the layers' outputs never fed on (x not reassigned)",
          old="x, block1, block2 = layer(x, enc_output,", new="out, block1, block2 = layer(x, enc_output,",
          message="has wrong values"),
    wrong("Decoder", "dropout never applied", old="x = self.dropout(x, training=training)", new="pass",
          visible_gap="the visible check runs the layer at inference only",
          message="the Decoder's own dropout never acts in training: apply self.dropout to the"),
    wrong("Decoder", "layers called with training=False",
          old="layer(x, enc_output, training=training,", new="layer(x, enc_output, training=False,",
          visible_gap="the visible check runs the layer at inference only",
          message="the decoder layers never run in training mode, though the call has"),
    right("Decoder", "no explicit training= (Keras passes it on), weights collected by zip", old=DECODER_BODY, new=(
        "        x = self.dropout(x)\n"
        "        for number, layer in zip(range(1, self.num_layers + 1), self.dec_layers):\n"
        "            x, *blocks = layer(x, enc_output, look_ahead_mask=look_ahead_mask, padding_mask=padding_mask)\n"
        "            names = (f'decoder_layer{number}_block1_self_att', f'decoder_layer{number}_block2_decenc_att')\n"
        "            attention_weights.update(zip(names, blocks))")),
    right("Decoder", "scaling by a float64 constant cast to float32, encoding sliced with tf.gather",
          old="x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))\n"
              "        x = x + self.pos_encoding[:, :seq_len, :]",
          new="x = self.embedding(x) * tf.cast(np.sqrt(np.float64(self.embedding_dim)), tf.float32)\n"
              "        x = x + tf.gather(self.pos_encoding, tf.range(seq_len), axis=1)"),
]

TRANSFORMER = [
    wrong("Transformer", "softmax applied to the logits",
          old="logits = self.final_layer(dec_output)", new="logits = tf.nn.softmax(self.final_layer(dec_output))",
          message="these are probabilities; return the final layer's logits (no softmax): the loss"),
    wrong("Transformer", "final layer never applied", old="logits = self.final_layer(dec_output)",
          new="logits = dec_output",
          message="Transformer.final_layer has no weights yet: it was never used in `call` (every"),
    wrong("Transformer", "decoder masks swapped",
          old="look_ahead_mask=look_ahead_mask, padding_mask=dec_padding_mask)",
          new="look_ahead_mask=dec_padding_mask, padding_mask=look_ahead_mask)",
          message="the decoder's masks are swapped",
          visible_message="the decoder's look_ahead_mask received dec_padding_mask"),
    wrong("Transformer", "encoder given the look-ahead mask",
          old="mask=enc_padding_mask)", new="mask=look_ahead_mask)",
          message="has wrong values",
          visible_message="the encoder's mask received look_ahead_mask"),
    wrong("Transformer", "encoder called with training=False",
          old="self.encoder(input_sentence, training=training,", new="self.encoder(input_sentence, training=False,",
          visible_gap="the visible check runs the layer at inference only",
          message="called with training=True, the encoder never runs in training mode: call"),
    wrong("Transformer", "decoder hard-coded training=True",
          old="self.decoder(output_sentence, enc_output, training=training,",
          new="self.decoder(output_sentence, enc_output, training=True,",
          visible_gap="the visible check runs the layer at inference only", message="dropout is active at inference"),
    right("Transformer", "no explicit training= (Keras passes it on)",
          old="enc_output = self.encoder(input_sentence, training=training, mask=enc_padding_mask)\n"
              "        dec_output, attention_weights = self.decoder(output_sentence, enc_output, training=training,",
          new="enc_output = self.encoder(input_sentence, mask=enc_padding_mask)\n"
              "        dec_output, attention_weights = self.decoder(output_sentence, enc_output,"),
    right("Transformer", "keyword arguments, the pair unpacked and rebuilt",
          old="logits = self.final_layer(dec_output)\n        return logits, attention_weights",
          new="result = (self.final_layer(inputs=dec_output), dict(attention_weights))\n        return result"),
]

_TOY_IDS = "the visible check's toy model has the start id 1 and the end id 2 only"

GREEDY = [
    wrong("greedy_decode", "keeps the start token",
          old="tokens[:, :decoder_ids.shape[1] - 1] = decoder_ids[:, 1:]",
          new="tokens[:, :min(decoder_ids.shape[1], max_length)] = decoder_ids[:, :max_length]",
          message="starts with the start token 1: return only the generated tokens, without the"),
    wrong("greedy_decode", "no padding after the end token",
          old="next_ids = np.where(finished, 0, np.argmax(log_probs, axis=-1)).astype(np.int32)",
          new="next_ids = np.argmax(log_probs, axis=-1).astype(np.int32)",
          message="once a sentence has produced the end token, fill the rest of its row with 0"),
    wrong("greedy_decode", "least probable token (argmin)", old="np.argmax(log_probs, axis=-1)",
          new="np.argmin(log_probs, axis=-1)",
          message="it picks the least probable token",
          visible_message="contains no end token"),
    wrong("greedy_decode", "stops as soon as any row has ended (any instead of all)", old="if finished.all():",
          new="if finished.any():",
          message="the loop must go on until every row has produced the end token (finished.all())"),
    wrong("greedy_decode", "the end id written as 2", old="finished |= next_ids == end_id",
          new="finished |= next_ids == 2", message="what end_id = 2 gives", visible_gap=_TOY_IDS),
    wrong("greedy_decode", "the start id written as 1", old="np.full((batch, 1), start_id, dtype=np.int32)",
          new="np.ones((batch, 1), dtype=np.int32)", message="what start_id = 1 gives", visible_gap=_TOY_IDS),
    right("greedy_decode", "TensorFlow ops: tf.argmax, tf.concat, tf.where", source=(
        "def greedy_decode(predict_next, encoder_ids, start_id, end_id, max_length):\n"
        "    encoder_ids = tf.constant(encoder_ids)\n"
        "    batch = int(encoder_ids.shape[0])\n"
        "    decoder_ids = tf.fill((batch, 1), tf.constant(start_id, tf.int32))\n"
        "    done = tf.zeros((batch,), tf.bool)\n"
        "    for _ in range(max_length):\n"
        "        best = tf.cast(tf.argmax(predict_next(encoder_ids, decoder_ids), axis=-1), tf.int32)\n"
        "        best = tf.where(done, tf.zeros_like(best), best)\n"
        "        decoder_ids = tf.concat([decoder_ids, best[:, tf.newaxis]], axis=1)\n"
        "        done = tf.logical_or(done, tf.equal(best, end_id))\n"
        "        if bool(tf.reduce_all(done)):\n"
        "            break\n"
        "    generated = decoder_ids[:, 1:]\n"
        "    return tf.pad(generated, [[0, 0], [0, max_length - generated.shape[1]]]).numpy()\n")),
    right("greedy_decode", "Python lists, one row at a time", source=(
        "def greedy_decode(predict_next, encoder_ids, start_id, end_id, max_length):\n"
        "    rows = []\n"
        "    for source in np.asarray(encoder_ids):\n"
        "        prefix = [start_id]\n"
        "        while len(prefix) <= max_length and prefix[-1] != end_id:\n"
        "            scores = np.asarray(predict_next(source[np.newaxis], np.array([prefix], dtype=np.int32)))[0]\n"
        "            prefix.append(int(scores.argmax()))\n"
        "        rows.append(prefix[1:] + [0] * (max_length + 1 - len(prefix)))\n"
        "    return np.array(rows, dtype=np.int64)\n")),
]

BEAM = [
    wrong("beam_search", "no length normalisation",
          old="ranked = [(tokens, score / len(tokens) ** alpha) for tokens, score in finished + live]",
          new="ranked = [(tokens, score) for tokens, score in finished + live]",
          message="the scores are not length-normalised: divide the summed log-probability by"),
    wrong("beam_search", "keeps expanding hypotheses that ended",
          old="            if tokens[-1] == end_id:\n                finished.append((tokens, score))\n"
              "            else:\n                live.append((tokens, score))",
          new="            live.append((tokens, score))",
          message="kept expanding after the end token 2; set a hypothesis aside as finished as"),
    wrong("beam_search", "the start token counted in the length",
          old="score / len(tokens) ** alpha", new="score / (len(tokens) + 1) ** alpha",
          message="the length counts the start token; count only the generated tokens (end token"),
    wrong("beam_search", "only the best token of each hypothesis kept (greedy per beam)",
          old="for token in range(log_probs.shape[-1])]", new="for token in [int(log_probs[row].argmax())]]",
          message="4, 2]; keep the beam_width best extensions of the live hypotheses at each step"),
    wrong("beam_search", "the end id written as 2", old="if tokens[-1] == end_id:", new="if tokens[-1] == 2:",
          message="what end_id = 2 gives", visible_gap=_TOY_IDS),
    wrong("beam_search", "the start id written as 1", old="[[start_id] + tokens for", new="[[1] + tokens for",
          message="what start_id = 1 gives", visible_gap=_TOY_IDS),
    right("beam_search", "vectorised: top-k over the flattened (hypothesis, token) scores", source=(
        "def beam_search(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha):\n"
        "    encoder_ids = np.asarray(encoder_ids)\n"
        "    live_tokens, live_scores, finished = [[]], np.zeros(1), []\n"
        "    for _ in range(max_length):\n"
        "        prefixes = np.array([[start_id] + t for t in live_tokens], dtype=np.int32)\n"
        "        log_probs = np.asarray(predict_next(np.repeat(encoder_ids, len(live_tokens), axis=0), prefixes),\n"
        "                               dtype=np.float64)\n"
        "        totals = (live_scores[:, None] + log_probs).ravel()\n"
        "        order = np.argsort(-totals, kind='stable')[:beam_width]\n"
        "        vocab = log_probs.shape[1]\n"
        "        live_tokens, kept = [], []\n"
        "        for flat in order:\n"
        "            tokens = prefixes[flat // vocab, 1:].tolist() + [int(flat % vocab)]\n"
        "            if tokens[-1] == end_id:\n"
        "                finished.append((tokens, float(totals[flat])))\n"
        "            else:\n"
        "                live_tokens.append(tokens)\n"
        "                kept.append(totals[flat])\n"
        "        live_scores = np.array(kept)\n"
        "        if not live_tokens:\n"
        "            break\n"
        "    everything = finished + list(zip(live_tokens, live_scores.tolist()))\n"
        "    ranked = sorted(((t, s / len(t) ** alpha) for t, s in everything), key=lambda h: -h[1])\n"
        "    return ranked[:beam_width]\n")),
    right("beam_search", "heapq.nlargest over candidates, log P via math.fsum", source=(
        "def beam_search(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha):\n"
        "    import heapq\n"
        "    import math\n"
        "    beams, done = [((), ())], []\n"
        "    for _ in range(max_length):\n"
        "        rows = np.array([(start_id, *tokens) for tokens, _ in beams], dtype=np.int32)\n"
        "        table = np.asarray(predict_next(np.repeat(np.asarray(encoder_ids), len(beams), axis=0), rows))\n"
        "        candidates = [(tokens + (token,), steps + (float(table[i, token]),))\n"
        "                      for i, (tokens, steps) in enumerate(beams) for token in range(table.shape[1])]\n"
        "        best = heapq.nlargest(beam_width, candidates, key=lambda c: math.fsum(c[1]))\n"
        "        done += [c for c in best if c[0][-1] == end_id]\n"
        "        beams = [c for c in best if c[0][-1] != end_id]\n"
        "        if not beams:\n"
        "            break\n"
        "    scored = [(list(t), math.fsum(s) / len(t) ** alpha) for t, s in done + beams]\n"
        "    return heapq.nlargest(beam_width, scored, key=lambda h: h[1])\n")),
]

VARIANTS = [*ENCODER_LAYER, *ENCODER, *DECODER_LAYER, *DECODER, *TRANSFORMER, *GREEDY, *BEAM]
