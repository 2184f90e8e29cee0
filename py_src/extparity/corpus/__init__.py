"""The corpus: cases loaded from JSON Lines (``cases``), how a verdict meets a case's partial
expectation (``expect``), and the known deviations file (``deviations``)."""
