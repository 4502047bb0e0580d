"""Submissions built from the solution notebooks for the grading tests.

A mutation makes exactly one graded function wrong: `old` must occur exactly once in the
solution notebook's code, and only the test cell `grade_id` should lose its points. An assignment may
list several mutations, applied together to one submission: each must cost exactly its own cell, which
also proves that composites graded with reference parts do not pay for their parts' mistakes.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat


@dataclass(frozen=True)
class Mutation:
    grade_id: str
    old: str
    new: str
    what: str


WRONG_FUNCTIONS = {
    "01_positional_encoding": (
        Mutation(
            grade_id="test_positional_encoding",
            old="angles[:, 0::2] = np.sin(angles[:, 0::2])\n    angles[:, 1::2] = np.cos(angles[:, 1::2])",
            new="angles[:, 0::2] = np.cos(angles[:, 0::2])\n    angles[:, 1::2] = np.sin(angles[:, 1::2])",
            what="sine and cosine swapped",
        ),
    ),
    "02_scaled_dot_product_attention": (
        Mutation(
            grade_id="test_scaled_dot_product_attention",
            old="scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(d_k)",
            new="scores = tf.matmul(q, k, transpose_b=True)",
            what="attention without the 1/sqrt(d_k) scaling",
        ),
    ),
    # call and copy_keras_weights use split_heads but are graded with reference parts.
    "03_multi_head_attention": (
        Mutation(
            grade_id="test_split_heads",
            old="return tf.transpose(x, perm=(0, 2, 1, 3))",
            new="return tf.reshape(x, (batch, num_heads, seq, depth))",
            what="split_heads reshapes without transposing (heads interleaved wrongly)",
        ),
        Mutation(
            grade_id="test_multi_head_attention_call",
            old="output = self.wo(merge_heads(attended))",
            new="output = merge_heads(attended)",
            what="the layer's call without the output projection W^O",
        ),
    ),
    # Encoder, Decoder and Transformer are graded with reference layers, so they keep their points.
    "04_transformer": (
        Mutation(
            grade_id="test_EncoderLayer",
            old="return self.layernorm2(out1 + ffn_output)",
            new="return self.layernorm2(ffn_output)",
            what="encoder layer without the residual around the feed-forward block",
        ),
        Mutation(
            grade_id="test_DecoderLayer",
            old="attention_mask=padding_mask,",
            new="attention_mask=None,",
            what="decoder layer whose cross-attention ignores the input's padding mask",
        ),
        Mutation(
            grade_id="test_beam_search",
            old="ranked = [(tokens, score / len(tokens) ** alpha) for tokens, score in finished + live]",
            new="ranked = [(tokens, score) for tokens, score in finished + live]",
            what="beam search without length normalisation",
        ),
    ),
    # BertEncoder is graded with the reference BertEmbedding and load_bert_weights with a reference encoder,
    # so each keeps its points when the other graded parts are wrong.
    "05_bert": (
        Mutation(
            grade_id="test_build_bert_inputs",
            old="segment_ids += [1] * (len(tokens_b) + 1)",
            new="segment_ids += [1] * len(tokens_b) + [0]",
            what="the [SEP] that closes sentence B put in segment 0",
        ),
        Mutation(
            grade_id="test_BertEmbedding",
            old="x = self.token_embedding(token_ids) + positions",
            new="x = self.token_embedding(token_ids) * tf.sqrt(tf.cast(tf.shape(positions)[-1], tf.float32))"
                " + positions",
            what="the Transformer's sqrt(d_model) scaling left in BERT's embedding",
        ),
        Mutation(
            grade_id="test_BertEncoder",
            old="x = layer(x, training=training, mask=attention_mask)",
            new="x = layer(x, training=training)",
            what="encoder layers that ignore the padding mask",
        ),
        Mutation(
            grade_id="test_load_bert_weights",
            old="copy(layer.layernorm1, pretrained._self_attention_layer_norm)",
            new="copy(layer.layernorm1, pretrained._feedforward_layer_norm)",
            what="layernorm1 loaded from the feed-forward layer norm",
        ),
        Mutation(
            grade_id="test_mask_tokens",
            old="choices = np.setdiff1d(np.arange(vocab_size), list(special_ids))",
            new="choices = np.arange(vocab_size)",
            what="random replacements drawn from the whole vocabulary, special ids included",
        ),
    ),
}


def mutate(notebook: nbformat.NotebookNode, mutation: Mutation) -> nbformat.NotebookNode:
    hits = [cell for cell in notebook.cells if cell.cell_type == "code" and mutation.old in cell.source]
    count = sum(cell.source.count(mutation.old) for cell in hits)
    assert count == 1, f"mutation '{mutation.what}': expected its text once in the notebook, found {count}"
    hits[0].source = hits[0].source.replace(mutation.old, mutation.new)
    return notebook


def insert_after_setup(notebook: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """Insert a code cell right after the first code cell (the set-up cell)."""
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first_code + 1, nbformat.v4.new_code_cell(source))
    return notebook


def delete_cell(notebook: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    before = len(notebook.cells)
    notebook.cells = [cell for cell in notebook.cells
                      if cell.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
    assert len(notebook.cells) == before - 1, f"no cell with grade id {grade_id}"
    return notebook


def prepend_to_solutions(notebook: nbformat.NotebookNode, code: str) -> nbformat.NotebookNode:
    """Insert `code` at the start of every solution region, indented like the marker."""
    changed = 0
    for cell in notebook.cells:
        lines = cell.source.split("\n")
        for index, line in enumerate(lines):
            if line.strip() == "### BEGIN SOLUTION":
                indent = line[: len(line) - len(line.lstrip())]
                lines[index + 1:index + 1] = [indent + extra for extra in code.split("\n")]
                changed += 1
                break
        cell.source = "\n".join(lines)
    assert changed, "no solution region found"
    return notebook
