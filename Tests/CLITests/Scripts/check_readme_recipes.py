#!/usr/bin/env python3
"""The README's CI recipes, checked as far as this machine allows: every YAML block parses (PyYAML) into the
shape its CI expects, and the reports its jobs upload are what the CIs read: the SARIF of `audit --format sarif`
follows SARIF 2.1.0 (../shared/schemas), the JUnit of `audit --format junit` over a directory loads in a JUnit
parser (PyPI junitparser) with a test case per capture. Usage: check_readme_recipes.py BTLENS REPO_ROOT
Last line: N passed, N failed."""
import json, os, re, subprocess, sys, tempfile

import yaml
from junitparser import JUnitXml

btlens, root = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok  " if ok else "FAIL ") + what)
    passed += bool(ok)
    failed += not ok


readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", readme, re.S)]
check(len(blocks) >= 2, f"README has the GitHub and GitLab recipes ({len(blocks)} YAML blocks)")
github = next((b for b in blocks if isinstance(b, dict) and "jobs" in b), None)
check(github is not None and any("upload-sarif" in str(s.get("uses", "")) for job in github["jobs"].values() for s in job["steps"]),
      "the GitHub Actions job parses and uploads SARIF")
gitlab = next((b for b in blocks if isinstance(b, dict) and any(isinstance(v, dict) and "script" in v for v in b.values())), None)
check(gitlab is not None and any(isinstance(v, dict) and v.get("artifacts", {}).get("reports", {}).get("junit") for v in gitlab.values()),
      "the GitLab job parses and reports JUnit")

samples = os.path.join(root, "samples")
with tempfile.TemporaryDirectory() as tmp:
    sarif = os.path.join(tmp, "btlens.sarif")
    subprocess.run([btlens, "audit", "--fail-on", "never", "--format", "sarif", "-o", sarif, samples], check=True)
    schema_path = os.path.join(os.path.dirname(root), "shared", "schemas", "sarif-schema-2.1.0.json")
    if os.path.exists(schema_path):
        import jsonschema
        try:
            jsonschema.validate(json.load(open(sarif)), json.load(open(schema_path)))
            check(True, "the SARIF the GitHub job uploads follows SARIF 2.1.0")
        except jsonschema.ValidationError as e:
            check(False, f"SARIF 2.1.0: {e.message}")
    else:
        print(f"NOTE: {schema_path} is absent: the SARIF was NOT validated against the schema")
    junit = os.path.join(tmp, "btlens-junit.xml")
    subprocess.run([btlens, "audit", "--fail-on", "never", "--format", "junit", "-o", junit, samples], check=True)
    xml = JUnitXml.fromfile(junit)
    cases = [c for suite in xml for c in suite]
    captures = [f for f in os.listdir(samples) if not f.startswith(".")]
    check(len(cases) >= 1 and len(list(xml)) >= 1, f"the JUnit loads in junitparser: {len(list(xml))} suites, {len(cases)} test cases for {len(captures)} files")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
