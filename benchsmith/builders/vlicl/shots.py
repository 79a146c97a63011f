"""The shot counts each VL-ICL task's episodes are materialised for (``vlicl.shots.<task>``),
declared once: the params check, ``params.yaml``'s defaults and the params reference are read
from :data:`Shots`, one field per task.

The paper's counts: ``open_mi``, ``open_t2i_mi`` and ``matching_mi`` stop at 5 because an
episode stores 5 images per class (matching: shot n = n same + n different pairs); a text
variant has its image task's counts.
"""

from __future__ import annotations

from dataclasses import make_dataclass
from typing import Any

from benchsmith.builders.vlicl.text_variants import TEXT_VARIANTS
from benchsmith.core.settings import setting

PAPER_SHOTS: dict[str, tuple[int, ...]] = {
    "open_mi": (0, 1, 2, 4, 5),
    "open_t2i_mi": (0, 1, 2, 4, 5),
    "matching_mi": (0, 1, 2, 4, 5),
    "clevr": (0, 1, 2, 4, 8),
    "operator_induction": (0, 1, 2, 4, 8),
    "operator_induction_interleaved": (0, 1, 2, 4, 8),
    "textocr": (0, 1, 2, 4, 8),
    "cobsat": (0, 1, 2, 4, 8),  # a scenario has 8 support images
    # the fast T2I tasks: 2-way episodes as open_t2i_mi's (the paper does not list their
    # shots; an episode that stores fewer images per class stops the plan, naming this key)
    "fast_count_t2i": (0, 1, 2, 4, 5),
    "fast_attr_t2i": (0, 1, 2, 4, 5),
}
DEFAULT_SHOTS: dict[str, tuple[int, ...]] = {
    **PAPER_SHOTS,
    **{variant: PAPER_SHOTS[base] for variant, (base, _) in TEXT_VARIANTS.items()},
}


def _declared(task: str, shots: tuple[int, ...]) -> tuple[str, type, Any]:
    base = TEXT_VARIANTS[task][0] if task in TEXT_VARIANTS else task
    why = f" (as {base}'s)" if base != task else ""
    help = f"shot counts of {task}'s episodes{why}"
    return task, tuple[int, ...], setting(shots, help, minimum=0, flag=False, metavar="N")


Shots = make_dataclass(
    "Shots", [_declared(task, shots) for task, shots in DEFAULT_SHOTS.items()], frozen=True
)
Shots.__module__ = __name__
Shots.__doc__ = "Shot counts per task (``vlicl.shots``): one list of counts per task."
