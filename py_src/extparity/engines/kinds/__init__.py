"""One module per engine kind (python, quickjs, v8, spidermonkey, chromium, firefox), each
imported only when an engine of that kind is built (``project.kinds`` names them)."""
