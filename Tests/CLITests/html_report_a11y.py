#!/usr/bin/env python3
"""Accessibility of btlens's HTML audit report in a real headless Chromium (Selenium + chromium-driver).

Usage: html_report_a11y.py MANIFEST.json
The manifest lists cases {"name", "html"} and "keyboard", the names of the cases to drive by keyboard alone.

1. axe-core (PyPI axe-selenium-python) in the light and the dark colour scheme (prefers-color-scheme emulated
   through the DevTools protocol), on each page as it loads and again with every group of findings expanded, a
   finding selected and a connection's timeline open: any serious or critical violation fails. The page has one
   main landmark.
2. Keyboard only (Tab, Enter, Space, arrows, +/−, Escape; no mouse): the timeline's buttons and the timeline itself
   take the focus, visibly, and zoom and pan; the findings table sorts, expands a group and selects a finding
   (its span on the timeline); a connection's lane label opens its timeline, Escape closes it and gives the focus
   back.
Prints a line per case and scheme with the violations by impact and rule; exits 1 listing every failed check.
"""
import json
import os
import sys

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

try:
    from axe_selenium_python import Axe
except ImportError:  # run `make test-deps`
    print("FAIL axe-selenium-python is not installed (make test-deps installs it)")
    sys.exit(1)

from browser_support import check, failures, finish, browser as chromium


def browser():
    return chromium(())


def scheme(driver, name):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": name}]})


def axe_violations(driver):
    axe = Axe(driver)
    axe.inject()
    result = axe.run()
    return {(v["impact"] or "unknown", v["id"]): len(v["nodes"]) for v in result["violations"]}


def interact(driver):
    """Every group expanded, a finding selected, the first connection's timeline open: what the page shows
    only after a click is checked too."""
    driver.execute_script("""
        document.querySelectorAll('table.findings button.expand[aria-expanded="false"]').forEach(function (b) { b.click(); });
        var row = document.querySelector('table.findings tr[data-f]');
        if (row) row.click();
        var label = document.querySelector('#tl-0 text.lane-label.conn');
        if (label) label.dispatchEvent(new MouseEvent('click', { bubbles: true }));
        var tip = document.getElementById('tip'); if (tip) tip.hidden = true;""")


def run_axe(driver, case):
    name = case["name"]
    for s in ("light", "dark"):
        scheme(driver, s)
        driver.get("file://" + os.path.abspath(case["html"]))
        dark = driver.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches;")
        check(dark == (s == "dark"), name, f"the {s} colour scheme was not emulated")
        check(len(driver.find_elements("css selector", "main")) == 1, name, "no main landmark")
        loaded = axe_violations(driver)
        interact(driver)
        shown = axe_violations(driver)
        total = dict(loaded)
        for k, n in shown.items():
            total[k] = max(total.get(k, 0), n)
        bad = {k: n for k, n in total.items() if k[0] in ("serious", "critical")}
        print(f"{name} [{s}]: " + (", ".join(f"{imp} {rule} ×{n}" for (imp, rule), n in sorted(total.items())) or "no violation"))
        check(not bad, name, f"{s} scheme: serious/critical axe-core violations {sorted(bad.items())}")
    scheme(driver, "light")


def active(driver):
    return driver.switch_to.active_element


def focus_visible(driver, element):
    """The focused element shows it: an outline or a ring (box-shadow)."""
    style = driver.execute_script("""
        var s = getComputedStyle(arguments[0]);
        return [s.outlineStyle, s.outlineWidth, s.boxShadow];""", element)
    outline = style[0] != "none" and style[1] not in ("0px", "")
    ring = style[2] not in ("none", "")
    return outline or ring


def tab_to(driver, matches, limit=600):
    """Tab (only the keyboard) until `matches(element)`; the element, or None."""
    for _ in range(limit):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        e = active(driver)
        if matches(e):
            return e
    return None


def view(driver):
    root = driver.find_element("id", "tl-0")
    return float(root.get_attribute("data-view-start")), float(root.get_attribute("data-view-end"))


def press(driver, *keys):
    ActionChains(driver).send_keys(*keys).perform()


def has_class(e, cls):
    return cls in (e.get_attribute("class") or "").split()


def run_keyboard(driver, case):
    name = case["name"] + " (keyboard)"
    driver.get("file://" + os.path.abspath(case["html"]))
    a0, b0 = view(driver)
    # The timeline's buttons, in the order of the page: zoom in, then pan later, then the whole capture.
    zoom_in = tab_to(driver, lambda e: has_class(e, "zoom-in"))
    if not check(zoom_in is not None, name, "Tab never reaches the zoom-in button"):
        return
    check(focus_visible(driver, zoom_in), name, "the focused zoom-in button shows no focus")
    press(driver, Keys.ENTER)
    a1, b1 = view(driver)
    check(b1 - a1 < (b0 - a0) * 0.6, name, f"Enter on zoom in did not zoom: {a0}–{b0} → {a1}–{b1}")
    pan_right = tab_to(driver, lambda e: has_class(e, "pan-right"), limit=5)
    if check(pan_right is not None, name, "Tab does not reach the pan-later button"):
        press(driver, Keys.SPACE)
        a2, b2 = view(driver)
        check(a2 > a1 and abs((b2 - a2) - (b1 - a1)) < 1e-6 * max(1, b1 - a1), name, f"Space on pan later did not pan: {a1}–{b1} → {a2}–{b2}")
    reset = tab_to(driver, lambda e: has_class(e, "zoom-reset"), limit=5)
    if check(reset is not None, name, "Tab does not reach the whole-capture button"):
        press(driver, Keys.ENTER)
        a3, b3 = view(driver)
        check(abs(a3 - a0) < 1e-6 and abs(b3 - b0) < 1e-6, name, f"Enter on whole capture did not show it: {a3}–{b3}")
    # The timeline itself: focused (with a ring), + zooms, the arrows pan, − zooms out, 0 the whole capture.
    root = tab_to(driver, lambda e: e.get_attribute("id") == "tl-0", limit=10)
    if check(root is not None, name, "Tab does not reach the timeline"):
        check(focus_visible(driver, root), name, "the focused timeline shows no focus")
        press(driver, "+")
        za, zb = view(driver)
        check(zb - za < (b0 - a0) * 0.6, name, f"+ did not zoom in: {za}–{zb}")
        press(driver, Keys.ARROW_RIGHT)
        ra, rb = view(driver)
        check(ra > za and abs((rb - ra) - (zb - za)) < 1e-6 * max(1, zb - za), name, f"→ did not pan later: {za}–{zb} → {ra}–{rb}")
        press(driver, Keys.ARROW_LEFT)
        la, lb = view(driver)
        check(la < ra, name, f"← did not pan earlier: {ra}–{rb} → {la}–{lb}")
        press(driver, "-")
        oa, ob = view(driver)
        check(ob - oa > (lb - la) * 1.5, name, f"− did not zoom out: {la}–{lb} → {oa}–{ob}")
        press(driver, "0")
        wa, wb = view(driver)
        check(abs(wa - a0) < 1e-6 and abs(wb - b0) < 1e-6, name, f"0 did not show the whole capture: {wa}–{wb}")
    # A connection's lane label: Enter opens its timeline, which takes the focus; Escape closes it and gives the
    # focus back.
    label = tab_to(driver, lambda e: has_class(e, "lane-label") and has_class(e, "conn"), limit=10)
    if label is not None:
        check(focus_visible(driver, label), name, "the focused connection label shows no focus")
        press(driver, Keys.ENTER)
        panel = active(driver)
        opened = panel.tag_name == "section" and has_class(panel, "conn") and panel.is_displayed()
        if check(opened, name, "Enter on a connection's label did not open (and focus) its timeline"):
            press(driver, Keys.ESCAPE)
            check(not panel.is_displayed(), name, "Escape did not close the connection's timeline")
            back = active(driver)
            check(has_class(back, "lane-label"), name, "closing the connection's timeline did not give the focus back")
    # The findings table: sort by the keyboard, expand a group, select a finding's row.
    if not driver.find_elements("css selector", "table.findings"):
        return "no findings"
    sort = tab_to(driver, lambda e: has_class(e, "sort"))
    if check(sort is not None, name, "Tab never reaches a sort button"):
        check(focus_visible(driver, sort), name, "the focused sort button shows no focus")
        press(driver, Keys.ENTER)
        table = driver.find_element("css selector", "table.findings")
        check(table.get_attribute("data-sorted") is not None, name, "Enter on a sort button did not sort")
        th = driver.execute_script("return arguments[0].closest('th');", sort)
        check(th.get_attribute("aria-sort") in ("ascending", "descending"), name, "the sorted column does not say so (aria-sort)")
    expanded = False
    if driver.find_elements("css selector", "table.findings button.expand"):
        button = tab_to(driver, lambda e: has_class(e, "expand"))
        if check(button is not None, name, "Tab never reaches a group's expand button"):
            press(driver, Keys.ENTER)
            check(button.get_attribute("aria-expanded") == "true", name, "Enter on a group's button did not expand it")
            members = driver.execute_script("return Array.prototype.filter.call(arguments[0].closest('tbody').querySelectorAll('tr.member'), function (r) { return !r.hidden; }).length;", button)
            check(members > 0, name, "an expanded group shows no member")
            expanded = True
    row = tab_to(driver, lambda e: e.tag_name == "tr" and e.get_attribute("data-f") is not None)
    if check(row is not None, name, "Tab never reaches a finding's row"):
        check(focus_visible(driver, row), name, "the focused finding row shows no focus")
        press(driver, Keys.ENTER)
        check(has_class(row, "selected") and row.get_attribute("aria-current") == "true", name, "Enter on a finding's row did not select it")
        key = row.get_attribute("data-f")
        marks = driver.find_elements("css selector", f'#tl-0 circle.finding.selected[data-f="{key}"]')
        check(len(marks) == 1, name, "the selected row's finding is not selected on the timeline")
        highlight = driver.find_element("css selector", "#tl-0 rect.span-highlight")
        check(highlight.get_attribute("visibility") == "visible", name, "the selected finding's span is not highlighted")
        rows = driver.execute_script("return Array.prototype.filter.call(document.querySelectorAll('table.findings tr[data-f]'), function (r) { return !r.hidden; }).length;")
        if rows > 1:
            press(driver, Keys.ARROW_DOWN)
            nxt = active(driver)
            check(nxt.get_attribute("data-f") not in (None, key), name, "↓ did not move to the next finding's row")
            press(driver, " ")
            check(has_class(nxt, "selected") and not has_class(row, "selected"), name, "Space on the next row did not select it")
    return "group expanded" if expanded else "no group"


def main():
    manifest = json.load(open(sys.argv[1]))
    driver = browser()
    try:
        for case in manifest["cases"]:
            try:
                run_axe(driver, case)
            except Exception as e:  # a missing element is a failed check, not a crash of the whole run
                failures.append(f"{case['name']}: {type(e).__name__}: {e}")
        for case in manifest["cases"]:
            if case["name"] not in manifest["keyboard"]:
                continue
            try:
                what = run_keyboard(driver, case)
                print(f"{case['name']}: keyboard only: zoom, pan, connection, findings table ({what})")
            except Exception as e:
                failures.append(f"{case['name']} (keyboard): {type(e).__name__}: {e}")
    finally:
        driver.quit()
    finish()


if __name__ == "__main__":
    main()
