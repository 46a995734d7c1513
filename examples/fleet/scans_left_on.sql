-- Scans left on by platform: scan sessions still running when the capture ended (end_time null), and how long
-- they had run, per host platform (android, ios, linux, or null where the capture does not show it).
SELECT coalesce(c.platform, 'unknown') AS platform,
       count(*) AS scans,
       sum(CASE WHEN s.end_time IS NULL THEN 1 ELSE 0 END) AS left_on,
       round(sum(CASE WHEN s.end_time IS NULL THEN c.last_timestamp - s.start_time ELSE 0 END), 3) AS left_on_s,
       count(DISTINCT CASE WHEN s.end_time IS NULL THEN s.sha256 END) AS captures_with_scan_left_on
FROM scans s
JOIN captures c ON c.sha256 = s.sha256 AND c.file = s.file
GROUP BY 1
ORDER BY left_on DESC, platform;
