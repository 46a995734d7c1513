#!/usr/bin/env python3
"""Screenshot of an HTML audit report for the README (`make screenshots`): the page at a laptop's width in
headless Chromium, a finding selected so its highlighted span shows.

Usage: html_report_screenshot.py REPORT.html OUT.png
"""
import os
import sys

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_report_browser import browser  # noqa: E402  (the same browser setup as the tests)


def main():
    report, out = sys.argv[1], sys.argv[2]
    driver = browser()
    try:
        driver.set_window_size(1280, 860)
        driver.get("file://" + os.path.abspath(report))
        marks = driver.find_elements(By.CSS_SELECTOR, "#tl-0 circle.finding")
        if marks:
            # The costliest finding's span, without scrolling away from the timeline.
            driver.execute_script("window.btlensTimelines[0].select(arguments[0], false);", marks[0].get_attribute("data-f"))
        driver.execute_script("window.scrollTo(0, 0);")
        driver.save_screenshot(out)
    finally:
        driver.quit()
    print(f"wrote {out}")


main()
