"""The confusion sets' name similarity over trigram ids (confusion.NameShingles) is the
character-trigram Jaccard of the names, exactly: the tiers' order must not move."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from common.text import lexical_similarity
from tasks.allocation.confusion import ConceptInfo, NameShingles, similarity

names = st.text(alphabet=st.sampled_from(list("abcé ABC-1ДЖ糖尿")), max_size=14)


def _info(i: int, name: str) -> ConceptInfo:
    return ConceptInfo(cui=f"C{i:07d}", tui="T047", group="DISO", name=name)


@settings(max_examples=300, deadline=None)
@given(st.lists(names, min_size=2, max_size=6))
def test_similarity_over_ids_is_the_trigram_jaccard_of_the_names(batch):
    shingles = NameShingles()  # one memo for the batch: ids shared across names, as in a build
    infos = [_info(i, n) for i, n in enumerate(batch)]
    for a in infos:
        for b in infos:
            assert similarity(a, b, shingles) == lexical_similarity(a.name, b.name)


def test_each_name_is_shingled_once_and_trigrams_share_ids():
    shingles = NameShingles()
    a, b = _info(1, "Diabetes mellitus"), _info(2, "Diabetes insipidus")
    assert similarity(a, b, shingles) == lexical_similarity(a.name, b.name) == 7 / 24
    assert len(shingles) == 2
    assert shingles.of(a) is shingles.of(a)
    assert len(shingles.of(a) & shingles.of(b)) == 7  # "dia" "iab" "abe" "bet" "ete" "tes" "es "
    assert similarity(_info(3, ""), _info(4, ""), shingles) == 1.0  # two empty names: as lexical_similarity
