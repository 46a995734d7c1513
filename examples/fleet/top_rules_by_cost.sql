-- Which rules cost most across the fleet: the phone's radio charge their fixes would save (with the low–high
-- range), and the share of all the captures' radio charge that is.
SELECT f.rule, f.id,
       count(*) AS findings,
       round(sum(coalesce(f.cost_phone_charge_mc, 0)), 3) AS waste_mc,
       round(sum(coalesce(f.cost_phone_low_mc, 0)), 3) AS waste_low_mc,
       round(sum(coalesce(f.cost_phone_high_mc, 0)), 3) AS waste_high_mc,
       round(100 * sum(coalesce(f.cost_phone_charge_mc, 0)) / max(t.charge_mc), 1) AS percent_of_radio_charge
FROM findings f
CROSS JOIN (SELECT sum(radio_charge_mc) AS charge_mc FROM captures WHERE error IS NULL) t
GROUP BY f.rule, f.id
ORDER BY waste_mc DESC, findings DESC, f.rule;
