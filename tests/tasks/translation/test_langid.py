"""tasks.translation.langid: every backend names clear sentences correctly, offline and repeatably."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from tasks.translation import langid
from tests.conftest import ROOT

HAS_LINGUA = importlib.util.find_spec("lingua") is not None
needs_lingua = pytest.mark.skipif(not HAS_LINGUA, reason="lingua-language-detector not installed (optional backend)")

# Written for these tests; the registry's detector_codes for each language.
SENTENCES = {
    "en": ("The doctor asked the patient how long the chest pain had lasted before he came to the hospital.", {"en"}),
    "fr": ("Le médecin a demandé au patient depuis combien de temps il avait mal à la poitrine avant de venir à l'hôpital.", {"fr"}),
    "es": ("El médico le preguntó al paciente cuánto tiempo había durado el dolor en el pecho antes de llegar al hospital.", {"es"}),
    "ru": ("Врач спросил пациента, как долго продолжалась боль в груди, прежде чем он пришёл в больницу.", {"ru"}),
    "zh": ("医生问病人在来医院之前胸痛持续了多长时间，以及疼痛是否向左臂放射。", {"zh-cn", "zh-tw"}),
    "ja": ("医者は患者に、病院に来る前に胸の痛みがどのくらい続いていたのかを尋ねました。", {"ja"}),
}

BACKENDS = [
    "langdetect",
    pytest.param("lingua", marks=needs_lingua),
    pytest.param("lingua-subset", marks=needs_lingua),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_clear_sentences(backend, lang):
    text, codes = SENTENCES[lang]
    assert langid.detect(text, backend) in codes


@pytest.mark.parametrize("backend", BACKENDS)
def test_deterministic(backend):
    for text, _ in SENTENCES.values():
        assert langid.detect(text, backend) == langid.detect(text, backend)
    # langdetect is randomised unless seeded: a short, ambiguous text shows it
    assert len({langid.detect("Patient stable", backend) for _ in range(20)}) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_letters_no_answer(backend):
    assert langid.detect("", backend) is None
    assert langid.detect("120 / 80 — 37.5 %", backend) is None


def test_default_is_langdetect():
    assert langid.DEFAULT_BACKEND == "langdetect"
    assert langid.detect(SENTENCES["fr"][0]) == "fr"


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown language-ID backend 'fasttext'"):
        langid.detect("The patient has a fever.", "fasttext")


def test_available_backends():
    got = langid.available_backends()
    assert got[0] == "langdetect"  # the required dependency, always there
    assert set(got) <= set(langid.BACKENDS)
    assert ("lingua" in got) == HAS_LINGUA and ("lingua-subset" in got) == HAS_LINGUA


@needs_lingua
def test_lingua_codes_use_langdetect_vocabulary():
    assert langid.detect(SENTENCES["zh"][0], "lingua") == "zh-cn"  # never lingua's bare "zh"
    nb = "Legen sa at pasienten må ta medisinen hver morgen i to uker og komme tilbake etterpå."
    assert langid.detect(nb, "lingua") == "no"  # Bokmål: langdetect's "no", not "nb"


@needs_lingua
def test_lingua_subset_answers_within_subset():
    # Catalan is not in the subset: the answer must be a subset language
    ca = "El metge va preguntar al pacient quant de temps havia durat el dolor al pit."
    got = langid.detect(ca, "lingua-subset")
    assert got is not None and got.split("-")[0] in langid.LINGUA_SUBSET


_OFFLINE_PROBE = """
import socket, sys
def _blocked(*a, **k):
    raise OSError("network blocked by test_langid")
socket.socket.connect = socket.socket.connect_ex = _blocked
socket.create_connection = socket.getaddrinfo = _blocked
sys.path.insert(0, sys.argv[1])
from tasks.translation.langid import detect
print(detect("Врач спросил пациента, как долго продолжалась боль в груди.", sys.argv[2]))
print(detect("医者は患者に胸の痛みについて尋ねました。", sys.argv[2]))
"""


@pytest.mark.parametrize("backend", [pytest.param("lingua-subset", marks=needs_lingua), "langdetect"])
def test_loads_offline_with_sockets_blocked(backend):
    """A fresh interpreter whose sockets refuse to connect builds and runs the backend."""
    out = subprocess.run([sys.executable, "-c", _OFFLINE_PROBE, str(ROOT), backend], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ru", "ja"]


@needs_lingua
def test_loads_in_a_network_namespace():
    """Stronger: no network interface at all (Linux user namespaces; skipped where refused)."""
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn not available here")
    out = subprocess.run([unshare, "-rn", sys.executable, "-c", _OFFLINE_PROBE, str(ROOT), "lingua-subset"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ru", "ja"]


@needs_lingua
def test_lingua_subset_adds_the_expected_language():
    pl = "Lekarz zapytał pacjenta, jak długo trwał ból w klatce piersiowej przed przyjazdem do szpitala."
    assert langid.detect(pl, "lingua-subset") != "pl"  # Polish is outside the subset
    assert langid.detect(pl, "lingua-subset", languages=["pl"]) == "pl"
    assert langid.detect(SENTENCES["zh"][0], "lingua-subset", languages=["zh-cn", "pt-BR"]) == "zh-cn"
    with pytest.raises(ValueError, match="no model for my"):
        langid.detect("text", "lingua-subset", languages=["my"])


def test_langdetect_first_use_from_many_threads():
    """The first calls race to load langdetect's global profiles; every answer must still be right."""
    code = f"""
import sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, sys.argv[1])
from tasks.translation.langid import detect
text = {SENTENCES["es"][0]!r}
with ThreadPoolExecutor(8) as pool:
    print(sorted(set(pool.map(lambda _: detect(text), range(32)))))
"""
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['es']"
