"""The site is a product: it builds strictly and reads well in a real browser.

The site is built once with ``mkdocs build --strict`` into a temporary folder,
served on the loopback address, and opened in headless Chromium (the
fixtures are in this folder's conftest.py, shared with the steppers' tests).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.site.conftest import ROOT, WINDOW_WIDTH


def _nav_pages() -> list[str]:
    """The lesson files in the order of mkdocs.yml's nav."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages: list[str] = []

    def walk(entry):
        if isinstance(entry, str):
            pages.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)
        elif isinstance(entry, list):
            for item in entry:
                walk(item)

    walk(config["nav"])
    return pages


def _page_title(markdown_file: str) -> str:
    text = (ROOT / "lessons" / markdown_file).read_text()
    match = re.search(r"^# (.+)$", text, re.MULTILINE)
    assert match, f"{markdown_file} has no '# ' title"
    return match.group(1).strip().replace("`", "")


def test_site_builds_strictly_with_every_lesson(built_site: Path):
    for page in _nav_pages():
        html = built_site / page.replace(".md", ".html")
        assert html.exists(), f"{page} was not built"


def test_site_needs_no_network(built_site: Path):
    """No page pulls fonts, scripts or styles from another host."""
    external = re.compile(r"""(?:src|href)=["']https?://(?!127\.0\.0\.1|localhost)""")
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        for match in external.finditer(text):
            tag_start = text.rfind("<", 0, match.start())
            tag = text[tag_start : match.end() + 60]
            # Links a reader may click are fine; resources the page loads are not.
            assert tag.startswith("<a "), f"{html.name} loads a remote resource: {tag}"


def _console_errors(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.mark.parametrize("page", _nav_pages())
def test_page_renders_title_and_code(browser, served_site, page):
    from selenium.webdriver.common.by import By

    browser.get(f"{served_site}/{page.replace('.md', '.html')}")
    heading = browser.find_element(By.CSS_SELECTOR, "article h1")
    assert heading.text.strip().rstrip("¶").strip() == _page_title(page)
    code_blocks = browser.find_elements(By.CSS_SELECTOR, "article pre code")
    assert code_blocks, f"{page} shows no code"
    assert any(block.text.strip() for block in code_blocks)
    assert _console_errors(browser) == [], f"console errors on {page}"


def _figure_pages() -> set[str]:
    return {page for page in _nav_pages() if "```figure" in (ROOT / "lessons" / page).read_text()}


def test_graph_pictures_load(browser, served_site):
    """Every picture on the site loads; the chapters show graphs, the rewrites before and after."""
    from selenium.webdriver.common.by import By

    pictures_per_page = {}
    for page in _nav_pages():
        browser.get(f"{served_site}/{page.replace('.md', '.html')}")
        images = browser.find_elements(By.CSS_SELECTOR, "article img")
        for image in images:
            width = browser.execute_script(
                "return arguments[0].complete && arguments[0].naturalWidth", image
            )
            assert width, f"{image.get_attribute('src')} does not load on {page}"
        pictures_per_page[page] = len(images)
    for page in _nav_pages():
        if re.match(r"ch0[1-9]_", page):
            assert pictures_per_page[page] >= 1, f"{page} shows no graph"
    for page in ("ch03_ir.md", "ch05_transformer.md", "ch07_fusion.md", "ch08_compile.md"):
        assert pictures_per_page[page] >= 3, f"{page} does not show its rewrite before and after"
    for page in _figure_pages():
        assert pictures_per_page[page] >= 1, f"{page} has figure blocks but shows no picture"


# Measured in the page: every code block (closed <details> opened first, so
# their code counts too) and the first picture of the article.
MEASURE = """
for (const d of document.querySelectorAll('article details')) d.open = true;
const article = document.querySelector('article');
const wide = [];
for (const pre of article.querySelectorAll('pre')) {
  const code = pre.querySelector('code') || pre;
  const box = pre.getBoundingClientRect();
  const overflow = Math.max(code.scrollWidth - code.clientWidth, pre.scrollWidth - pre.clientWidth,
                            box.right - article.getBoundingClientRect().right);
  if (overflow > 1) wide.push([Math.round(overflow), code.textContent.trim().split('\\n')[0]]);
}
const image = article.querySelector('img');
const top = image ? image.getBoundingClientRect().top + window.scrollY : null;
return [article.clientWidth, wide, top, window.innerHeight];
"""


@pytest.mark.parametrize("page", _nav_pages())
def test_code_fits_its_column_and_the_first_picture_is_near_the_top(browser, served_site, page):
    """At 1280 px no code block scrolls sideways, and a page's first picture is within
    its first two screens (so a reader sees a graph before scrolling far)."""
    browser.get(f"{served_site}/{page.replace('.md', '.html')}")
    column, wide, first_picture, screen = browser.execute_script(MEASURE)
    assert column >= 900, f"{page}: the text column is {column} px wide at {WINDOW_WIDTH} px"
    assert wide == [], (
        f"{page}: code blocks wider than their column at {WINDOW_WIDTH} px "
        f"(overflow in px, first line): {wide}"
    )
    if first_picture is not None:
        assert first_picture <= 2 * screen, (
            f"{page}: the first picture starts at {first_picture:.0f} px, below the first two "
            f"screens ({2 * screen} px); put a figure near the top"
        )
    else:
        assert page not in _figure_pages(), f"{page} has figure blocks but shows no picture"


def test_next_links_walk_the_chapters_in_order(browser, served_site):
    """Following the footer's "Next" link from the home page visits every chapter in order."""
    from selenium.webdriver.common.by import By

    expected = [page.replace(".md", ".html") for page in _nav_pages()]
    browser.get(f"{served_site}/{expected[0]}")
    visited = [expected[0]]
    for _ in expected[1:]:
        next_link = browser.find_element(By.CSS_SELECTOR, "a.md-footer__link--next")
        next_link.click()
        visited.append(browser.current_url.rsplit("/", 1)[-1].split("#")[0])
    assert visited == expected
    assert _console_errors(browser) == []
