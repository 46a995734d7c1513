-- The phone's radio charge per test per build, for a device farm's captures named
-- .../build-<N>/<test>-<serial>-btsnoop_hci.log (Android's test harness names them <test>-<serial>-…).
SELECT regexp_extract(file, 'build-([0-9]+)', 1) AS build,
       regexp_extract(file, '([^/-]+)-([^/]+)-btsnoop_hci[.]log$', 1) AS test,
       count(*) AS captures,
       round(sum(radio_charge_mc), 3) AS radio_charge_mc,
       round(avg(radio_charge_mc), 3) AS mean_radio_charge_mc,
       sum(findings) AS findings
FROM captures
WHERE error IS NULL AND file LIKE '%btsnoop_hci.log'
GROUP BY 1, 2
ORDER BY test, build;
