"""Reference of assignment 05's weight loader: where every pretrained weight comes from in a keras-hub
`BertBackbone`, as (encoder sublayer, backbone sublayer) attribute paths, and a loader that follows it."""

from __future__ import annotations

from course_lib.keras_weights import resolve

EMBEDDING_SOURCES = (
    ("embedding.token_embedding", "token_embedding"),
    ("embedding.position_embedding", "position_embedding"),
    ("embedding.segment_embedding", "segment_embedding"),
    ("embedding.layer_norm", "embeddings_layer_norm"),
)
LAYER_SOURCES = (
    ("mha", "_self_attention_layer"),
    ("layernorm1", "_self_attention_layer_norm"),
    ("ffn.layers[0]", "_feedforward_intermediate_dense"),
    ("ffn.layers[1]", "_feedforward_output_dense"),
    ("layernorm2", "_feedforward_layer_norm"),
)


def sources(num_layers: int) -> list[tuple[str, str]]:
    """Every (encoder sublayer, backbone sublayer) pair of an encoder with `num_layers` layers."""
    pairs = list(EMBEDDING_SOURCES)
    for i in range(num_layers):
        pairs += [(f"enc_layers[{i}].{mine}", f"transformer_layers[{i}].{theirs}") for mine, theirs in LAYER_SOURCES]
    return pairs


def load_bert_weights(encoder, backbone) -> None:
    """Copy every weight of a keras-hub BertBackbone into a built BertEncoder of the same sizes."""
    if len(encoder.enc_layers) != len(backbone.transformer_layers):
        raise ValueError(f"the encoder has {len(encoder.enc_layers)} layers, the backbone "
                         f"{len(backbone.transformer_layers)}")
    for mine, theirs in sources(len(encoder.enc_layers)):
        resolve(encoder, mine).set_weights(resolve(backbone, theirs).get_weights())
