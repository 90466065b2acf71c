"""common/paths.py: every odd kind of path a user can give is one InputError naming the path
and its option or config field, never another exception (issue 47, class 1)."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common import paths
from common.errors import InputError
from common.outputs import output_file, output_folder

KINDS = ["file", "folder", "missing", "loop", "dangling", "fifo", "socket", "link-to-file", "link-to-folder",
         "under-file", "under-dangling", "chardev"]


def make(kind: str, where: Path) -> Path:
    """A path of `kind` at `where` (made), returned as the path a user would give."""
    p = where / "p"
    if kind == "file":
        p.write_text("x\n")
    elif kind == "folder":
        p.mkdir()
        (p / "inside").write_text("x\n")
    elif kind == "loop":
        p.symlink_to("q")
        (where / "q").symlink_to("p")
    elif kind == "dangling":
        p.symlink_to(where / "nowhere")
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        s.close()
    elif kind == "link-to-file":
        (where / "target").write_text("x\n")
        p.symlink_to(where / "target")
    elif kind == "link-to-folder":
        (where / "target").mkdir()
        p.symlink_to(where / "target")
    elif kind == "under-file":
        p.write_text("x\n")
        return p / "below"
    elif kind == "under-dangling":
        p.symlink_to(where / "nowhere")
        return p / "below"
    elif kind == "chardev":
        return Path("/dev/null")
    return p


# what each checker answers for each kind: None (accepted) or the message after "PATH: field 'F': "
AS_FILE = {"file": None, "link-to-file": None, "folder": "is a folder; expected a file", "missing": "not found (expected a file)",
           "loop": "is a symbolic link loop (following its links never ends)",
           "dangling": "is a symbolic link to {where}/nowhere, which does not exist",
           "fifo": "is a FIFO (named pipe); expected a regular file", "socket": "is a socket; expected a regular file",
           "link-to-folder": "is a folder; expected a file", "under-file": "not found (expected a file)",
           "under-dangling": "is under {where}/p, a symbolic link to {where}/nowhere, which does not exist",
           "chardev": "is a character device; expected a regular file"}
AS_FOLDER = {"file": "is a file; expected a folder", "link-to-file": "is a file; expected a folder", "folder": None,
             "link-to-folder": None, "missing": "not found (expected a folder)", "loop": AS_FILE["loop"], "dangling": AS_FILE["dangling"],
             "fifo": "is a FIFO (named pipe); expected a folder", "socket": "is a socket; expected a folder",
             "under-file": "not found (expected a folder)", "under-dangling": AS_FILE["under-dangling"],
             "chardev": "is a character device; expected a folder"}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_as_an_input_file_and_folder(tmp_path, kind):
    p = make(kind, tmp_path)
    for check, expected in ((paths.input_file, AS_FILE[kind]), (paths.input_folder, AS_FOLDER[kind])):
        if expected is None:
            assert check(p, "--x") == p
            continue
        with pytest.raises(InputError) as exc:
            check(p, "--x")
        assert str(exc.value) == f"{p}: field '--x': {expected.format(where=tmp_path)}"


def test_a_config_field_names_the_config_and_the_path(tmp_path):
    p = make("fifo", tmp_path)
    with pytest.raises(InputError) as exc:
        paths.input_file(p, "sources.0.path", tmp_path / "c.toml")
    assert str(exc.value) == f"{tmp_path}/c.toml: field 'sources.0.path': {p} is a FIFO (named pipe); expected a regular file"


def test_resolve_turns_a_loop_into_one_line(tmp_path):
    p = make("loop", tmp_path)
    with pytest.raises(InputError) as exc:
        paths.resolve(p / "below", "--out")
    assert str(exc.value) == f"{p}/below: field '--out': is a symbolic link loop (following its links never ends)"
    assert paths.resolve(tmp_path / "a" / ".." / "b") == tmp_path / "b"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000: unreadable files cannot be made here")
def test_an_unreadable_file_is_one_line(tmp_path):
    p = make("file", tmp_path)
    p.chmod(0)
    with pytest.raises(InputError, match=r"field '--x': cannot be read \(Permission denied\)"):
        paths.input_file(p, "--x")


OUTPUT_FOLDER = {"file": "is a file; expected a folder", "link-to-file": "is a file; expected a folder",
                 "folder": None, "link-to-folder": None, "missing": None,
                 "loop": "is a symbolic link loop (following its links never ends); expected a folder",
                 "dangling": "is a symbolic link to {where}/nowhere, which does not exist; expected a folder",
                 "fifo": "is a FIFO (named pipe); expected a folder", "socket": "is a socket; expected a folder",
                 "under-file": "is under {where}/p, which is a file; expected a folder",
                 "under-dangling": "is under {where}/p, a symbolic link to {where}/nowhere, which does not exist; "
                                   "expected a folder",
                 "chardev": "is a character device; expected a folder"}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_as_an_output_folder(tmp_path, kind):
    p = make(kind, tmp_path)
    expected = OUTPUT_FOLDER[kind]
    if expected is None:
        assert output_folder(p, "--out") == p
        return
    with pytest.raises(InputError) as exc:
        output_folder(p, "--out")
    assert str(exc.value) == f"{p}: field '--out': {expected.format(where=tmp_path)}"


@pytest.mark.parametrize("kind", ["fifo", "chardev", "dangling", "loop"])
def test_an_output_file_is_never_a_special_file_or_a_broken_link(tmp_path, kind):
    """`audit --json /dev/null` would have replaced /dev/null (atomic rename) as root."""
    p = make(kind, tmp_path)
    with pytest.raises(InputError) as exc:
        output_file(p, "--json")
    assert str(exc.value).startswith(f"{p}: field '--json': is ") and str(exc.value).endswith("; expected a file name")


def test_a_release_folder_argument(tmp_path):
    with pytest.raises(InputError) as exc:
        paths.release_folder(tmp_path)
    assert str(exc.value) == f"{tmp_path}: not a release folder (no manifest.json)"
    os.mkfifo(tmp_path / "manifest.json")
    with pytest.raises(InputError) as exc:
        paths.release_folder(tmp_path)
    assert str(exc.value) == (f"{tmp_path}/manifest.json: field 'RELEASE_DIR': is a FIFO (named pipe); "
                              "expected a regular release manifest")
    (tmp_path / "l").mkdir()
    loop = make("loop", tmp_path / "l")
    with pytest.raises(InputError, match="symbolic link loop"):
        paths.release_folder(loop)


# ----------------------------------------------------------------------------- property
MAX_CHAIN = 4


def _example_root(tmp_path_factory) -> Path:
    """Four folders deep in a folder of the example's own, so that its links up (at most
    MAX_CHAIN) stay in it: from the run's shared base temp, a file step could open another
    example's FIFO for writing, which blocks for ever (it hung a run once)."""
    root = tmp_path_factory.mktemp("chain").joinpath(*"abcd"[:MAX_CHAIN])
    root.mkdir(parents=True)
    return root


def test_an_examples_links_up_stay_in_its_own_folder(tmp_path_factory):
    first, second = _example_root(tmp_path_factory), _example_root(tmp_path_factory)
    up = first
    for i in range(MAX_CHAIN):
        (up / f"e{i}").symlink_to("..")
        up = up / f"e{i}"
    own = first.parents[MAX_CHAIN - 1]
    assert up.resolve() == own and own != second.parents[MAX_CHAIN - 1]


STEP = st.sampled_from(["file", "folder", "loop", "dangling", "fifo", "link-up", "missing"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(chain=st.lists(STEP, min_size=1, max_size=MAX_CHAIN), use=st.sampled_from(["file", "folder", "out", "resolve"]))
def test_any_chain_of_odd_entries_is_accepted_or_one_line(tmp_path_factory, chain, use):
    """A path whose components are any mix of files, folders, loops, dangling links, FIFOs
    and links back up: each checker returns the path or raises InputError naming it, one
    line, never another exception (and never blocks on a FIFO)."""
    root = _example_root(tmp_path_factory)
    p = root
    for i, step in enumerate(chain):
        q = p / f"e{i}"
        try:
            if step == "file":
                q.write_text("x")
            elif step == "folder":
                q.mkdir()
            elif step == "loop":
                q.symlink_to(q.name)
            elif step == "dangling":
                q.symlink_to(root / "nowhere")
            elif step == "fifo":
                os.mkfifo(q)
            elif step == "link-up":
                q.symlink_to("..")
        except OSError:
            pass  # made under a file, a FIFO or a broken link: the path is odder still
        p = q
    check = {"file": lambda x: paths.input_file(x, "--x"), "folder": lambda x: paths.input_folder(x, "--x"),
             "out": lambda x: output_folder(x, "--x"), "resolve": lambda x: paths.resolve(x, "--x")}[use]
    try:
        got = check(p)
    except InputError as exc:
        line = str(exc)
        assert "\n" not in line and line.startswith(f"{p}: field '--x': "), line
        return
    assert got is not None
    if use == "file":
        assert p.is_file()
    elif use == "folder":
        assert p.is_dir()
