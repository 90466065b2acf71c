"""Stage 3, translation: how each item is said in each language (native text, pivot, translation memory), behind the gates; MT engines, memory store and TMX for `mmedbench translate`."""
