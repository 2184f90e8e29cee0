"""The gate's checks, one module each, listed in ``gate.registry.ORDER``.

Each module declares ``CHECK = Spec(...)`` (``gate.registry``): a verdict that reads the
``gate.context.Gate`` and returns its problems and the line it passes with. Machinery several
checks share (packing, policy records, the scope resolver) stays in ``gate/``.
"""
