"""One module per MMIU task; each turns the sources into :class:`~..items.Draft` s.

``GENERATORS`` maps a task name to its module's ``drafts(ctx)``; the plan step runs the
configured tasks in :data:`benchsmith.builders.mmiu.config.TASKS` order.
"""

from benchsmith.builders.mmiu.tasks import (
    correspondence,
    depth_estimation,
    jigsaw,
    object_detection,
    pose_estimation,
    scene_reconstruction,
    spatial_transform,
)

GENERATORS = {
    module.TASK: module.drafts
    for module in (
        pose_estimation,
        scene_reconstruction,
        depth_estimation,
        object_detection,
        correspondence,
        jigsaw,
        spatial_transform,
    )
}
