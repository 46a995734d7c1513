-- Slowest GATT discoveries by peripheral firmware: the Device Information values (manufacturer, model number,
-- firmware revision) and PnP ID btlens decoded from what the app read, with how long discovery took.
SELECT coalesce(peer_manufacturer, '?') AS manufacturer,
       coalesce(peer_model_number, '?') AS model,
       coalesce(peer_firmware_revision, '?') AS firmware,
       peer_pnp_vendor_id AS pnp_vendor, peer_pnp_product_id AS pnp_product, peer_pnp_product_version AS pnp_version,
       count(*) AS connections,
       round(avg(discovery_s), 3) AS mean_discovery_s,
       round(max(discovery_s), 3) AS max_discovery_s
FROM connections
WHERE discovery_s IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6
ORDER BY max_discovery_s DESC, connections DESC
LIMIT 20;
