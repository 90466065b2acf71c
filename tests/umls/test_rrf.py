"""umls.rrf: streaming RRF reader, column pruning and InputError reporting (file:line, field)."""
from __future__ import annotations

import errno
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import umls.rrf as rrf
from common.errors import InputError
from umls.rrf import COLUMNS, read_rrf, read_rrf_table

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "umls" / "sample"
SHARED_META = ROOT.parent / "shared" / "data" / "scispacy-umls-fixture" / "umls_META"

# Genuine MRCONSO line shape (18 fields, each terminated by '|').
ROW_1 = "C0000005|ENG|P|L0000005|PF|S0007492|Y|A26634265||M0019694|D012711|MSH|PEP|D012711|(131)I-Macroaggregated Albumin|0|N|256|"
ROW_2 = "C0000039|ENG|P|L0000039|PF|S0007564|N|A0016515||M0023172|D015060|MSH|MH|D015060|1,2-Dipalmitoylphosphatidylcholine|0|N|256|"
ROW_3 = "C0000052|FRE|S|L0000052|PF|S0000052|N|A0000052||||MSHFRE|EN|D000001|Calcimycine|3|N||"


def write(tmp_path: Path, name: str, lines: list[str], newline_at_end: bool = True) -> Path:
    path = tmp_path / name
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    path.write_text(text, encoding="utf-8")
    return path


def drop_field(row: str, index: int) -> str:
    """The row with one field removed (so it has one '|'-terminated field too few)."""
    fields = row.split("|")
    del fields[index]
    return "|".join(fields)


def line_count(path: Path) -> int:
    # The genuine fixture files have no final newline, so `wc -l` would undercount by one.
    return len(path.read_text(encoding="utf-8").splitlines())


def test_rows_match_the_column_layout():
    assert len(ROW_1.split("|")) == len(COLUMNS["MRCONSO.RRF"]) + 1  # sanity of the fixtures
    assert ROW_1.endswith("|") and ROW_2.endswith("|") and ROW_3.endswith("|")


def test_valid_mrconso_row_parses_every_field(tmp_path):
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1])
    table = read_rrf_table(path, COLUMNS["MRCONSO.RRF"])
    assert table.num_rows == 1
    row = table.to_pylist()[0]
    assert row["CUI"] == "C0000005"
    assert row["LAT"] == "ENG"
    assert row["ISPREF"] == "Y"
    assert row["SAUI"] == ""  # empty fields stay empty strings, never null
    assert row["SAB"] == "MSH"
    assert row["STR"] == "(131)I-Macroaggregated Albumin"
    assert row["SRL"] == "0"
    assert row["CVF"] == "256"
    assert all(table.schema.field(c).type == pa.string() for c in table.column_names)


def test_column_pruning_returns_only_requested_columns_in_order(tmp_path):
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2, ROW_3])
    table = read_rrf_table(path, ["STR", "CUI"])
    assert table.column_names == ["STR", "CUI"]
    assert "_TRAILING" not in table.column_names
    assert table.to_pylist() == [
        {"STR": "(131)I-Macroaggregated Albumin", "CUI": "C0000005"},
        {"STR": "1,2-Dipalmitoylphosphatidylcholine", "CUI": "C0000039"},
        {"STR": "Calcimycine", "CUI": "C0000052"},
    ]
    for batch in read_rrf(path, ["LAT"]):
        assert batch.schema.names == ["LAT"]


def test_unrequested_columns_are_not_validated(tmp_path):
    # A bad CUI is only an error when CUI is read: pruning also prunes the checks.
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2.replace("C0000039", "C39", 1)])
    assert read_rrf_table(path, ["STR"]).column("STR").to_pylist() == [
        "(131)I-Macroaggregated Albumin",
        "1,2-Dipalmitoylphosphatidylcholine",
    ]


def test_unknown_column_is_a_programming_error(tmp_path):
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1])
    with pytest.raises(ValueError, match="MRCONSO.RRF has no column TUI"):
        list(read_rrf(path, ["CUI", "TUI"]))


def test_missing_field_names_file_and_line(tmp_path):
    bad = drop_field(ROW_2, 11)  # drop SAB
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_3, bad, ROW_1])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI", "STR"])
    err = exc_info.value
    assert err.line == 3
    assert "MRCONSO.RRF:3:" in str(err)
    assert "expected 18" in str(err) and "found 17" in str(err)


def test_missing_field_line_number_across_blocks(tmp_path):
    # Small blocks: the bad row is far from the first batch and the line must still be exact.
    lines = [ROW_1] * 300 + [drop_field(ROW_1, 14)] + [ROW_2] * 20
    path = write(tmp_path, "MRCONSO.RRF", lines)
    with pytest.raises(InputError) as exc_info:
        list(read_rrf(path, ["CUI"], block_size=4096))
    assert exc_info.value.line == 301
    assert "MRCONSO.RRF:301:" in str(exc_info.value)


def test_extra_field_is_reported(tmp_path):
    extra = ROW_2.replace("|MSH|", "|MSH|EXTRA|", 1)
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, extra])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    assert "MRCONSO.RRF:2:" in str(exc_info.value)
    assert "found 19" in str(exc_info.value)


def test_line_without_trailing_bar_is_an_error(tmp_path):
    # All 18 fields present but the final '|' is missing.
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2, ROW_3[:-1], ROW_1])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI", "STR"])
    assert exc_info.value.line == 3
    assert "MRCONSO.RRF:3:" in str(exc_info.value)


def test_text_after_the_trailing_bar_is_an_error(tmp_path):
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2 + "junk"])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    assert exc_info.value.line == 2
    assert "MRCONSO.RRF:2:" in str(exc_info.value)
    assert "end with '|'" in str(exc_info.value)


def test_bad_cui_names_field_and_line(tmp_path):
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2, ROW_3.replace("C0000052", "X0000052", 1)])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI", "STR"])
    err = exc_info.value
    assert err.field == "CUI"
    assert err.line == 3
    assert "MRCONSO.RRF:3:" in str(err)
    assert "field 'CUI'" in str(err)
    assert "'X0000052'" in str(err)


def test_bad_value_line_number_across_blocks(tmp_path):
    lines = [ROW_1] * 250 + [ROW_2.replace("|N|A0016515|", "|Q|A0016515|", 1)] + [ROW_1] * 5  # ISPREF 'Q'
    path = write(tmp_path, "MRCONSO.RRF", lines)
    with pytest.raises(InputError) as exc_info:
        list(read_rrf(path, ["CUI", "ISPREF"], block_size=4096))
    assert exc_info.value.field == "ISPREF"
    assert exc_info.value.line == 251


def test_bad_tui_in_mrsty(tmp_path):
    path = write(tmp_path, "MRSTY.RRF", [
        "C0000005|T116|A1.4.1.2.1.7|Amino Acid, Peptide, or Protein|AT17648347|256|",
        "C0000039|116|A1.4.1.2.1|Organic Chemical|AT45562015|256|",
    ])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI", "TUI"])
    assert exc_info.value.field == "TUI"
    assert "MRSTY.RRF:2:" in str(exc_info.value)


def test_file_name_selects_the_layout(tmp_path):
    # The same MRSTY line is 6 fields: valid as MRSTY, wrong as MRCONSO.
    line = "C0000005|T116|A1.4.1.2.1.7|Amino Acid, Peptide, or Protein|AT17648347|256|"
    sty = write(tmp_path, "MRSTY.RRF", [line])
    assert read_rrf_table(sty, ["CUI", "STY"]).to_pylist() == [
        {"CUI": "C0000005", "STY": "Amino Acid, Peptide, or Protein"}
    ]
    (tmp_path / "conso").mkdir()
    conso = write(tmp_path / "conso", "MRCONSO.RRF", [line])
    with pytest.raises(InputError, match=r"MRCONSO\.RRF:1:"):
        read_rrf_table(conso, ["CUI"])


def test_mrrel_and_mrdef_layouts(tmp_path):
    rel = write(tmp_path, "MRREL.RRF", ["C0000774||CUI|PAR|C0154189||CUI|isa|R46858495||DO|DO||Y|N||"])
    assert read_rrf_table(rel, ["CUI1", "REL", "CUI2", "RELA"]).to_pylist() == [
        {"CUI1": "C0000774", "REL": "PAR", "CUI2": "C0154189", "RELA": "isa"}
    ]
    d = write(tmp_path, "MRDEF.RRF", ["C0001327||AT91819451||DO|A laryngitis which lasts less than a few days.|N||"])
    assert read_rrf_table(d, ["CUI", "DEF"]).to_pylist() == [
        {"CUI": "C0001327", "DEF": "A laryngitis which lasts less than a few days."}
    ]


def test_unknown_file_name(tmp_path):
    path = write(tmp_path, "MRFOO.RRF", [ROW_1])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    msg = str(exc_info.value)
    assert "MRFOO.RRF" in msg
    assert "not a known RRF file" in msg
    assert "MRCONSO.RRF" in msg  # lists what is expected


def test_missing_file(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    assert str(exc_info.value) == f"{path}: file not found"


def test_crlf_and_missing_final_newline_are_accepted(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes((ROW_1 + "\r\n" + ROW_2).encode("utf-8"))
    assert read_rrf_table(path, ["CUI"]).column("CUI").to_pylist() == ["C0000005", "C0000039"]


def test_quotes_are_literal(tmp_path):
    # RRF is unquoted: a '"' in a string is data, not a quote character.
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1.replace("(131)I-Macroaggregated Albumin", 'so-called "MAA"')])
    assert read_rrf_table(path, ["STR"]).column("STR").to_pylist() == ['so-called "MAA"']


def test_empty_file_gives_an_empty_table(tmp_path):
    path = tmp_path / "MRDEF.RRF"
    path.write_bytes(b"")
    table = read_rrf_table(path, ["CUI", "DEF"])
    assert table.num_rows == 0
    assert table.column_names == ["CUI", "DEF"]


def test_invalid_utf8_is_an_input_error(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes((ROW_1 + "\n").encode() + (ROW_2 + "\n").encode().replace(b"Dipalmitoyl", b"Dipalm\xffitoyl"))
    with pytest.raises(InputError, match=r"MRCONSO\.RRF"):
        read_rrf_table(path, ["CUI", "STR"])


@pytest.mark.parametrize("bad", [drop_field(ROW_3, 11), ROW_3.replace("C0000052", "C52", 1)], ids=["missing-field", "bad-cui"])
def test_line_numbers_count_blank_lines(tmp_path, bad):
    # a blank line is itself malformed RRF: it is reported, with its true line number
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2, "", bad])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    assert exc_info.value.line == 3
    # and a bad row after good ones keeps exact numbering
    path = write(tmp_path, "MRCONSO.RRF", [ROW_1, ROW_2, ROW_1, bad])
    with pytest.raises(InputError) as exc_info:
        read_rrf_table(path, ["CUI"])
    assert exc_info.value.line == 4


# --- genuine UMLS release lines (../shared/data) ------------------------------------------------


@pytest.mark.shared
def test_genuine_umls_fixture_lines():
    if not SHARED_META.is_dir():
        pytest.skip(f"../shared/data not present: {SHARED_META} is missing (only in CI and dev checkouts)")
    counts = {}
    for name in ("MRCONSO.RRF", "MRSTY.RRF", "MRDEF.RRF"):
        path = SHARED_META / name
        table = read_rrf_table(path, COLUMNS[name])
        assert table.num_rows == line_count(path), name
        assert table.column_names == COLUMNS[name]
        counts[name] = table.num_rows
        cuis = table.column("CUI").to_pylist()
        assert all(c.startswith("C") and len(c) == 8 for c in cuis)
    conso = read_rrf_table(SHARED_META / "MRCONSO.RRF", ["CUI", "LAT", "SAB", "STR"])
    first = conso.to_pylist()[0]
    assert first["CUI"] == "C0000005"
    assert first["LAT"] == "ENG" and first["SAB"] == "MSH"
    assert first["STR"] == "(131)I-Macroaggregated Albumin"
    assert all(n > 0 for n in counts.values())
    # every concept with a semantic type has a name
    sty_cuis = set(read_rrf_table(SHARED_META / "MRSTY.RRF", ["CUI"]).column("CUI").to_pylist())
    assert sty_cuis <= set(conso.column("CUI").to_pylist())


# --- the committed sample vocabulary -------------------------------------------------------------


def test_committed_sample_parses_and_every_concept_has_a_semantic_type():
    tables = {}
    for name in ("MRCONSO.RRF", "MRSTY.RRF", "MRDEF.RRF", "MRREL.RRF"):
        path = SAMPLE / name
        tables[name] = read_rrf_table(path, COLUMNS[name])
        assert tables[name].num_rows == line_count(path) > 0, name
    conso_cuis = set(tables["MRCONSO.RRF"].column("CUI").to_pylist())
    sty_cuis = set(tables["MRSTY.RRF"].column("CUI").to_pylist())
    missing = sorted(conso_cuis - sty_cuis)
    assert not missing, f"MRCONSO CUIs without an MRSTY row: {missing[:10]}"
    assert set(tables["MRDEF.RRF"].column("CUI").to_pylist()) <= conso_cuis
    langs = set(tables["MRCONSO.RRF"].column("LAT").to_pylist())
    assert "ENG" in langs and len(langs) > 1  # a multilingual sample


# --- contracts a one-token change would break (benchmarks/mutation.py) ---------------------------

ROW = "C0000005|ENG|P|L0000005|PF|S0007492|Y|A26634265||M0019694|D012711|MSH|PEP|D012711|Albumin|0|N|256|"


def _rrf(tmp_path: Path, lines: list[str], name: str = "MRCONSO.RRF", end: str = "\n") -> Path:
    """`end` after every line (the last one too); "" leaves the last line without a newline."""
    path = tmp_path / name
    path.write_bytes("".join(line + (end or "\n") for line in lines)[: None if end or not lines else -1].encode("utf-8"))
    return path


def _error(path: Path, columns=("CUI", "LAT", "ISPREF", "SRL"), **kw) -> InputError:
    with pytest.raises(InputError) as exc:
        rrf.read_rrf_table(path, list(columns), **kw) if not kw else list(rrf.read_rrf(path, list(columns), **kw))
    return exc.value


VALUES = st.one_of(
    st.sampled_from(["C0000005", "C1234567", "ENG", "FRE", "Y", "N", "0", "9", "EN1", "ÉNG", "C000000٣", "CA123456",
                     "C00000005", "c0000005", "C000000", "", "Y ", "YN", "١", "E", "ENGL", "eng", "T116"]),
    st.text(alphabet="C0123456789ENGYNÉ٣é ", max_size=9),
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(VALUES, min_size=1, max_size=40), column=st.sampled_from(["CUI", "LAT", "SRL", "ISPREF"]))
def test_the_fast_pre_check_agrees_with_the_pattern(values, column):
    """`_cheap_ok` is exact: never accepts what the pattern refuses (LAT 'EN1' or 'ÉNG', a
    CUI with a non-ASCII digit), and accepts every valid value (else the slow regex runs)."""
    import re

    pattern = rrf.PATTERNS["MRCONSO.RRF"][column]
    cheap = rrf._cheap_ok(pa.array(values, pa.string()), column)
    assert cheap is not None
    assert cheap.to_pylist() == [bool(re.fullmatch(pattern, v, re.ASCII)) for v in values], column


@pytest.mark.parametrize("field,bad", [("LAT", "EN1"), ("LAT", "ÉNG"), ("CUI", "C000000٣"), ("CUI", "CA123456"), ("SRL", "١")])
def test_values_the_pattern_forbids_are_refused_with_line_and_field(tmp_path, field, bad):
    fields = ROW.split("|")
    fields[rrf.COLUMNS["MRCONSO.RRF"].index(field)] = bad
    path = _rrf(tmp_path, [ROW, ROW, "|".join(fields), ROW])
    err = _error(path)
    assert (err.line, err.field) == (3, field) and repr(bad) in str(err)


def test_undecodable_byte_names_line_and_column(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(((ROW + "\n") * 2).encode() + ROW.encode().replace(b"Albumin", b"Alb\xffumin") + b"\n")
    err = _error(path, columns=("CUI", "STR"))
    assert (err.line, err.field) == (3, "STR") and f"byte 0xff at column {ROW.index('Albumin') + 4}" in str(err), str(err)
    assert rrf.read_rrf_table(path, ["CUI"]).num_rows == 3  # a column not read is not decoded (as pyarrow skips it)


def test_the_last_line_without_a_newline_is_checked_too(tmp_path):
    path = _rrf(tmp_path, [ROW, ROW.replace("C0000005", "X0000005", 1)], end="")
    err = _error(path)
    assert (err.line, err.field) == (2, "CUI")


def test_line_numbers_follow_every_line_break_pyarrow_knows(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes((ROW + "\r\n" + ROW + "\r" + ROW + "\n" + ROW[:-1] + "\n" + ROW + "\n").encode())
    err = _error(path)
    assert err.line == 4 and "found 17" in str(err)


def test_a_blank_line_is_malformed(tmp_path):
    err = _error(_rrf(tmp_path, [ROW, ROW, "", ROW]))
    assert err.line == 3 and "found 0" in str(err)


def test_missing_trailing_bar_and_text_after_it(tmp_path):
    assert _error(_rrf(tmp_path, [ROW, ROW + "x"])).line == 2
    err = _error(_rrf(tmp_path, [ROW, ROW, ROW + "x"]), columns=("STR",))
    assert err.line == 3 and "end with '|'" in str(err)


def test_a_line_longer_than_a_block_is_an_input_error_not_a_crash(tmp_path):
    path = _rrf(tmp_path, [ROW] * 3)
    err = _error(path, block_size=64)
    assert "unreadable RRF" in str(err)


def test_a_folder_and_an_unreadable_file_are_input_errors(tmp_path, monkeypatch):
    (tmp_path / "MRCONSO.RRF").mkdir()
    assert "found a folder" in str(_error(tmp_path / "MRCONSO.RRF"))

    def fail(*_a):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(rrf, "_first_problem", fail)
    assert "cannot be read (Input/output error)" in str(rrf._located(tmp_path / "MRCONSO.RRF", "MRCONSO.RRF", [], {}, InputError("x", "y")))


def test_a_problem_only_pyarrow_sees_keeps_its_message(tmp_path, monkeypatch):
    monkeypatch.setattr(rrf, "_first_problem", lambda *_a: None)
    fallback = InputError("x", "y")
    assert rrf._located(tmp_path, "MRCONSO.RRF", [], {}, fallback) is fallback


def test_valid_rows_stream_in_order_with_empty_fields_as_empty_strings(tmp_path):
    rows = [ROW, ROW.replace("C0000005", "C0000006", 1).replace("||M0019694", "|X|M0019694")]
    table = rrf.read_rrf_table(_rrf(tmp_path, rows), ["CUI", "SAUI", "ISPREF"])
    assert table.to_pylist() == [{"CUI": "C0000005", "SAUI": "", "ISPREF": "Y"}, {"CUI": "C0000006", "SAUI": "X", "ISPREF": "Y"}]
    assert rrf.read_rrf_table(_rrf(tmp_path, []), ["CUI"]).num_rows == 0
