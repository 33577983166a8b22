"""The time of NCCL's collectives in the α-β model: the cost model ``predict`` prices a step with
and ``probe --import`` fits nccl-tests' logs to.

Below both :mod:`dpscale.predict` and :mod:`dpscale.nccltests`, and importing neither:

- :mod:`dpscale.collectives.names`: the collectives and the all-reduce algorithms by name (no
  numpy: the inputs' definitions read them);
- :mod:`dpscale.collectives.link`: one tier of the network (latency α, bandwidth, the share of it
  reached, in-network reduction) and how n ranks fall into nodes;
- :mod:`dpscale.collectives.costs`: one collective of S bytes over n ranks as NCCL runs it, its
  rings and trees across nodes and the hierarchical form, and nccl-tests' algbw and busbw;
- :mod:`dpscale.collectives.innetwork`: an all-reduce reduced in the switches (NVLink SHARP,
  SHARP), as NCCL's NVLS and CollNet algorithms run it.
"""

__all__: list[str] = []  # a package of modules: import what you need from each
