"""Release diff: what changed between two release folders (cells, rows, qrels, configuration, inputs). Used by `mmedbench diff` and `add-language`."""
