"""Stage 4, allocation: items and confusion sets placed into cells under the zero-overlap guarantee."""
