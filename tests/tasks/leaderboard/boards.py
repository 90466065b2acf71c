"""Evaluation folders of the tiny release (tests/evaluation_release.py) for leaderboard tests:
BM25 scored by evaluate, and a submitted system's run files written by hand."""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mmedbench.cli import app
from tests.evaluation_release import make_tiny_release

runner = CliRunner()

# the submitted system: the relevant document first everywhere, except xqa-en-3 (missed)
SUBMITTED_RUNS = {
    "xqa-en.trec": "xqa-en-1 Q0 p1 1 3 sub\nxqa-en-2 Q0 p2 1 3 sub\nxqa-en-3 Q0 p1 1 3 sub\n",
    "xqa-ja.trec": "xqa-ja-1 Q0 p3 1 3 sub\nxqa-ja-2 Q0 p4 1 3 sub\n",
    "xqa-ja-pivot.trec": "xqa-ja-1 Q0 p3 1 3 sub\nxqa-ja-2 Q0 p4 1 3 sub\n",
    "cd-en.trec": "cd-en-C0000001 Q0 C0000001 1 3 sub\ncd-en-C0000004 Q0 C0000004 1 3 sub\n",
    "cd-ja.trec": "cd-ja-C0000002 Q0 C0000002 1 3 sub\n",
    "cd-ja-pivot.trec": "cd-ja-C0000002 Q0 C0000002 1 3 sub\n",
    "evidence-en.trec": "evidence-en-1 Q0 e1 1 3 sub\n",
}
SCRIPT_NAME = '<script>document.title="pwned"</script><img src=x onerror=alert(1)> | Perfect'
SUBMISSION = f"""run = "sub"
name = '{SCRIPT_NAME}'
family = "multilingual-dense"
coverage = "multilingual"
link = "https://example.org/paper"
licence = "CC-BY-4.0"
"""


def evaluation_folders(root: Path) -> dict[str, Path]:
    """{"release", "builtin", "submitted", "runs", "submission"} under `root`."""
    release = make_tiny_release(root / "release")
    runs = root / "sub-runs"
    runs.mkdir(parents=True)
    for name, text in SUBMITTED_RUNS.items():
        (runs / name).write_text(text, encoding="utf-8")
    (runs / "submission.toml").write_text(SUBMISSION, encoding="utf-8")
    builtin, submitted = root / "ev-builtin", root / "ev-sub"
    for args in (["-r", "bm25", "--out", str(builtin)], ["--run", f"sub={runs}", "--out", str(submitted)]):
        r = runner.invoke(app, ["evaluate", str(release), "-q", *args])
        assert r.exit_code == 0, r.output
    return {"release": release, "builtin": builtin, "submitted": submitted, "runs": runs,
            "submission": runs / "submission.toml"}


def leaderboard(folders: dict[str, Path], out: Path, *extra: str):
    return runner.invoke(app, ["leaderboard", str(folders["builtin"]), str(folders["submitted"]),
                               "--submission", str(folders["submission"]), "--out", str(out), *extra])
