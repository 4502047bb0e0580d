"""Hidden checks of assignment 07, extractive question answering."""
