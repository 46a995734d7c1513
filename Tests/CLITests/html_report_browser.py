#!/usr/bin/env python3
"""Drives btlens's HTML audit report in a real headless Chromium (Selenium + chromium-driver).

Usage: html_report_browser.py MANIFEST.json
The manifest lists cases {"name", "html", "audit", "timeline"} (the report, `audit --format json` and
`timeline --json` of the same single capture) and "out", the folder the screenshots go to. For each case the
page must draw every lane, phase, cost bar and finding the JSON reports name, zoom (wheel, keys, slider), select a
finding (its span highlighted, its row shown), expand a group, open a connection, sort, and log no error.
Exits 1 listing every failed check.
"""
import json
import os
import sys
from decimal import Decimal

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By

from browser_support import check, failures, finish, browser as chromium


def browser():
    return chromium(("--hide-scrollbars",), console_logs=True)


# As AuditHTMLTimeline: a lane per connection up to CONNECTION_LANES, packed lanes past it; at most
# EVENT_BUDGET connection events drawn per capture.
CONNECTION_LANES = 40
EVENT_BUDGET = 10_000


def expected_phases(timeline):
    """Phases per lane as the report builds them: scans, own advertising, failed attempts (each a lane when there
    are any), then per connection its link, connecting when the create command came first, and each event but
    the connection's own."""
    lanes = [len(timeline["scans"])]
    if timeline["advertising"]:
        lanes.append(len(timeline["advertising"]))
    if timeline["failed_connections"]:
        lanes.append(len(timeline["failed_connections"]))
    connections = timeline["connections"]
    packed = len(connections) > CONNECTION_LANES
    last = Decimal(timeline["last_timestamp"])
    ends, drawn = [], 0
    first_packed = len(lanes)
    for c in connections:
        events = sum(1 for e in c["events"] if e["type"] != "connected")
        if drawn + events > EVENT_BUDGET:
            events = 0
        drawn += events
        connecting = c["connect_requested"] is not None and Decimal(c["connect_requested"]) < Decimal(c["start"])
        n = 1 + events + (1 if connecting else 0)
        if not packed:
            lanes.append(n)
            continue
        start = Decimal(c["connect_requested"] if connecting else c["start"])
        slot = next((i for i, end in enumerate(ends) if end <= start), len(ends))
        if slot == len(ends):
            ends.append(None)
            lanes.append(0)
        ends[slot] = Decimal(c["end"]) if c["end"] is not None else last
        lanes[first_packed + slot] += n
    return lanes


def view(driver, root):
    return float(root.get_attribute("data-view-start")), float(root.get_attribute("data-view-end"))


def run_case(driver, case, out):
    name = case["name"]
    audit = json.load(open(case["audit"]))
    timeline = json.load(open(case["timeline"]))
    driver.get("file://" + os.path.abspath(case["html"]))
    driver.get_log("browser")  # what the page logged while loading is read below, with the rest
    logs = []
    findings = audit["findings"]
    lanes = expected_phases(timeline)
    root = driver.find_element(By.ID, "tl-0")
    drawn_lanes = driver.find_elements(By.CSS_SELECTOR, "#tl-0 g.lane")
    check(len(drawn_lanes) == len(lanes), name, f"{len(drawn_lanes)} lanes drawn, expected {len(lanes)}")
    groups = driver.find_elements(By.CSS_SELECTOR, "#tl-0 g.lane-phases")
    counts = [len(g.find_elements(By.CSS_SELECTOR, "rect.phase")) for g in groups]
    check(counts == lanes, name, f"phases per lane {counts}, expected {lanes}")
    # Drawn: every phase has a place on the plot at the whole-capture view (a width of at least 2 px, or 0 only
    # when a neighbour's clamp hides it off the plot, which the whole view never does).
    widths = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#tl-0 rect.phase'), function (r) { return +r.getAttribute('width'); });")
    check(all(w >= 1.9 for w in widths), name, f"{sum(1 for w in widths if w < 1.9)} phases not drawn")
    bars = driver.find_elements(By.CSS_SELECTOR, "#tl-0 rect.cost-bar")
    check(len(bars) == len(lanes), name, f"{len(bars)} cost bars, expected one per lane ({len(lanes)})")
    check(all(b.size["width"] >= 1 for b in bars), name, "a cost bar without width")
    marks = driver.find_elements(By.CSS_SELECTOR, "#tl-0 circle.finding")
    check(len(marks) == len(findings), name, f"{len(marks)} findings drawn, expected {len(findings)}")
    check(all(m.is_displayed() for m in marks), name, "a finding not displayed")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.findings tr[data-f]")
    check(len(rows) == len(findings), name, f"{len(rows)} finding rows (grouped members included), expected {len(findings)}")
    energy = driver.find_elements(By.CSS_SELECTOR, "section.energy table.energy-bars .energy-bar")
    check(bool(energy) or not (timeline["scans"] or timeline["advertising"] or timeline["connections"]), name, "no energy bars")
    # Advice: once per rule, however many findings.
    rules = sorted({f["rule_id"] if "rule_id" in f else f["id"] for f in findings})
    advice = [e.get_attribute("id") for e in driver.find_elements(By.CSS_SELECTOR, ".advice-list dt")]
    check(sorted(a[len("advice-"):] for a in advice) == rules, name, f"advice entries {advice}, expected one per rule {rules}")
    page = driver.execute_script("return document.body.textContent;")
    # Advice once per rule: its opening words (a rule's platform advice begins it) nowhere else on the page.
    for text in {f["advice"][:80] for f in findings if f.get("advice")}:
        check(page.count(text) == 1, name, f"advice printed {page.count(text)} times: {text}…")
    driver.save_screenshot(os.path.join(out, name + ".png"))

    # Zoom: the wheel over the plot, the keyboard, the slider each change the visible range.
    a0, b0 = view(driver, root)
    plot = driver.find_element(By.CSS_SELECTOR, "#tl-0 svg.timeline")
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(plot, 60, 0), 0, -400).perform()
    driver.execute_script("return new Promise(function (r) { requestAnimationFrame(function () { r(); }); });")
    a1, b1 = view(driver, root)
    check(b1 - a1 < (b0 - a0) * 0.9, name, f"wheel did not zoom in: {a0}–{b0} → {a1}–{b1}")
    root.send_keys("0")
    a2, b2 = view(driver, root)
    check(abs(a2 - a0) < 1e-6 and abs(b2 - b0) < 1e-6, name, f"0 did not show the whole capture: {a2}–{b2}")
    root.send_keys("+")
    a3, b3 = view(driver, root)
    check(b3 - a3 < (b0 - a0) * 0.6, name, f"+ did not zoom in: {a3}–{b3}")
    root.send_keys("0")
    driver.execute_script("var s = document.querySelector('.range-start'); s.value = 500; s.dispatchEvent(new Event('input'));")
    driver.execute_script("return new Promise(function (r) { requestAnimationFrame(function () { r(); }); });")
    a4, b4 = view(driver, root)
    check(a4 > a0 + (b0 - a0) * 0.4, name, f"the range slider did not move the start: {a4}–{b4}")
    root.send_keys("0")
    driver.execute_script("return new Promise(function (r) { requestAnimationFrame(function () { r(); }); });")

    # A finding clicked: its span highlighted over its time, its mark and row selected, the row in view.
    if marks:
        mark = marks[len(marks) // 2]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", root)
        ActionChains(driver).move_to_element(mark).click().perform()
        selected = driver.find_elements(By.CSS_SELECTOR, "#tl-0 circle.finding.selected")
        if check(len(selected) == 1, name, f"{len(selected)} findings selected after a click"):
            key = selected[0].get_attribute("data-f")
            highlight = driver.find_element(By.CSS_SELECTOR, "#tl-0 rect.span-highlight")
            check(highlight.get_attribute("visibility") == "visible" and float(highlight.get_attribute("width")) >= 3,
                  name, "the finding's span is not highlighted")
            hx = float(highlight.get_attribute("x"))
            cx = float(selected[0].get_attribute("cx"))
            check(hx - 1 <= cx <= hx + float(highlight.get_attribute("width")) + 1, name,
                  f"the highlight ({hx}) is not over the finding ({cx})")
            row = driver.find_element(By.ID, key)
            check("selected" in row.get_attribute("class"), name, "the finding's row is not selected")
            check(row.is_displayed(), name, "the finding's row is hidden")
            in_view = driver.execute_script(
                "var r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;", row)
            check(in_view, name, "the finding's row was not scrolled into view")
            driver.save_screenshot(os.path.join(out, name + "-selected.png"))

    # A group expanded shows its members; sorting by cost puts the costliest first.
    for group in driver.find_elements(By.CSS_SELECTOR, "table.findings tbody.group")[:2]:
        members = group.find_elements(By.CSS_SELECTOR, "tr.member")
        count = int(group.find_element(By.CSS_SELECTOR, ".count").text.lstrip("×"))
        button = group.find_element(By.CSS_SELECTOR, "button.expand")
        if button.get_attribute("aria-expanded") == "true":
            button.click()
        check(not any(m.is_displayed() for m in members), name, "a closed group shows its members")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
        button.click()
        shown = [m for m in members if m.is_displayed()]
        check(len(shown) == count == len(members), name, f"an expanded group shows {len(shown)} of ×{count} members")
    sort = driver.find_elements(By.CSS_SELECTOR, "table.findings button.sort[data-sort='cost']")
    if sort:
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", sort[0])
        sort[0].click()
        costs = [float(t.get_attribute("data-cost")) for t in driver.find_elements(By.CSS_SELECTOR, "table.findings tbody")]
        check(costs == sorted(costs, reverse=True), name, f"sorting by cost: {costs}")

    # A connection (its label, or its link where connections share packed lanes) opens its timeline (the text
    # timeline's lines) with its GATT tree beside it.
    labels = driver.find_elements(By.CSS_SELECTOR, "#tl-0 text.lane-label.conn")
    packed = len(timeline["connections"]) > CONNECTION_LANES
    check(len(labels) == (0 if packed else len(timeline["connections"])), name, f"{len(labels)} connection lanes with a link")
    links = driver.find_elements(By.CSS_SELECTOR, "#tl-0 rect.phase.k-link")
    check(len(links) == len(timeline["connections"]), name, f"{len(links)} links drawn, expected {len(timeline['connections'])}")
    if timeline["connections"]:
        first = timeline["connections"][0]["id"]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", root)
        if labels:
            ActionChains(driver).move_to_element(labels[0]).click().perform()
        else:
            # Packed lanes are crowded with findings: zoom to the link and click a point of it no mark covers.
            c = timeline["connections"][0]
            t0 = Decimal(timeline["first_timestamp"])
            end = Decimal(c["end"]) if c["end"] is not None else Decimal(timeline["last_timestamp"])
            driver.execute_script("window.btlensTimelines[0].setView(arguments[0], arguments[1]);",
                                  float(Decimal(c["start"]) - t0), float(end - t0))
            dx = driver.execute_script("""
                var r = arguments[0].getBoundingClientRect();
                for (var x = r.left + 1; x < r.right; x += 2) {
                  var e = document.elementFromPoint(x, r.top + r.height / 2);
                  if (e && e.classList.contains('phase')) return x - (r.left + r.width / 2);
                }
                return 0;""", links[0])
            ActionChains(driver).move_to_element_with_offset(links[0], int(dx), 0).click().perform()
        panel = driver.find_element(By.ID, f"conn-0-{first}")
        check(panel.is_displayed(), name, "clicking a connection did not open its timeline")
        text = panel.find_element(By.CSS_SELECTOR, "pre.conn-timeline").text
        check(f"Connection #{first}" in text or "btlens timeline --connection" in text, name, "the connection's timeline lacks its head line")
        gatt = panel.find_elements(By.CSS_SELECTOR, "pre.gatt")
        check(len(gatt) == 1 and gatt[0].is_displayed(), name, "no GATT tree beside the timeline")
        driver.save_screenshot(os.path.join(out, name + "-connection.png"))

    # Hovering a phase shows its details.
    phase = driver.find_elements(By.CSS_SELECTOR, "#tl-0 rect.phase")
    if phase:
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", root)
        ActionChains(driver).move_to_element(phase[0]).perform()
        tip = driver.find_element(By.ID, "tip")
        check(tip.is_displayed() and tip.text.strip() != "", name, "hovering a phase shows no details")

    logs = driver.get_log("browser")
    for entry in logs:
        check(entry["level"] not in ("SEVERE", "WARNING"), name, f"console: {entry['level']} {entry['message']}")
    return len(lanes), sum(lanes), len(findings)


def main():
    manifest = json.load(open(sys.argv[1]))
    out = manifest["out"]
    os.makedirs(out, exist_ok=True)
    driver = browser()
    try:
        for case in manifest["cases"]:
            try:
                lanes, phases, findings = run_case(driver, case, out)
                print(f"{case['name']}: {lanes} lanes, {phases} phases, {findings} findings checked; screenshots in {out}")
            except Exception as e:  # a missing element is a failed check, not a crash of the whole run
                failures.append(f"{case['name']}: {type(e).__name__}: {e}")
    finally:
        driver.quit()
    finish()


if __name__ == "__main__":
    main()
