"""The pipeline's stages, one package each, in DAG order: sources -> grounding -> translation -> allocation -> release -> audit (-> evaluation).
Each package holds its pure logic and a `stage.py` entry point that reads and writes files; `dedup` is the near-duplicate subsystem that allocation and audit share.
`diff` (what changed between two releases) and `loaders` (a release as MTEB tasks) read published releases."""
