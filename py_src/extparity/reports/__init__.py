"""What people and CI read: the terminal summary and failure lines (``summary``), progress
bars, the self-contained HTML page (``html_report`` with its ``html/`` assets) and JUnit XML."""
