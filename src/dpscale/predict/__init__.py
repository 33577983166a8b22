"""Predicting scaling efficiency from the hardware, the model and the batch.

- :mod:`dpscale.predict.pricing`: a step's collectives priced on a cluster by the α-β model of
  :mod:`dpscale.collectives` (below this package, shared with :mod:`dpscale.nccltests`), each
  measured shape (an nccl-tests run, a probe) at its own measured times;
- :mod:`dpscale.predict.network`: the links a log or a profile measured, settled with those typed;
- :mod:`dpscale.predict.defaults`: what a prediction assumes when not told otherwise, and the
  algorithms it knows;
- :mod:`dpscale.predict.fields` and :mod:`dpscale.predict.definition`: the definition of predict's
  inputs, from which the CLI's options, the page's fields and the API's parameters are made, and
  the rules across them;
- :mod:`dpscale.predict.model`: step time on n devices (compute, exposed communication, straggler
  and input wait) and the efficiency E(n) that follows, with the levers that would raise it;
- :mod:`dpscale.predict.uncertainty`: what the model cannot know (the step-time variation, the
  network's achieved share), their priors, and the interval they leave around E(n);
- :mod:`dpscale.predict.calibration`: those unknowns fitted to measured throughputs, and
  :mod:`dpscale.predict.learned`: what a calibration learned (prior against posterior) and what
  contradicts it;
- :mod:`dpscale.predict.sources`: where each term of the step came from (assumed, measured,
  fitted, a log, traces);
- :mod:`dpscale.predict.levers`: the what-ifs tried at the largest size, ranked;
- :mod:`dpscale.predict.traced`: what a run's profiler traces replace (speed, variation, a fixed
  imbalance, a link's share);
- :mod:`dpscale.predict.measured`: the step-time variation from measurement records;
- :mod:`dpscale.predict.presets`: link presets (common GPU interconnects and networks) and links
  read from a measured network profile;
- :mod:`dpscale.predict.wording`: the levers' what-ifs in words, in the user's language.
"""

__all__: list[str] = []  # a package of modules: import what you need from each
