#!/usr/bin/env python3
"""Every public type (struct, class, enum, protocol) of the documented modules has a doc comment, and each
module's archive has its landing page. Usage: check_docs.py SYMBOL_GRAPHS_DIR ARCHIVES_DIR"""
import glob, json, os, sys

graphs, archives = sys.argv[1], sys.argv[2]
missing, documented, types = [], 0, 0
for module in sorted(os.listdir(graphs)):
    for path in glob.glob(os.path.join(graphs, module, f"{module}.symbols.json")):
        for s in json.load(open(path))["symbols"]:
            kind = s["kind"]["identifier"]
            if kind.endswith(".extension"):
                continue
            documented += bool(s.get("docComment"))
            if kind in ("swift.struct", "swift.class", "swift.enum", "swift.protocol"):
                types += 1
                if not s.get("docComment"):
                    missing.append(f"{module}.{s['names']['title']}")
    landing = os.path.join(archives, f"{module}.doccarchive", "data", "documentation", f"{module.lower()}.json")
    if not os.path.exists(landing):
        missing.append(f"{module}: no landing page in its archive")
for m in missing:
    print(f"docs: undocumented public type {m}")
print(f"docs: {types} public types, {len(missing)} undocumented; {documented} documented public symbols in all")
sys.exit(1 if missing else 0)
