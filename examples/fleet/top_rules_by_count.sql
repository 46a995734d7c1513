-- Which rules fire most across the fleet: findings, captures they appear in, and what they waste (the phone's
-- radio charge their fixes would save, millicoulombs over the captures' durations). A rule's severity can differ
-- from finding to finding (by how far past its threshold): count them with GROUP BY rule, severity.
SELECT rule, id,
       count(*) AS findings,
       count(DISTINCT sha256) AS captures,
       round(sum(coalesce(cost_phone_charge_mc, 0)), 3) AS waste_mc
FROM findings
GROUP BY rule, id
ORDER BY findings DESC, waste_mc DESC, rule;
