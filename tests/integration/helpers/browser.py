"""The headless Chromium the page tests drive (Debian's chromium and chromium-driver, through
python3-selenium): one fixture for every test of a page in a real browser."""
from __future__ import annotations

import shutil
from typing import Any, Iterator

import pytest


def _chromium() -> tuple[str, str]:
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not browser or not driver:
        pytest.fail("headless Chromium is missing: `apt-get install chromium chromium-driver "
                    "python3-selenium` (./run_tests.sh installs them where they are debs, as "
                    "on Debian; on Ubuntu they are only the chromium snap, which these tests "
                    "cannot use: README, Developing)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("python3-selenium is missing: `apt-get install python3-selenium`")
    return browser, driver


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    binary, driver_path = _chromium()
    options = Options()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for_url(driver: Any, ends_or_holds: str, timeout_s: float = 15.0) -> None:
    """Wait for the navigation a click started: `click()` returns before the next page has
    loaded, and `current_url` is the old page's until then. Fails naming the URL it stayed at."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, timeout_s).until(
            lambda d: ends_or_holds in d.current_url
            and d.execute_script("return document.readyState") == "complete")
    except TimeoutException:
        raise AssertionError(f"still at {driver.current_url} after {timeout_s:g} s, waiting "
                             f"for a URL with {ends_or_holds!r}:\n{driver.page_source[:2000]}")
