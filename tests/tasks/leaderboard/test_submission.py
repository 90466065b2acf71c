"""A submission's metadata file: read when right, one line per mistake when not."""
from __future__ import annotations

import pytest

from common.errors import InputError
from tasks.leaderboard.submission import SubmissionErrors, read_submission
from tests.tasks.leaderboard.boards import SCRIPT_NAME, SUBMISSION


def test_a_good_file_is_read_as_it_is(tmp_path):
    path = tmp_path / "submission.toml"
    path.write_text(SUBMISSION)
    s = read_submission(path)
    assert (s.run, s.name, s.family, s.coverage, s.link, s.licence) == (
        "sub", SCRIPT_NAME, "multilingual-dense", "multilingual", "https://example.org/paper", "CC-BY-4.0")


def test_missing_fields_are_named_each(tmp_path):
    path = tmp_path / "submission.toml"
    path.write_text('run = "sub"\nname = "x"\nfamily = "hybrid"\n')
    with pytest.raises(SubmissionErrors) as info:
        read_submission(path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}: field 'coverage': missing: expected one of english-only, multilingual, biomedical, undeclared",
        f"{path}: field 'link': missing: expected an http:// or https:// address of the model or paper "
        "(no spaces, quotes or angle brackets)",
        f"{path}: field 'licence': missing: expected the run files' licence as an SPDX identifier, e.g. CC-BY-4.0"]


@pytest.mark.parametrize("line, field", [
    ('run = "Has Spaces"', "run"), ('name = "two\\nlines"', "name"), ('link = "https://x.org/a b"', "link"),
    ("link = \"https://x.org/\\\"onmouseover=alert(1)\"", "link"), ('licence = "my licence"', "licence"),
    ('coverage = 3', "coverage"),
])
def test_each_bad_value_is_refused_at_its_line(tmp_path, line, field):
    key = line.split(" =")[0]
    text = "\n".join(line if l.startswith(key + " =") else l for l in SUBMISSION.splitlines()) + "\n"
    path = tmp_path / "submission.toml"
    path.write_text(text)
    with pytest.raises(SubmissionErrors) as info:
        read_submission(path)
    (err,) = info.value.errors
    assert err.field == field and err.line == [l.split(" =")[0] for l in text.splitlines()].index(key) + 1


def test_a_file_that_is_not_toml_is_one_line(tmp_path):
    path = tmp_path / "submission.toml"
    path.write_text('run = "sub\n')
    with pytest.raises(InputError) as info:
        read_submission(path)
    assert str(info.value).startswith(f"{path}:1: invalid TOML")
