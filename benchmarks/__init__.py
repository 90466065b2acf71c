"""Benchmarks and the scale generator (`python -m benchmarks.scale`).

A regular package, so that `benchmarks.scale` resolves to this folder and not to the
`benchmarks` package that pysbd installs into site-packages.
"""
