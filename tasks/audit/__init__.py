"""Stage 6, audit: every check re-run from a release folder alone."""
