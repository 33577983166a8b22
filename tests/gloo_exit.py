"""How a test's own gloo job leaves once its process group is destroyed: without finalizing CPython.

On CPython's way out, a gloo worker thread that takes the GIL after finalization began (to let go of
its last collective's Python objects) is ended by ``pthread_exit`` inside C++ code that may not
unwind, and ``std::terminate`` aborts the rank: "terminate called without an active exception",
SIGABRT. Whether it happens is a race with that thread; beside two busy processes a 2-rank DDP job
lost it about one time in five. It is PyTorch's teardown, after every result is written, and not
what the tests hold, so these jobs end with ``os._exit`` once the group is destroyed, after flushing what was
printed, as dpscale's own workers end with it once every rank has passed a last barrier
(``dpscale.measure.worker``, which leaves the group to the process's end).
"""

from __future__ import annotations

import os
import sys

# The same three lines, for a script written into a temporary folder and run by torchrun, which
# cannot import this module.
SCRIPT_ENDING = "sys.stdout.flush(); sys.stderr.flush()\nos._exit(0)  # see tests/gloo_exit.py\n"


def leave(code: int = 0) -> None:
    """End this process now with ``code``, after flushing standard output and error."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
