"""Near-duplicate detection (MinHash LSH, exact Jaccard), shared by allocation and audit."""
