"""Each calculator in one home: what it takes, how it computes, what a result shows.

A module per calculator: its :class:`~dpscale.inputs.Definition` (the inputs with their meaning,
bounds and rules, each edge's extras kept apart in the input's records, and ``build``: values in, a
typed result out, no file read) and ``present(result, lang)``, the :class:`~dpscale.calculators.shown.Shown`
every edge prints: ``scale`` (the seed's), ``effective_batch``, ``bubble``, ``plan``, ``predict``,
``fit``, ``explain``, ``measure`` (measure and probe). The models they compute with stay in their own
modules (``dpscale.scaling``, ``dpscale.batch``, ``dpscale.pipeline``, ``dpscale.plan``,
``dpscale.predict``, ``dpscale.fit``, ``dpscale.explain``, ``dpscale.measure``); the command line,
the pages, the API and the notebook read the calculators. Nothing is imported here, so that
``dpscale scale`` loads its own calculator alone.
"""

__all__: list[str] = []  # a module per calculator, imported by name
