"""umls.obo: OBO 1.2 stanza parser on in-memory lines."""
from __future__ import annotations

import pytest

from umls.obo import OboFormatError, OboTerm, parse_obo

DOC = r'''format-version: 1.2
data-version: doid/releases/2016-09-01
ontology: doid

[Term]
id: DOID:0001816
name: angiosarcoma
def: "A vascular cancer that derives_from the cells that line the walls of blood vessels." [url:http\://en.wikipedia.org/wiki/Hemangiosarcoma]
comment: free text: with a colon
synonym: "hemangiosarcoma" EXACT []
synonym: "malignant \"hemangioendothelioma\"" RELATED [ORDO:263413]
synonym: "angiosarcoma NOS" []
xref: UMLS_CUI:C0018923 {source="MONDO:equivalentTo"}
xref: MESH:D006394
is_a: DOID:175 ! vascular cancer
is_a: DOID:0050687 {source="x"} ! cell type cancer

[Term]
id: DOID:0000000
name: obsolete Hodgkin's disease! (old)
is_obsolete: true

[Typedef]
id: derives_from
name: derives from
is_a: RO:0000001 ! typedefs have parents too
xref: RO:0001000

[Term]
id: DOID:4
name: disease
'''


def parse(text: str, path: str = "doid.obo") -> list[OboTerm]:
    return list(parse_obo(text.splitlines(keepends=True), path))


@pytest.fixture(scope="module")
def terms() -> dict[str, OboTerm]:
    return {t.id: t for t in parse(DOC)}


def test_only_term_stanzas_are_yielded(terms):
    assert list(terms) == ["DOID:0001816", "DOID:0000000", "DOID:4"]
    assert "derives_from" not in terms  # [Typedef] ignored


def test_typedef_tags_do_not_leak_into_the_previous_term(terms):
    obsolete = terms["DOID:0000000"]
    assert obsolete.parents == []
    assert obsolete.xrefs == []
    assert obsolete.name == "obsolete Hodgkin's disease! (old)"


def test_name_and_definition(terms):
    t = terms["DOID:0001816"]
    assert t.name == "angiosarcoma"
    # the quoted text only: the trailing [dbxref] list is dropped
    assert t.definition == "A vascular cancer that derives_from the cells that line the walls of blood vessels."


def test_synonyms_with_scope_and_escaped_quotes(terms):
    syns = terms["DOID:0001816"].synonyms
    assert syns[:2] == [
        ("hemangiosarcoma", "EXACT"),
        ('malignant "hemangioendothelioma"', "RELATED"),
    ]
    # OBO 1.2 allows a scope-less synonym: its text is kept and it is never taken as EXACT
    # (derive_sample only uses EXACT synonyms).
    assert syns[2][0] == "angiosarcoma NOS"
    assert syns[2][1] != "EXACT"


def test_xrefs_drop_trailing_modifiers(terms):
    assert terms["DOID:0001816"].xrefs == ["UMLS_CUI:C0018923", "MESH:D006394"]


def test_is_a_drops_comment_and_modifiers(terms):
    assert terms["DOID:0001816"].parents == ["DOID:175", "DOID:0050687"]


def test_obsolete_flag(terms):
    assert terms["DOID:0000000"].obsolete is True
    assert terms["DOID:0001816"].obsolete is False
    assert terms["DOID:4"].obsolete is False


def test_is_obsolete_false_is_not_obsolete():
    (t,) = parse("[Term]\nid: X:1\nis_obsolete: false\n")
    assert t.obsolete is False


def test_last_term_without_trailing_blank_line(terms):
    t = terms["DOID:4"]
    assert t == OboTerm(id="DOID:4", name="disease")


def test_header_and_comment_lines_are_skipped():
    text = "format-version: 1.2\nremark no colon in the header is fine\n[Term]\n! a comment line\nid: X:1\nname: x\n"
    assert parse(text) == [OboTerm(id="X:1", name="x")]


def test_crlf_line_endings():
    (t,) = parse("[Term]\r\nid: HP:0001945\r\nname: Fever\r\nis_a: HP:0025142 ! Constitutional symptom\r\n")
    assert (t.id, t.name, t.parents) == ("HP:0001945", "Fever", ["HP:0025142"])


def test_malformed_line_raises_naming_the_line():
    text = "format-version: 1.2\n\n[Term]\nid: X:1\nname: x\nthis line has no colon\n"
    with pytest.raises(OboFormatError) as exc_info:
        parse(text, "bad.obo")
    msg = str(exc_info.value)
    assert msg.startswith("bad.obo:6: ")
    assert "this line has no colon" in msg
    assert isinstance(exc_info.value, ValueError)


def test_tag_before_id_raises_naming_the_line():
    with pytest.raises(OboFormatError, match=r"^x\.obo:3: tag 'name' before the stanza's id"):
        parse("[Term]\n\nname: orphan\nid: X:1\n", "x.obo")


def test_unquoted_synonym_raises_naming_the_line():
    with pytest.raises(OboFormatError, match=r"^x\.obo:4: synonym"):
        parse("[Term]\nid: X:1\nname: x\nsynonym: fever EXACT []\n", "x.obo")


def test_malformed_lines_outside_term_stanzas_are_ignored():
    text = "[Typedef]\nid: part_of\nno colon here\n[Term]\nid: X:1\n"
    assert [t.id for t in parse(text)] == ["X:1"]


def test_parse_is_lazy_and_yields_terms_before_a_later_error():
    gen = parse_obo(iter(["[Term]\n", "id: X:1\n", "[Term]\n", "id: X:2\n", "broken\n"]), "lazy.obo")
    assert next(gen).id == "X:1"
    with pytest.raises(OboFormatError, match=r"lazy\.obo:5"):
        next(gen)
