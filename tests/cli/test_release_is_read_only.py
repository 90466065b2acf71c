"""No command writes inside a release folder (issue 41): `audit --json`, `diff --json`,
`evaluate --out` and `--cache-dir`, `build --release-dir` / `--work-dir`: one line, exit 2,
the release's files unchanged. A release folder is one holding a manifest.json (after
resolving links). And what `evaluate` writes is world-readable under umask 022."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from common.errors import InputError
from common.jsonio import atomic_write
from common.outputs import output_file, output_folder, release_around
from mmedbench.cli import app
from tests.conftest import SAMPLE_CONFIG
from tests.small_fs import remount_read_only, small_fs


def _fake_release(root: Path) -> Path:
    (root / "xqa" / "en").mkdir(parents=True)
    (root / "manifest.json").write_text('{"version": "0.1.0"}\n')
    (root / "xqa" / "en" / "corpus.jsonl").write_text("{}\n")
    return root


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _errors(output: str) -> list[str]:
    return [l for l in output.splitlines() if l.startswith("error: ")]


def test_release_around_finds_the_folder_holding_a_manifest(tmp_path):
    rel = _fake_release(tmp_path / "anything-named")
    assert release_around(rel) == rel
    assert release_around(rel / "xqa" / "en" / "not-yet" / "x.json") == rel
    assert release_around(tmp_path / "beside.json") is None
    (tmp_path / "link").symlink_to(rel / "xqa")
    assert release_around(tmp_path / "link" / "x.json") == rel  # a link into a release is the release


@pytest.mark.parametrize("args", [
    ["audit", "{rel}", "--json", "{rel}/audit_report.json"],
    ["audit", "{rel}", "--json", "{rel}/xqa/en/new.json"],
    ["diff", "{rel}", "{rel}", "--json", "{rel}/build_report.json"],
    ["build", "--config", str(SAMPLE_CONFIG), "--release-dir", "{rel}/releases"],
    ["build", "--config", str(SAMPLE_CONFIG), "--work-dir", "{rel}/work"],
])
def test_no_command_writes_inside_a_release(tmp_path, args):
    rel = _fake_release(tmp_path / "0.1.0")
    before = _tree(rel)
    r = CliRunner().invoke(app, [a.format(rel=rel) for a in args])
    assert r.exit_code == 2, r.output
    errors = _errors(r.output)
    assert len(errors) == 1 and f"is inside the release folder {rel}; a release is never written to" in errors[0], r.output
    assert "Traceback" not in r.output
    assert _tree(rel) == before and sorted(p.name for p in rel.iterdir()) == ["manifest.json", "xqa"]


def test_output_file_through_a_link_into_a_release_is_refused(tmp_path):
    rel = _fake_release(tmp_path / "r")
    (tmp_path / "link").symlink_to(rel)
    with pytest.raises(InputError) as exc:
        output_file(tmp_path / "link" / "report.json", "--json")
    assert str(exc.value).endswith(f"field '--json': is inside the release folder {rel}; a release is never written to "
                                   "(choose a path outside it)")


def test_a_read_only_folder_is_refused_before_anything_runs(tmp_path):
    with small_fs(tmp_path / "ro"):
        remount_read_only(tmp_path / "ro")
        with pytest.raises(InputError) as exc:
            output_folder(tmp_path / "ro" / "releases", "--release-dir")
        assert str(exc.value) == (f"{tmp_path}/ro/releases: field '--release-dir': cannot be written ({tmp_path}/ro, "
                                  "where it would be made): Read-only file system")
        with pytest.raises(InputError) as exc:
            output_file(tmp_path / "ro" / "a.json", "--json")
        assert str(exc.value).endswith(f"field '--json': cannot be written (folder {tmp_path}/ro): Read-only file system")


def test_a_disk_without_room_is_refused_before_anything_runs(tmp_path):
    with small_fs(tmp_path / "small", "1m"):
        output_folder(tmp_path / "small" / "w", "--work-dir", min_free=512 << 10)  # room enough
        with pytest.raises(InputError) as exc:
            output_folder(tmp_path / "small" / "w", "--work-dir", min_free=2 << 20)
        assert str(exc.value) == (f"{tmp_path}/small/w: field '--work-dir': disk full: 1.0 MB free on its file system, at least "
                                  "2.0 MB needed; free some space or choose another folder")


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_atomic_write_gives_the_mode_open_would(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        with atomic_write(tmp_path / "a.json") as fh:
            fh.write("{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == mode


@pytest.mark.slow
def test_evaluate_refuses_a_cache_dir_inside_the_release_and_writes_world_readable_files(release_copy, tmp_path):
    before = _tree(release_copy)
    r = CliRunner().invoke(app, ["evaluate", str(release_copy), "-r", "bm25", "--out", str(tmp_path / "out"), "--cache-dir",
                                 str(release_copy / "cache"), "-q"])
    assert r.exit_code == 2 and len(_errors(r.output)) == 1 and "field '--cache-dir': is inside the release folder" in r.output
    old = os.umask(0o022)
    try:
        r = CliRunner().invoke(app, ["evaluate", str(release_copy), "-r", "bm25", "--out", str(tmp_path / "out"), "-q"])
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(files) > 20
    assert sorted(p.name for p in files if stat.S_IMODE(p.stat().st_mode) != 0o644) == []
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_dir() and stat.S_IMODE(p.stat().st_mode) != 0o755) == []
    assert _tree(release_copy) == before
