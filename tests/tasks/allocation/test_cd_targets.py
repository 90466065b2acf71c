"""cd_targets: each language gets enough targets it can name, in the seeded order."""
from hypothesis import given, strategies as st

from tasks.allocation.stage import cd_targets


def test_scarce_language_gets_its_own_targets():
    eligible = [f"C{i:04d}" for i in range(1000)]
    zh = {c for i, c in enumerate(eligible) if i % 50 == 7}  # 20 nameable, none in the first 100
    can = lambda c, lang: lang == "en" or c in zh  # noqa: E731
    targets = cd_targets(eligible, ["en", "zh"], quota=3, can_name=can, floor=100, per_language=4)
    assert targets[:100] == eligible[:100]
    # 2 among the first 100, 1 among English's 12 fresh draws (C0107), 12 more drawn for zh
    assert sum(c in zh for c in targets) == 2 + 1 + 12
    assert targets == sorted(targets, key=eligible.index)


def test_language_that_names_nothing_adds_nothing():
    eligible = [f"C{i}" for i in range(50)]
    # English draws its 10 beyond the floor; Russian finds nothing to add
    assert cd_targets(eligible, ["en", "ru"], 5, lambda c, lang: lang == "en", floor=10, per_language=2) == eligible[:20]


@given(st.lists(st.integers(0, 3), min_size=0, max_size=200), st.integers(0, 20), st.integers(0, 30))
def test_every_language_reaches_its_share_or_runs_out(masks, quota, floor):
    eligible = [f"C{i:03d}" for i in range(len(masks))]
    langs = ["a", "b"]
    can = lambda c, lang: bool(masks[int(c[1:])] & (1 << langs.index(lang)))  # noqa: E731
    targets = cd_targets(eligible, langs, quota, can, floor=floor, per_language=3)
    assert len(set(targets)) == len(targets) and set(targets) <= set(eligible)
    assert targets == [c for c in eligible if c in set(targets)]
    for lang in langs:
        nameable = [c for c in eligible if can(c, lang)]
        assert sum(can(c, lang) for c in targets) >= min(3 * quota, len(nameable))
