"""Stage 2, grounding: each item's texts linked to UMLS concepts (CUIs); the grounder and its matchers."""
