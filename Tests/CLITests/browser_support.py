"""Headless Chromium for the HTML report's browser tests (Debian's chromium and chromium-driver, Selenium), and
the failures a test collects."""
import os

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

failures = []


def check(ok, case, what):
    """Records `what` as failed for `case` unless `ok`; returns `ok`."""
    if not ok:
        failures.append(f"{case}: {what}")
    return ok


def browser(extra_flags=(), console_logs=False):
    """A headless Chromium at 1400×1000 in sRGB; `console_logs` keeps the page's console for the test to read."""
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
                 "--force-color-profile=srgb", *extra_flags):
        options.add_argument(flag)
    if os.path.exists("/usr/bin/chromium"):
        options.binary_location = "/usr/bin/chromium"
    if console_logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    service = Service(executable_path=driver_path) if driver_path else Service()
    return webdriver.Chrome(options=options, service=service)


def finish():
    """Prints every failure and exits: 1 when there was any."""
    import sys
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)
