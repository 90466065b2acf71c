"""Exit codes are distinct and documented: the README's table, docs/testing.md and the CLI's
behaviour all agree with common/errors.py (0 success, 1 audit failed, 2 input error,
3 conflict with another run; anything else is a bug)."""
from __future__ import annotations

import errno
import re

import pytest

from common import errors
from common.errors import AuditFailedError, ConflictError, InputError
from tests.conftest import ROOT

DEFINED = {errors.EXIT_OK: "success", errors.EXIT_AUDIT_FAILED: "the audit failed", errors.EXIT_INPUT: "a user's input error",
           errors.EXIT_CONFLICT: "a conflict", errors.EXIT_BUG: "a bug"}


def _readme_table() -> dict[int, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    return {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+?) \|$", section, flags=re.M)}


def test_the_codes_are_distinct_and_the_first_four_are_the_issues():
    assert (errors.EXIT_OK, errors.EXIT_AUDIT_FAILED, errors.EXIT_INPUT, errors.EXIT_CONFLICT) == (0, 1, 2, 3)
    assert len(DEFINED) == 5 and errors.EXIT_BUG not in (0, 1, 2, 3, 130)  # 130: interrupted (Ctrl-C)
    assert (InputError.exit_code, AuditFailedError.exit_code, ConflictError.exit_code) == (2, 1, 3)


def test_the_readme_table_lists_exactly_the_defined_codes():
    table = _readme_table()
    assert sorted(table) == sorted(DEFINED)
    for code, start in DEFINED.items():
        assert table[code].startswith(start), (code, table[code])


def test_docs_testing_and_the_cli_docstring_name_the_same_codes():
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    section = testing.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code, start in DEFINED.items():
        assert f"{code} {start}" in " ".join(section.split()), (code, start)
    from mmedbench import cli

    doc = " ".join(cli.__doc__.split())
    assert all(f"{code} {start}" in doc for code, start in DEFINED.items() if code != errors.EXIT_BUG)
    assert f"a bug ({errors.EXIT_BUG}" in doc


@pytest.mark.parametrize("raised,code,line", [
    (InputError("x.jsonl", "expected UTF-8 text", 3), 2, "error: x.jsonl:3: expected UTF-8 text"),
    (AuditFailedError("releases/0.1.0", "fails its audit"), 1, "error: releases/0.1.0: fails its audit"),
    (ConflictError("releases/0.1.0", "another run published"), 3, "error: releases/0.1.0: another run published"),
    (OSError(errno.ENOSPC, "No space left on device", "releases/x"), 2,
     "error: releases/x: disk full (No space left on device); free some space and run the same command again"),
    (OSError(errno.EROFS, "Read-only file system", "releases/x/.0.1.0.lock"), 2,
     "error: releases/x/.0.1.0.lock: read-only file system; make the folder writable or choose another one, "
     "and run the same command again"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (ZeroDivisionError("boom"), errors.EXIT_BUG, f"error: a bug in mmedbench (ZeroDivisionError); the traceback above says where (exit {errors.EXIT_BUG})"),
    (OSError(errno.EACCES, "Permission denied"), errors.EXIT_BUG, None),
])
def test_whatever_escapes_a_command_ends_in_its_code(monkeypatch, capsys, raised, code, line):
    from mmedbench import cli

    def command():
        raise raised

    monkeypatch.setattr(cli, "app", command)
    with pytest.raises(SystemExit) as exc:
        cli.main()
    assert exc.value.code == code
    err = capsys.readouterr().err
    if line is not None:
        assert err.splitlines()[-1] == line
    if code != errors.EXIT_BUG:
        assert "Traceback" not in err and len(err.splitlines()) == 1
    else:
        assert "Traceback" in err
