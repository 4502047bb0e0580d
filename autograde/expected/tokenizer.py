"""The course's tokenizer for the generators of 06's and 07's expected values (and their tests): the checkpoint's
own, so that the visible checks' tokens are those the notebooks see."""

from __future__ import annotations


def course_tokenizer():
    """The tokenizer of the course's BERT (its vocabulary file; the encoder itself is not loaded)."""
    from course_lib.pretrained import load_tokenizer  # keras-hub loads only when a generator asks

    return load_tokenizer()
