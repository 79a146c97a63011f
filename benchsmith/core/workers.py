"""How many workers a step may use by default: the cores this process is allowed to run on.

``os.cpu_count()`` counts the machine's cores even when a container or ``taskset`` gives the
process fewer; the affinity mask is what the scheduler will actually grant.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
