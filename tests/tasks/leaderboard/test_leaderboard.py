"""`mmedbench leaderboard` on evaluation folders of the tiny release: what it shows, exact;
same inputs, same bytes; one line per mistake and nothing written."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from tasks.leaderboard.site import FILES
from tests.tasks.leaderboard.boards import SCRIPT_NAME, evaluation_folders, leaderboard


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return evaluation_folders(tmp_path_factory.mktemp("board"))


@pytest.fixture(scope="module")
def site(folders, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    r = leaderboard(folders, out)
    assert r.exit_code == 0, r.output
    return out


def test_the_leaderboard_ranks_both_systems_with_ranges_and_intervals(site):
    board = json.loads((site / "leaderboard.json").read_text())
    assert board["release"] == "0.0.1" and board["split"] == "test"
    assert board["cells"] == ["xqa/en", "xqa/ja", "cd/en", "cd/ja", "evidence/en"] and board["left_out"] == {}
    rows = {s["system"]: s for s in board["systems"]}
    assert [s["system"] for s in board["systems"]] == ["sub", "bm25"]
    # sub: 2/3 on xqa/en, 1 elsewhere: (2/3 + 1 + 1 + 1 + 1) / 5; bm25 misses xqa-ja-2 and cd/ja
    assert rows["sub"]["macro"]["score"] == round((2 / 3 + 4) / 5, 6) == 0.933333
    assert rows["bm25"]["macro"]["score"] == round((2 / 3 + 0.5 + 1 + 0 + 1) / 5, 6) == 0.633333
    # the two differ on two queries only: within noise, so both may hold either place
    assert rows["sub"]["macro"]["rank"] == rows["bm25"]["macro"]["rank"] == "1-2"
    assert board["pairs"] == [{"a": "bm25", "b": "sub", "difference": -0.3, "p_value": 0.5, "p_adjusted": 0.5,
                               "significant": False}]
    assert rows["sub"]["per_task"] == {"xqa": 0.833333, "cd": 1.0, "evidence": 1.0}
    assert rows["bm25"]["per_lang"] == {"en": 0.888889, "ja": 0.25}
    assert rows["sub"]["gap_per_lang"]["ja"]["gap"] == 0.0 and rows["bm25"]["gap_per_lang"]["ja"]["gap"] == 0.5
    assert (rows["sub"]["source"], rows["sub"]["family"], rows["sub"]["coverage"], rows["sub"]["name"]) == \
        ("submitted", "multilingual-dense", "multilingual", SCRIPT_NAME)
    assert (rows["bm25"]["source"], rows["bm25"]["family"], rows["bm25"]["coverage"]) == ("built-in", "lexical", "undeclared")
    cell = {f"{t['task']}/{t['lang']}": t for t in board["cell_tables"]}
    assert cell["cd/ja"]["items"] == {"queries": 1, "differing": 1, "differing_share": 1.0, "all_find": 0, "none_find": 0}
    assert cell["xqa/en"]["items"] == {"queries": 3, "differing": 0, "differing_share": 0.0, "all_find": 2, "none_find": 1}
    assert "Holm" in board["correction"] and "randomization" in board["test"]


def test_items_csv_gives_each_querys_difficulty(site):
    lines = (site / "items.csv").read_text().splitlines()
    assert lines[0] == "task,lang,query_id,systems_finding,systems_scoring,scores_differ,ndcg_at_10:bm25,ndcg_at_10:sub"
    assert "xqa,ja,xqa-ja-2,1,2,1,0.000000,1.000000" in lines
    assert "xqa,en,xqa-en-3,0,2,0,0.000000,0.000000" in lines
    assert len(lines) == 1 + 9


def test_names_from_a_submission_are_escaped_everywhere(site):
    page = (site / "index.html").read_text()
    assert "<script>document" not in page and "<img src=x" not in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert page.count("<script") == 1 and '<script src="sort.js"></script>' in page
    md = (site / "leaderboard.md").read_text()
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\| Perfect" in md
    # every asset is local: no address outside the folder but the submission's own link
    refs = set(re.findall(r'(?:src|href)="([^"]*)"', page))
    assert refs == {"https://example.org/paper", "items.csv", "leaderboard.json", "leaderboard.md", "sort.js", "style.css"}
    assert "url(" not in page + (site / "style.css").read_text() and "@import" not in (site / "style.css").read_text()


def test_same_inputs_same_bytes_whatever_the_order_of_the_folders(folders, site, tmp_path):
    again = tmp_path / "again"
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    r = runner.invoke(app, ["leaderboard", str(folders["submitted"]), str(folders["builtin"]),
                            "--submission", str(folders["submission"]), "--out", str(again)])
    assert r.exit_code == 0, r.output
    for name in FILES:
        assert (again / name).read_bytes() == (site / name).read_bytes(), name


def test_two_releases_are_refused_in_one_line(folders, tmp_path):
    other = tmp_path / "ev-other"
    shutil.copytree(folders["submitted"], other)
    res = json.loads((other / "results.json").read_text())
    res["build_id"] = "cd" * 32
    (other / "results.json").write_text(json.dumps(res))
    out = tmp_path / "site"
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    r = runner.invoke(app, ["leaderboard", str(folders["builtin"]), str(other), "--out", str(out)])
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and r.output.startswith("error: ")
    assert "a leaderboard ranks one release" in r.output and "build cdcdcdcdcdcd" in r.output
    assert not out.exists()


def test_a_run_changed_after_evaluation_is_refused(folders, tmp_path):
    other = tmp_path / "ev-changed"
    shutil.copytree(folders["submitted"], other)
    (other / "runs" / "sub" / "cd-ja.trec").write_text("cd-ja-C0000002 Q0 C0000001 1 3 sub\n")
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    r = runner.invoke(app, ["leaderboard", str(folders["builtin"]), str(other), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and "gives nDCG@10 0.000000 on cd/ja, results.json records 1.000000" in r.output


def test_the_output_is_never_written_inside_a_release_or_over_a_users_files(folders, tmp_path):
    r = leaderboard(folders, folders["release"] / "board")
    assert r.exit_code == 2 and "is inside the release folder" in r.output
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    r = leaderboard(folders, mine)
    assert r.exit_code == 2 and "holds files mmedbench leaderboard did not write (notes.txt)" in r.output
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_a_rerun_replaces_its_own_files(folders, tmp_path):
    out = tmp_path / "site"
    assert leaderboard(folders, out).exit_code == 0
    first = (out / "index.html").read_bytes()
    assert leaderboard(folders, out).exit_code == 0
    assert (out / "index.html").read_bytes() == first
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, ".mmedbench-leaderboard.json"])


def test_a_bad_submission_gets_one_line_per_mistake_and_nothing_is_written(folders, tmp_path):
    bad = tmp_path / "submission.toml"
    bad.write_text('run = "sub"\nname = "x"\nfamily = "transformer"\ncoverage = "all"\n'
                   'link = "javascript:alert(1)"\nlicence = "CC-BY-4.0"\nteam = "me"\n')
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    out = tmp_path / "site"
    r = runner.invoke(app, ["leaderboard", str(folders["builtin"]), str(folders["submitted"]), "-s", str(bad),
                            "--out", str(out)])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert [l.split(": ")[2] for l in lines] == ["field 'family'", "field 'coverage'", "field 'link'", "field 'team'"]
    assert lines[0].startswith(f"error: {bad}:3: field 'family': expected one of lexical, english-dense")
    assert lines[1] == (f"error: {bad}:4: field 'coverage': expected one of english-only, multilingual, biomedical, "
                        "undeclared, found 'all'")
    assert lines[2].startswith(f"error: {bad}:5: field 'link': expected an http:// or https:// address")
    assert lines[3] == f"error: {bad}:7: field 'team': not a field of a submission (expected run, name, family, coverage, link, licence)"
    assert not out.exists()


def test_a_submission_must_name_a_system_of_the_folders(folders, tmp_path):
    meta = tmp_path / "submission.toml"
    meta.write_text(folders["submission"].read_text().replace('run = "sub"', 'run = "nobody"'))
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    r = runner.invoke(app, ["leaderboard", str(folders["builtin"]), "-s", str(meta), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and "field 'run': names 'nobody', no system of the evaluation folders given" in r.output


def test_systems_without_a_cell_in_common_are_refused(folders, tmp_path):
    from tests.tasks.leaderboard.boards import runner
    from mmedbench.cli import app

    runs = tmp_path / "only-cd-ja"
    runs.mkdir()
    (runs / "cd-ja.trec").write_text("cd-ja-C0000002 Q0 C0000002 1 3 x\n")
    other = tmp_path / "ev-x"
    assert runner.invoke(app, ["evaluate", str(folders["release"]), "--run", f"x={runs}", "--out", str(other), "-q"]).exit_code == 0
    solo = tmp_path / "only-xqa-en"
    solo.mkdir()
    (solo / "xqa-en.trec").write_text("xqa-en-1 Q0 p1 1 3 y\n")
    other2 = tmp_path / "ev-y"
    assert runner.invoke(app, ["evaluate", str(folders["release"]), "--run", f"y={solo}", "--out", str(other2), "-q"]).exit_code == 0
    r = runner.invoke(app, ["leaderboard", str(other), str(other2), "--out", str(tmp_path / "s")])
    assert r.exit_code == 2 and "no cell was scored by every system given" in r.output
    # with bm25 beside x, cd/ja is common: the macro is over it alone, the other cells are listed
    r = runner.invoke(app, ["leaderboard", str(folders["builtin"]), str(other), "--out", str(tmp_path / "s2")])
    assert r.exit_code == 0, r.output
    board = json.loads((tmp_path / "s2" / "leaderboard.json").read_text())
    assert board["cells"] == ["cd/ja"]
    assert board["left_out"] == {"xqa/en": ["bm25"], "xqa/ja": ["bm25"], "cd/en": ["bm25"], "evidence/en": ["bm25"]}
    assert [(s["system"], s["macro"]["score"]) for s in board["systems"]] == [("x", 1.0), ("bm25", 0.0)]
