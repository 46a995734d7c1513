-- Build against build, per test: findings per rule in the first and the last build (by name), where they
-- differ — what the newer build started (or stopped) doing on the radio.
WITH per_build AS (
    SELECT regexp_extract(file, 'build-([0-9]+)', 1) AS build,
           regexp_extract(file, '([^/-]+)-([^/]+)-btsnoop_hci[.]log$', 1) AS test,
           rule, count(*) AS findings
    FROM findings
    WHERE file LIKE '%btsnoop_hci.log'
    GROUP BY 1, 2, 3
), builds AS (
    SELECT min(build) AS base, max(build) AS head FROM per_build
)
SELECT p.test, p.rule,
       sum(CASE WHEN p.build = b.base THEN p.findings ELSE 0 END) AS base_findings,
       sum(CASE WHEN p.build = b.head THEN p.findings ELSE 0 END) AS head_findings
FROM per_build p CROSS JOIN builds b
GROUP BY p.test, p.rule
HAVING sum(CASE WHEN p.build = b.base THEN p.findings ELSE 0 END) <> sum(CASE WHEN p.build = b.head THEN p.findings ELSE 0 END)
ORDER BY p.test, p.rule;
