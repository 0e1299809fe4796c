"""The router and the home page in a real browser."""

import pytest

from tests.e2e.conftest import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def test_home_renders_in_english(page):
    page.open()
    assert "Attention is kernel regression" in page.locator("h1").first.inner_text()
    assert page.locator('[data-testid="stSidebarNav"]').count() == 1
    assert_no_exception(page)


def test_home_renders_in_chinese_from_short_code(page):
    page.open(lang="zh")
    assert "注意力就是核回归" in page.locator("h1").first.inner_text()
    assert_no_exception(page)


def test_language_switch_changes_text(page):
    page.open()
    page.locator('[data-testid="stSidebar"]').get_by_text("zh", exact=True).click()
    page.wait_for_function(
        "(document.querySelector('h1')?.innerText || '').includes('注意力')", timeout=30_000
    )
    assert "lang=" in page.url


def test_language_survives_page_switches_and_can_be_changed_back(page):
    page.open(lang="zh")
    page.locator('[data-testid="stMain"] [data-testid="stPageLink"]').first.click()
    page.wait_for_function(
        "(document.querySelector('h1')?.innerText || '').includes('核回归')", timeout=60_000
    )
    page.locator('[data-testid="stSidebarNav"] a').nth(3).click()  # scaled dot-product
    page.wait_for_function(
        "(document.querySelector('h1')?.innerText || '').includes('缩放点积')", timeout=60_000
    )
    page.locator('[data-testid="stSidebar"]').get_by_text("en", exact=True).click()
    page.wait_for_function(
        "(document.querySelector('h1')?.innerText || '').includes('Scaled')", timeout=60_000
    )
    page.locator('[data-testid="stSidebarNav"] a').nth(1).click()  # kernel regression
    page.wait_for_function(
        "(document.querySelector('h1')?.innerText || '').includes('Kernel')", timeout=60_000
    )
    assert_no_exception(page)


@pytest.mark.parametrize("path", ["home", "home?lang=zh"])
def test_home_path_opens_the_start_page(page, app_url, path):
    """Issue 13.3: ``/home`` opens the start page, with no "Page not found" pop-up."""
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    page.wait_for_timeout(600)  # the pop-up would come with the navigation message
    heading = page.locator("h1").first.inner_text()
    assert "Attention is kernel regression" in heading or "注意力就是核回归" in heading
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[role="dialog"]').count() == 0
    assert_no_exception(page)
