/// The HTML report's style and script, inline in the page: light and dark schemes following the system, a
/// print layout, and the timeline drawn from the page's JSON (`AuditHTMLTimeline`) with zoom, pan, tooltips,
/// finding selection, connection panels and the findings table's sorting and groups.
enum AuditHTMLAssets {
    static let style = #"""
        :root{--fg:#1d2329;--muted:#5b6570;--bg:#fff;--panel:#f5f6f8;--line:#d9dde2;--grid:#eceff2;--accent:#1a5fb4;
        --error:#c62828;--warning:#8a5300;--info:#1f6fb4;--sel:rgba(255,196,0,.28);--sel-line:#e0a800;--focus:#1a5fb4;
        --scan:#7fb3d5;--scan-dup:#e59866;--advertising:#a9cce3;--attempt-cancelled:#bfc9ca;--attempt-failed:#f1948a;
        --connecting:#d5f5e3;--link:#c8ecd4;--mtu:#8e44ad;--security:#d4ac0d;--discovery:#2e86c1;--activity:#27ae60;
        --idle:#dfe4e8;--parameters:#7f8c8d;--err:#e74c3c;--disconnect:#34495e;--other:#95a5a6;--cost:#5d6d7e}
        @media (prefers-color-scheme:dark){:root{--fg:#e3e6ea;--muted:#a0a8b2;--bg:#16191d;--panel:#20242a;--line:#3a4048;
        --grid:#262b31;--accent:#7cb3ff;--error:#ff7b7b;--warning:#f0b44c;--info:#6cb4ff;--sel:rgba(255,210,80,.12);--focus:#9cc6ff;
        --scan:#3f7fae;--scan-dup:#b4653a;--advertising:#4f7fa3;--attempt-cancelled:#5c6669;--attempt-failed:#a5473f;
        --connecting:#2c5a3c;--link:#264d35;--mtu:#b07cd0;--security:#d4b93c;--discovery:#5aa7e0;--activity:#43c97a;
        --idle:#30363d;--parameters:#9aa6a8;--err:#ff6b5b;--disconnect:#b8c4d0;--other:#7b878b;--cost:#9aa8b8}}
        *{box-sizing:border-box}
        body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0 auto;padding:1em 2em;color:var(--fg);background:var(--bg);max-width:1400px}
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid var(--line)}h3{font-size:1em;margin:1.2em 0 .4em}
        a{color:var(--accent)}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}code{font-size:.9em}
        table{border-collapse:collapse;width:100%;margin:.5em 0}td,th{border:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
        th{background:var(--panel)}.sev{font-weight:bold;text-transform:uppercase;font-size:.8em;white-space:nowrap}
        .error{color:var(--error)}.warning{color:var(--warning)}.info{color:var(--info)}.note,.hint,footer{color:var(--muted)}.hint{font-size:.85em;margin:.2em 0}
        .waste{font-weight:bold}td.cost{white-space:nowrap}.count{color:var(--muted);font-weight:bold}
        button{font:inherit;color:inherit;background:var(--panel);border:1px solid var(--line);border-radius:4px;cursor:pointer;padding:1px 8px}
        th button.sort{border:0;background:none;font-weight:bold;padding:0}th button.sort::after{content:" ⇅";color:var(--muted)}
        button.expand{padding:0 4px;margin-right:4px}tr.group-row{background:var(--panel)}tr.member td:first-child{padding-left:2em}
        tr.selected td{background:var(--sel)!important}td.records.lit{outline:2px solid var(--sel-line)}
        .tl-wrap{margin:.6em 0}.tl-controls{display:flex;gap:.6em;align-items:center;flex-wrap:wrap;margin-bottom:.3em}
        .tl-controls input[type=range]{width:12em;vertical-align:middle}.range-text{color:var(--muted);font-size:.85em}
        .tl{border:1px solid var(--line);border-radius:4px;background:var(--bg);user-select:none;cursor:grab;outline:none}
        .tl:focus-visible{box-shadow:0 0 0 3px var(--focus)}.tl.dragging{cursor:grabbing}
        button:focus-visible,a:focus-visible,input:focus-visible,section.conn:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
        tr[data-f]{cursor:pointer}tr[data-f]:focus-visible{outline:2px solid var(--focus);outline-offset:-2px}
        svg .lane-label.conn:focus-visible{outline:2px solid var(--focus);outline-offset:1px}
        svg.timeline{display:block;width:100%}svg text{font-size:11px;fill:var(--fg)}svg .axis text{fill:var(--muted)}
        svg line{pointer-events:none}svg .grid{stroke:var(--grid)}svg .lane-line{stroke:var(--grid)}svg .lane-label{cursor:default}svg .lane-label.conn{fill:var(--accent);cursor:pointer;text-decoration:underline}
        .phase{stroke:none}.phase.k-link{cursor:pointer}.cost-bar{fill:var(--cost)}
        .k-scan{fill:var(--scan);background:var(--scan)}.k-scan-dup{fill:var(--scan-dup);background:var(--scan-dup)}
        .k-advertising{fill:var(--advertising);background:var(--advertising)}.k-attempt-cancelled{fill:var(--attempt-cancelled)}
        .k-attempt-failed{fill:var(--attempt-failed)}.k-connecting{fill:var(--connecting)}.k-link{fill:var(--link);background:var(--activity)}
        .k-mtu{fill:var(--mtu)}.k-security{fill:var(--security)}.k-discovery{fill:var(--discovery)}.k-activity{fill:var(--activity)}
        .k-idle{fill:var(--idle)}.k-parameters{fill:var(--parameters)}.k-error{fill:var(--err)}.k-disconnect{fill:var(--disconnect)}
        .k-other{fill:var(--other);background:var(--other)}
        .finding{stroke:var(--bg);stroke-width:1.5;cursor:pointer}.finding.sev-error{fill:var(--error)}.finding.sev-warning{fill:var(--warning)}
        .finding.sev-info{fill:var(--info)}.finding.selected{stroke:var(--fg);stroke-width:2.5}
        .span-highlight{fill:var(--sel);stroke:var(--sel-line);stroke-width:1;pointer-events:none}
        .legend{display:flex;flex-wrap:wrap;gap:.2em 1em;font-size:.8em;color:var(--muted);margin:.2em 0}.legend i{display:inline-block;width:.9em;height:.9em;border-radius:2px;margin-right:.3em;vertical-align:-2px}
        #tip{position:fixed;z-index:10;max-width:32em;padding:.4em .6em;background:var(--panel);color:var(--fg);border:1px solid var(--line);border-radius:4px;box-shadow:0 2px 8px rgba(0,0,0,.2);font-size:12px;pointer-events:none;white-space:pre-wrap}
        table.energy-bars td{border:0;padding:2px 6px}table.energy-bars td.label{width:30%;white-space:nowrap}table.energy-bars td.value{width:16%;white-space:nowrap;color:var(--muted)}
        td.bar{width:50%}.energy-bar{display:inline-block;height:.9em;border-radius:2px;vertical-align:middle;min-width:1px}
        .measured-tx{background:var(--error)}.measured-rx{background:var(--info)}.model-tx{background:var(--error);opacity:.55}.model-rx{background:var(--info);opacity:.55}
        section.conn{border:1px solid var(--line);border-radius:4px;padding:.2em .8em .8em;margin:.8em 0;background:var(--panel)}
        section.conn h3 button.close{float:right}.conn-body{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:.8em}
        .conn-body pre{margin:0;background:var(--bg);padding:.6em;overflow:auto;max-height:32em;font-size:12px;border:1px solid var(--line)}
        pre span.lit{background:var(--sel);outline:1px solid var(--sel-line)}
        .advice-list dt{font-weight:bold;margin-top:.6em}.advice-list dd{margin-left:1.5em}.advice-list .platform{color:var(--muted);font-size:.9em}
        @media (max-width:900px){.conn-body{grid-template-columns:1fr}body{padding:.5em}}
        @media print{body{max-width:none;padding:0;font-size:11px}.tl-controls,.hint,#tip,button.close,button.expand{display:none}
        .tl{border:0}tr.member{display:table-row}.conn-body pre{max-height:none;overflow:visible;white-space:pre-wrap}section.capture{break-before:page}
        section.capture:first-of-type{break-before:auto}}
        """#

    static let script = #"""
        (function () {
        "use strict";
        var NS = "http://www.w3.org/2000/svg";
        var LABEL = 170, COST = 150, LANE = 24, AXIS = 30, TOP = 4;
        var data = JSON.parse(document.getElementById("btlens-data").textContent);
        var tip = document.getElementById("tip");
        function el(tag, attrs, parent) {
          var e = document.createElementNS(NS, tag);
          for (var k in attrs) e.setAttribute(k, attrs[k]);
          if (parent) parent.appendChild(e);
          return e;
        }
        function human(s) {
          var a = Math.abs(s);
          if (a === 0) return "0 s";
          if (a < 1e-3) return (s * 1e6).toFixed(0) + " µs";
          if (a < 1) return (s * 1e3).toFixed(a < 0.01 ? 2 : 1) + " ms";
          if (a < 60) return s.toFixed(a < 10 ? 3 : 1) + " s";
          var m = Math.floor(a / 60);
          if (m < 60) return m + "m " + Math.round(a - m * 60) + "s";
          return Math.floor(m / 60) + "h " + (m % 60) + "m";
        }
        function clock(t0, s) { return new Date((t0 + s) * 1000).toISOString().slice(11, 23); }
        var STEPS = [1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10, 15, 30,
          60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
        function showTip(text, ev) {
          tip.textContent = text;
          tip.hidden = false;
          var x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
          var y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 10 : ev.clientY + 16;
          tip.style.left = Math.max(4, x) + "px";
          tip.style.top = Math.max(4, y) + "px";
        }
        function hideTip() { tip.hidden = true; }

        // A connection's panel; opened from the keyboard (`opener` the element that had the focus), it takes the
        // focus and gives it back when it closes.
        var openers = {};
        function openConnection(ci, id, opener) {
          var panel = document.getElementById("conn-" + ci + "-" + id);
          if (!panel) return null;
          var slot = panel.querySelector(".gatt-slot");
          if (slot && !slot.firstChild) {
            var tree = document.getElementById(panel.getAttribute("data-gatt"));
            if (tree) slot.appendChild(tree.content.cloneNode(true));
          }
          panel.hidden = false;
          panel.scrollIntoView({ block: "nearest" });
          if (opener) { openers[panel.id] = opener; panel.focus({ preventScroll: true }); }
          return panel;
        }
        function closeConnection(panel) {
          panel.hidden = true;
          var opener = openers[panel.id];
          delete openers[panel.id];
          if (opener && document.body.contains(opener)) opener.focus();
        }
        document.addEventListener("click", function (ev) {
          var close = ev.target.closest && ev.target.closest("section.conn button.close");
          if (close) closeConnection(close.closest("section.conn"));
        });
        document.addEventListener("keydown", function (ev) {
          var panel = ev.key === "Escape" && ev.target.closest && ev.target.closest("section.conn");
          if (panel) { closeConnection(panel); ev.preventDefault(); }
        });

        var timelines = [];
        data.captures.forEach(function (cap, ci) { if (cap.lanes) timelines.push(new Timeline(cap, ci)); });
        window.btlensTimelines = timelines;

        function Timeline(cap, ci) {
          this.ci = ci;
          var root = document.getElementById("tl-" + ci);
          var controls = document.querySelector('.tl-controls[data-capture="' + ci + '"]');
          var span = Math.max(cap.span, 1e-6);
          var minWidth = Math.min(span, Math.max(span * 1e-7, 1e-5));
          var view = { a: 0, b: span };
          var width = 0, plotW = 0, selected = null, pending = false;
          var height = TOP + cap.lanes.length * LANE + AXIS;
          var svg = el("svg", { "class": "timeline", role: "group", "aria-label": "timeline of " + cap.file, height: height }, root);
          var defs = el("defs", {}, svg);
          var clip = el("clipPath", { id: "clip-" + ci }, defs);
          var clipRect = el("rect", { x: LABEL, y: 0, width: 10, height: height }, clip);
          var axis = el("g", { "class": "axis" }, svg);
          var lanesG = el("g", { "class": "lanes" }, svg);
          var plot = el("g", { "clip-path": "url(#clip-" + ci + ")" }, svg);
          var highlight = el("rect", { "class": "span-highlight", y: 0, height: height - AXIS + 4, width: 0, x: 0, visibility: "hidden" }, plot);
          var mostCost = 1e-9;
          cap.lanes.forEach(function (l) { mostCost = Math.max(mostCost, +l.mc); });
          var shapes = [];   // [element, start, end] to place on each draw
          var marks = {};    // finding key → [element, finding]
          var costBars = [];
          cap.lanes.forEach(function (lane, li) {
            var y = TOP + li * LANE;
            var g = el("g", { "class": "lane", "data-lane": lane.kind }, lanesG);
            var label = el("text", { "class": "lane-label" + (lane.conn !== null ? " conn" : ""), x: 4, y: y + 15 }, g);
            label.textContent = lane.label;
            if (lane.conn !== null) {
              // A connection's label opens its timeline, by click or by Enter or Space once focused.
              label.setAttribute("tabindex", "0");
              label.setAttribute("role", "button");
              label.setAttribute("aria-label", "open the timeline of " + lane.label);
              label.addEventListener("click", function () { openConnection(ci, lane.conn); });
              label.addEventListener("keydown", function (ev) {
                if (ev.key !== "Enter" && ev.key !== " ") return;
                ev.preventDefault();
                ev.stopPropagation();
                openConnection(ci, lane.conn, label);
              });
            }
            el("line", { "class": "lane-line", x1: LABEL, x2: LABEL, y1: y + 11, y2: y + 11 }, g).dataset.role = "lane-line";
            var lp = el("g", { "class": "lane-phases" }, plot);
            lane.phases.forEach(function (p, pi) {
              var link = p[2] === "link";
              var r = el("rect", { "class": "phase k-" + p[2], y: link ? y + 4 : y + 6, height: link ? 15 : 11, rx: 2,
                "data-l": li, "data-p": pi }, lp);
              shapes.push([r, +p[0], +p[1]]);
            });
            var bar = el("rect", { "class": "cost-bar", y: y + 7, height: 9, "data-l": li }, g);
            var text = el("text", { "class": "cost-text", y: y + 15 }, g);
            text.textContent = (+lane.mc).toFixed(1) + " mC";
            costBars.push([bar, text, +lane.mc, g]);
          });
          var fg = el("g", { "class": "findings" }, plot);
          cap.findings.forEach(function (f) {
            var y = TOP + f.lane * LANE + 11;
            var c = el("circle", { "class": "finding sev-" + f.sev, r: 5.5, cy: y, "data-f": f.key, "data-rule": f.id }, fg);
            shapes.push([c, +f.s, null]);
            marks[f.key] = [c, f];
          });

          function x(t) { return LABEL + (t - view.a) / (view.b - view.a) * plotW; }
          function tAt(px) { return view.a + (px - LABEL) / plotW * (view.b - view.a); }
          function layout() {
            width = Math.max(root.clientWidth, 480);
            plotW = width - LABEL - COST;
            svg.setAttribute("viewBox", "0 0 " + width + " " + height);
            svg.setAttribute("width", width);
            clipRect.setAttribute("width", plotW + 7);
            clipRect.setAttribute("x", LABEL - 6);
            svg.querySelectorAll("line.lane-line").forEach(function (l) { l.setAttribute("x2", LABEL + plotW); });
            costBars.forEach(function (b) {
              var w = Math.max(1, (COST - 70) * b[2] / mostCost);
              b[0].setAttribute("x", LABEL + plotW + 8);
              b[0].setAttribute("width", w);
              b[1].setAttribute("x", LABEL + plotW + 12 + w);
            });
            draw();
          }
          function draw() {
            pending = false;
            for (var i = 0; i < shapes.length; i++) {
              var s = shapes[i], x0 = x(s[1]);
              if (s[2] === null) { s[0].setAttribute("cx", x0.toFixed(1)); continue; }
              var x1 = x(s[2]);
              // Off-screen phases are clamped (the clip hides them), so coordinates stay small at any zoom.
              var a = Math.max(x0, LABEL - 10), b = Math.min(Math.max(x1, x0 + 2), LABEL + plotW + 10);
              s[0].setAttribute("x", a.toFixed(1));
              s[0].setAttribute("width", Math.max(0, b - a).toFixed(1));
            }
            if (selected) {
              var hx0 = Math.max(x(selected.s), LABEL - 10), hx1 = Math.min(Math.max(x(selected.e), x(selected.s) + 3), LABEL + plotW + 10);
              highlight.setAttribute("x", (hx0 - 1).toFixed(1));
              highlight.setAttribute("width", Math.max(3, hx1 - hx0 + 2).toFixed(1));
            }
            drawAxis();
            controls.querySelector(".range-start").value = Math.round(view.a / span * 1000);
            controls.querySelector(".range-end").value = Math.round(view.b / span * 1000);
            controls.querySelector(".range-text").textContent = "+" + human(view.a) + " → +" + human(view.b) + " (" + human(view.b - view.a) + " shown of " + human(span) + ")";
            root.dataset.viewStart = view.a;
            root.dataset.viewEnd = view.b;
          }
          function drawAxis() {
            while (axis.firstChild) axis.removeChild(axis.firstChild);
            var want = (view.b - view.a) / Math.max(1, plotW / 110), step = STEPS[STEPS.length - 1];
            for (var i = 0; i < STEPS.length; i++) if (STEPS[i] >= want) { step = STEPS[i]; break; }
            var yb = TOP + cap.lanes.length * LANE;
            for (var t = Math.ceil(view.a / step) * step; t <= view.b + 1e-12; t += step) {
              var px = x(t);
              el("line", { "class": "grid", x1: px, x2: px, y1: TOP, y2: yb }, axis);
              var label = el("text", { x: px, y: yb + 12, "text-anchor": "middle" }, axis);
              label.textContent = "+" + human(t);
            }
            var left = el("text", { x: LABEL, y: yb + 25 }, axis);
            left.textContent = clock(+cap.t0, view.a) + " UTC";
            var right = el("text", { x: LABEL + plotW, y: yb + 25, "text-anchor": "end" }, axis);
            right.textContent = clock(+cap.t0, view.b) + " UTC";
            var cost = el("text", { x: LABEL + plotW + 8, y: yb + 12 }, axis);
            cost.textContent = "radio charge";
          }
          function schedule() { if (!pending) { pending = true; requestAnimationFrame(draw); } }
          function setView(a, b, now) {
            var w = Math.min(span, Math.max(b - a, minWidth));
            a = Math.max(0, Math.min(a, span - w));
            view = { a: a, b: a + w };
            if (now) draw(); else schedule();
          }
          function zoom(factor, at, now) {
            var t = at === undefined ? (view.a + view.b) / 2 : at;
            setView(t - (t - view.a) * factor, t + (view.b - t) * factor, now);
          }
          this.setView = function (a, b) { setView(a, b, true); };
          this.view = function () { return { a: view.a, b: view.b }; };
          this.select = select;

          function select(key, scroll) {
            var m = marks[key];
            if (!m) return;
            document.querySelectorAll(".finding.selected, tr.selected, td.records.lit, pre span.lit").forEach(function (e) {
              e.classList.remove("selected"); e.classList.remove("lit"); e.removeAttribute("aria-current");
            });
            selected = { s: +m[1].s, e: +m[1].e };
            highlight.setAttribute("visibility", "visible");
            m[0].classList.add("selected");
            // A span out of view: bring it in, with some context either side.
            if (selected.e < view.a || selected.s > view.b) {
              var w = view.b - view.a, mid = (selected.s + selected.e) / 2;
              setView(mid - w / 2, mid + w / 2, true);
            } else draw();
            var row = document.getElementById(key);
            if (row) {
              if (row.hidden) expand(row.closest("tbody"), true);
              row.classList.add("selected");
              row.setAttribute("aria-current", "true");
              var rec = row.querySelector("td.records");
              if (rec) rec.classList.add("lit");
              if (scroll !== false) row.scrollIntoView({ block: "center" });
            }
            if (m[1].conn !== null) {
              var panel = document.getElementById("conn-" + ci + "-" + m[1].conn);
              var records = {};
              m[1].records.forEach(function (r) { records[r] = true; });
              if (panel) panel.querySelectorAll("pre span[data-r]").forEach(function (s) {
                if (records[s.getAttribute("data-r")]) s.classList.add("lit");
              });
            }
          }

          root.addEventListener("wheel", function (ev) {
            var rect = svg.getBoundingClientRect(), px = (ev.clientX - rect.left) * width / rect.width;
            if (px < LABEL || px > LABEL + plotW) return;
            ev.preventDefault();
            zoom(Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002))), tAt(px));
          }, { passive: false });
          var drag = null;
          root.addEventListener("mousedown", function (ev) {
            if (ev.button !== 0) return;
            drag = { x: ev.clientX, a: view.a, b: view.b, moved: false };
          });
          window.addEventListener("mousemove", function (ev) {
            if (!drag) return;
            var dx = ev.clientX - drag.x;
            if (Math.abs(dx) > 3) { drag.moved = true; root.classList.add("dragging"); hideTip(); }
            if (drag.moved) {
              var rect = svg.getBoundingClientRect(), dt = -dx * width / rect.width / plotW * (drag.b - drag.a);
              setView(drag.a + dt, drag.b + dt);
            }
          });
          window.addEventListener("mouseup", function () {
            if (drag && drag.moved) root.dataset.dragged = "1";
            drag = null; root.classList.remove("dragging");
          });
          root.addEventListener("click", function (ev) {
            if (root.dataset.dragged) { delete root.dataset.dragged; return; }
            var t = ev.target;
            if (t.classList.contains("finding")) { select(t.getAttribute("data-f")); return; }
            if (t.classList.contains("phase")) {
              var lane = cap.lanes[+t.getAttribute("data-l")], p = lane.phases[+t.getAttribute("data-p")];
              var id = p.length > 4 ? p[4] : lane.conn;
              if (id !== null) openConnection(ci, id);
            }
          });
          root.addEventListener("mouseover", function (ev) {
            var t = ev.target;
            if (t.classList.contains("finding")) {
              // Its words are its row's: rule, message, what it would save.
              var f = marks[t.getAttribute("data-f")][1], row = document.getElementById(f.key), title = f.id;
              if (row) title = row.cells[1].textContent + ": " + row.cells[3].textContent + " (saves " + row.cells[4].textContent + ")";
              showTip(title + "\n+" + human(+f.s) + (f.e > f.s ? " → +" + human(+f.e) : "") + (f.records.length ? "\nrecords " + f.records.slice(0, 8).join(", ") : ""), ev);
            } else if (t.classList.contains("phase")) {
              var p = cap.lanes[+t.getAttribute("data-l")].phases[+t.getAttribute("data-p")];
              showTip(p[3] + "\n+" + human(+p[0]) + (p[1] > p[0] ? " → +" + human(+p[1]) + " (" + human(p[1] - p[0]) + ")" : ""), ev);
            } else if (t.classList.contains("cost-bar")) {
              showTip(cap.lanes[+t.getAttribute("data-l")].cost, ev);
            } else hideTip();
          });
          root.addEventListener("mouseleave", hideTip);
          root.addEventListener("keydown", function (ev) {
            var w = view.b - view.a;
            if (ev.key === "+" || ev.key === "=") zoom(0.5, undefined, true);
            else if (ev.key === "-" || ev.key === "_") zoom(2, undefined, true);
            else if (ev.key === "ArrowLeft") setView(view.a - w * 0.2, view.b - w * 0.2, true);
            else if (ev.key === "ArrowRight") setView(view.a + w * 0.2, view.b + w * 0.2, true);
            else if (ev.key === "0" || ev.key === "Home") setView(0, span, true);
            else return;
            ev.preventDefault();
          });
          controls.querySelector(".zoom-in").addEventListener("click", function () { zoom(0.5, undefined, true); });
          controls.querySelector(".zoom-out").addEventListener("click", function () { zoom(2, undefined, true); });
          controls.querySelector(".zoom-reset").addEventListener("click", function () { setView(0, span, true); });
          function pan(direction) { var w = view.b - view.a; setView(view.a + direction * w * 0.2, view.b + direction * w * 0.2, true); }
          controls.querySelector(".pan-left").addEventListener("click", function () { pan(-1); });
          controls.querySelector(".pan-right").addEventListener("click", function () { pan(1); });
          var start = controls.querySelector(".range-start"), end = controls.querySelector(".range-end");
          function fromSliders(moved) {
            var a = +start.value / 1000 * span, b = +end.value / 1000 * span;
            if (b - a < minWidth) { if (moved === start) a = b - minWidth; else b = a + minWidth; }
            setView(a, b);
          }
          start.addEventListener("input", function () { fromSliders(start); });
          end.addEventListener("input", function () { fromSliders(end); });
          window.addEventListener("resize", layout);
          layout();
        }

        // Findings: sorting by severity or cost, groups that expand, and a row's click selecting its finding.
        function expand(tbody, open) {
          var button = tbody.querySelector("button.expand");
          if (!button) return;
          button.setAttribute("aria-expanded", open ? "true" : "false");
          button.textContent = open ? "▾" : "▸";
          tbody.querySelectorAll("tr.member").forEach(function (r) { r.hidden = !open; });
        }
        document.querySelectorAll("table.findings").forEach(function (table) {
          var ci = +table.getAttribute("data-capture");
          var direction = {};
          table.querySelectorAll("button.sort").forEach(function (b) {
            b.addEventListener("click", function () {
              var key = b.getAttribute("data-sort"), desc = key === "cost";
              direction[key] = direction[key] === undefined ? desc : !direction[key];
              var sign = direction[key] ? -1 : 1;
              var bodies = Array.prototype.slice.call(table.tBodies);
              bodies.sort(function (p, q) {
                var d = (+p.getAttribute("data-" + key) - +q.getAttribute("data-" + key)) * sign;
                if (d === 0 && key === "sev") d = +q.getAttribute("data-cost") - +p.getAttribute("data-cost");
                if (d === 0 && key === "cost") d = +p.getAttribute("data-sev") - +q.getAttribute("data-sev");
                return d !== 0 ? d : +p.getAttribute("data-order") - +q.getAttribute("data-order");
              });
              bodies.forEach(function (t) { table.appendChild(t); });
              table.setAttribute("data-sorted", key + (direction[key] ? "-desc" : "-asc"));
              table.querySelectorAll("th[aria-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
              b.closest("th").setAttribute("aria-sort", direction[key] ? "descending" : "ascending");
            });
          });
          function selectRow(row) {
            var tl = timelines.filter(function (t) { return t.ci === ci; })[0];
            if (row && tl) tl.select(row.getAttribute("data-f"), false);
          }
          table.addEventListener("click", function (ev) {
            var b = ev.target.closest("button.expand");
            if (b) { expand(b.closest("tbody"), b.getAttribute("aria-expanded") !== "true"); return; }
            if (ev.target.closest("a")) return;
            selectRow(ev.target.closest("tr[data-f]"));
          });
          // A finding's row, focused: Enter or Space selects it (its span on the timeline), ↑/↓ go to the next row.
          table.addEventListener("keydown", function (ev) {
            var row = ev.target.closest && ev.target.closest("tr[data-f]");
            if (!row || ev.target !== row) return;
            if (ev.key === "Enter" || ev.key === " ") selectRow(row);
            else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
              var rows = Array.prototype.filter.call(table.querySelectorAll("tr[data-f]"), function (r) { return !r.hidden; });
              var next = rows[rows.indexOf(row) + (ev.key === "ArrowDown" ? 1 : -1)];
              if (next) next.focus();
            } else return;
            ev.preventDefault();
          });
        });
        })();
        """#
}
