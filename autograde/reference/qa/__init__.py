"""Reference implementations of assignment 07, extractive question answering: the truth the checks grade against,
written independently of course_lib.layers, whose copies of the text-side answers (spans, windows, decoding,
metrics) later notebooks use and a test keeps equal to these (tests/test_course_lib.py)."""
