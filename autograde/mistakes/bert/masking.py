"""Named mistakes of mask_tokens (assignment 05). Masking is random, so its mistakes are recognised by the rates
they produce, which follow from the requested rates and the input alone: they live with the visible checks
(`course_lib.bert.masking.rate_mistakes`) and serve both checks from there, like the invariants
(`inspect_masking`, `run_masking`)."""
