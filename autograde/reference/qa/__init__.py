"""Reference implementations of assignment 07, extractive question answering. The text-side answers live once, in
course_lib.layers (which later notebooks use); the modules here name them for the registry and add the model."""
