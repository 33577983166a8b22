"""Measuring scaling on a real cluster with torch.distributed (the ``measure`` extra).

The only part of dpscale that imports torch:

- :mod:`dpscale.measure.workloads`: synthetic models (MLP, small CNN, small transformer) sized
  by parameters and batch;
- :mod:`dpscale.measure.worker`: one rank of a measured run, started by torchrun (internal:
  run ``dpscale measure`` or ``probe``);
- :mod:`dpscale.measure.launcher`: ``dpscale measure``: its inputs checked into a plan,
  torchrun at each size, a typed record for each (:mod:`dpscale.records`);
- :mod:`dpscale.measure.probing`: ``dpscale probe``: the same steps, into a network profile;
- :mod:`dpscale.measure.launch`: where and how a run starts (:class:`~dpscale.measure.launch.Launch`),
  its threads per rank counted from :mod:`dpscale.measure.cpus` (the CPUs this process may use:
  its affinity and cgroup quota, as srun or a container set them), and the checks both commands
  make before any rank starts (bounds, the file a run writes);
- :mod:`dpscale.measure.supervise`: torchrun in a session of its own, ended whole by a timeout or
  a signal, and :mod:`dpscale.measure.diagnosis`, which names the rank that failed and why;
- :mod:`dpscale.measure._lifeline`: how torchrun and the workers end with the launcher, even
  when it is killed outright;
- :mod:`dpscale.measure.summary`: the statistics of measured runs (slowest rank, intervals);
- :mod:`dpscale.measure.alphabeta`: a probe's bandwidths and each tier's α and β;
- :mod:`dpscale.measure.meter`: :class:`Meter`, for timing the steps of one's own training loop.
"""

__all__: list[str] = []  # a package of modules: import what you need from each
