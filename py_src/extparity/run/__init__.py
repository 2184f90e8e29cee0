"""A parity run: engines driven over the corpus and the module bytes they loaded checked
(``parity``), then each case judged (``judge``)."""
