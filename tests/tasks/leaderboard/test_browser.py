"""The leaderboard page as people use it: opened from disk in headless Chromium (Debian's,
driven over the DevTools protocol on a pipe, tests/chromium.py). The tables render, a click
on a column header reorders them, nothing is requested from the network, and a submitted
name holding a script tag shows as text and never runs."""
from __future__ import annotations

import pytest

from tests.chromium import Browser, executable
from tests.tasks.leaderboard.boards import SCRIPT_NAME, evaluation_folders, leaderboard

CHROMIUM = executable()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium; .ci/run installs it)")

NAMES = "[...document.querySelectorAll('#systems tbody tr')].map(r => r.cells[1].textContent)"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    folders = evaluation_folders(root)
    r = leaderboard(folders, root / "site")
    assert r.exit_code == 0, r.output
    browser = Browser(CHROMIUM)
    try:
        browser.open(root / "site" / "index.html")
        yield browser
    finally:
        browser.close()


def test_the_table_renders_with_every_system_and_its_range(page):
    assert page.evaluate(NAMES) == [SCRIPT_NAME, "bm25"]
    assert page.evaluate("[...document.querySelectorAll('#systems tbody tr')].map(r => r.cells[0].textContent)") == ["1-2", "1-2"]
    assert page.evaluate("document.querySelectorAll('table').length") == 1 + 5 + 1  # systems, 5 cells, about
    # the stylesheet came from its file beside the page
    assert page.evaluate("getComputedStyle(document.querySelector('#systems th')).cursor") == "pointer"
    assert page.evaluate("document.querySelectorAll('svg circle').length") == 2  # one gap per system (ja)


def test_a_click_on_a_column_header_reorders_the_table(page):
    score = "#systems thead th:nth-child(5)"  # nDCG@10
    page.click(score)  # first click: descending, the order it already has
    assert page.evaluate(NAMES) == [SCRIPT_NAME, "bm25"]
    page.click(score)  # second: ascending
    assert page.evaluate(NAMES) == ["bm25", SCRIPT_NAME]
    assert page.evaluate(f"document.querySelector('{score}').getAttribute('aria-sort')") == "ascending"
    page.click("#systems thead th:nth-child(11)")  # gap ja, descending: bm25 loses more (+0.5 against 0)
    assert page.evaluate(NAMES) == ["bm25", SCRIPT_NAME]
    cell = "table[data-cell='cd/ja']"
    before = page.evaluate(f"[...document.querySelectorAll(\"{cell} tbody tr\")].map(r => r.dataset.system)")
    page.click(f"{cell} thead th:nth-child(3)")
    page.click(f"{cell} thead th:nth-child(3)")
    assert before == ["sub", "bm25"]
    assert page.evaluate(f"[...document.querySelectorAll(\"{cell} tbody tr\")].map(r => r.dataset.system)") == ["bm25", "sub"]


def test_nothing_is_requested_from_the_network(page):
    urls = page.requests()
    assert sorted(u.rsplit("/", 1)[1] for u in urls) == ["index.html", "sort.js", "style.css"]
    assert all(u.startswith("file://") for u in urls)


def test_a_submitted_script_tag_shows_as_text_and_never_runs(page):
    assert page.evaluate("document.title") == "MMed-Bench-IR leaderboard: release 0.0.1"  # not "pwned"
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert not [e for e in page.events if e.get("method") == "Page.javascriptDialogOpening"]
    assert page.evaluate("document.querySelector('#systems tbody tr a').getAttribute('href')") == "https://example.org/paper"
