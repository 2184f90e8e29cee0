"""The release gate: checks over everything that ships (``checks``), run on the packed
artifacts' bytes (``artifacts``)."""
