"""One module per engine kind (python, quickjs, v8, spidermonkey, chromium, firefox). Each class
declares what its kind is and can do; ``project.kinds`` names the classes and imports one when a
config names its kind. A kind imports Playwright or its JS binding only where an engine starts,
and nothing outside this package imports a kind: the rest of the harness asks the class."""
