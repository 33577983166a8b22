"""Measuring scaling on a real cluster with torch.distributed (the ``measure`` extra).

The only part of dpscale that imports torch:

- :mod:`dpscale.measure.workloads`: synthetic models (MLP, small CNN, small transformer) sized
  by parameters and batch;
- :mod:`dpscale.measure.worker`: one rank of a measured run, started by torchrun;
- :mod:`dpscale.measure.launcher`: ``dpscale measure`` and ``dpscale probe``: torchrun at each
  size, faults turned into clear errors, records written as JSON lines;
- :mod:`dpscale.measure._lifeline`: how torchrun and the workers end with the launcher, even
  when it is killed outright;
- :mod:`dpscale.measure.meter`: :class:`Meter`, for timing the steps of one's own training loop.
"""
