"""Language ID in batches (langid.detect_many): the same answers as one text at a time,
kept only inside `detected_in_batches`."""
from __future__ import annotations

import pytest

from tasks.translation import langid
from tasks.translation.gates import detect_language, detect_languages

pytest.importorskip("lingua")

TEXTS = [
    "Type 2 diabetes mellitus with hypertension", "Diabète de type 2 et hypertension artérielle",
    "Diabetes mellitus tipo 2 con hipertensión", "Сахарный диабет 2 типа", "2型糖尿病", "２型糖尿病の治療",
    "Typ-2-Diabetes", "", "12345", "Kidney", "insuffisance rénale aiguë", "fiebre tifoidea",
]


@pytest.mark.parametrize("backend,expected", [("lingua-subset", "fr"), ("lingua-subset", "pt"), ("lingua", None)])
def test_a_batch_answers_as_one_text_at_a_time(backend, expected):
    one_by_one = [detect_language(t, expected, backend) for t in TEXTS]
    with langid.detected_in_batches():
        detect_languages(TEXTS + [None, 3], expected, backend)  # what is not text is left to the gates
        assert len(langid._detected()) == len(set(TEXTS))
        assert [detect_language(t, expected, backend) for t in TEXTS] == one_by_one
    assert langid._detected() == {}  # gone with the block
    # (with all 75 languages lingua calls the first one Latin: a batch answers it the same)
    assert one_by_one[:6] == (["en"] if backend == "lingua-subset" else ["la"]) + ["fr", "es", "ru", "zh-cn", "ja"]


def test_inside_the_block_the_batch_answers_are_used(monkeypatch):
    with langid.detected_in_batches():
        detect_languages(["Insuffisance cardiaque congestive"], "fr", "lingua-subset")

        def no_single_calls(codes=None):
            raise AssertionError("detected one at a time")

        monkeypatch.setattr(langid, "lingua_detector", no_single_calls)
        assert detect_language("Insuffisance cardiaque congestive", "fr", "lingua-subset") == "fr"
        with pytest.raises(AssertionError):  # a text not in the batch is detected on its own
            detect_language("Pneumonie", "fr", "lingua-subset")


def test_other_backends_keep_nothing():
    with langid.detected_in_batches():
        detect_languages(TEXTS, "fr", "langdetect")
        assert langid._detected() == {}
