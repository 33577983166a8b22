"""Predicting scaling efficiency from the hardware, the model and the batch (in progress).

Only the collective-communication costs have landed so far (:mod:`dpscale.predict.collectives`).
"""

__all__: list[str] = []  # a package of modules: import what you need from each
