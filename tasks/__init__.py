"""The pipeline's stages, one package each, in DAG order (flows/build_release.py BUILD_STAGES): sources -> grounding -> translation -> allocation -> release (write) -> evaluation -> release (card) -> audit -> publish.
Each package holds its pure logic and a `stage.py` entry point that reads and writes files; `dedup` is the near-duplicate subsystem that allocation and audit share.
`diff` (what changed between two releases), `leaderboard` (systems ranked from evaluation folders) and `loaders` (a release as MTEB tasks) read published releases."""
