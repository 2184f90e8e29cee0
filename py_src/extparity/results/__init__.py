"""The JSON result, the single source of every report: built from a run (``build``), read back
(``read``, ``result.schema.json``), merged from shards (``shards``), compared between runs
(``compare``), verdicts laid out line by line (``verdict_diff``) and failing cases saved as a
corpus (``repro``)."""
