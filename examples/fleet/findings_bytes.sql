-- Every finding back to the exact bytes: the capture (file and sha256), the first record it cites by number,
-- byte offset and length, the format to read it with.
SELECT f.file, f.sha256, c.format, f.rule, f.severity, f.record, f.byte_offset, f.length, f.message
FROM findings f
JOIN captures c ON c.sha256 = f.sha256 AND c.file = f.file
ORDER BY f.file, f.byte_offset;
