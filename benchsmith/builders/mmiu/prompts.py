"""MMIU's prompt: question, context with the lettered choices, and the order the original used.

The official evaluation (``evaluate.py``) builds ``question + "\\n" + context`` for 23 tasks
(retrieval, captioning, temporal ordering, point and object tracking, 3D indoor and CAD
recognition, ...) and ``context + "\\n" + question`` for every other task, then appends
:data:`ANSWER_SUFFIX`. The context ends with "Select from the following choices." and the
options as ``A: ...`` lines. All seven tasks built here are context-first.
"""

from __future__ import annotations

from collections.abc import Sequence

ANSWER_SUFFIX = "\nPlease answer the option directly like A,B,C,D..."
CHOICES_LEAD = "Select from the following choices."
QUESTION_FIRST_TASKS = frozenset(
    {
        "image2image_retrieval", "sketch2image_retrieval", "vehicle_retrieval",
        "text2image_retrieval", "face_retrieval", "handwritten_retrieval",
        "person_reid", "multiple_image_captioning", "spot_the_similarity",
        "spot_the_diff", "general_action_recognition", "video_captioning",
        "next_img_prediction", "temporal_ordering", "meme_vedio_understanding",
        "action_quality_assessment", "temporal_localization", "mevis",
        "ravens_progressive_matrices", "threed_indoor_recognition",
        "threed_cad_recognition", "point_tracking", "single_object_tracking",
    }
)  # fmt: skip

POSE_CONVENTION = (
    "camera_to_world 4x4: camera x right, y down, z forward (metres); "
    "relative pose = inv(T_second) @ T_first"
)
COORD_FRAME = "scannet_aligned: the scene's axisAlignment applied, z up, metres"

TEMPLATES: dict[str, tuple[str, str]] = {  # task -> (context, question)
    "3d_pose_estimation": (
        "The four images are the colour image and the depth map of view 0, then the colour "
        "image and the depth map of view 1, taken by one RGB-D camera moving through a room "
        "(depth maps: brighter is nearer). Camera coordinates: x right, y down, z forward, in "
        "metres. A relative pose [R | t] maps a point's coordinates in view 0's camera to its "
        "coordinates in view 1's camera (p1 = R p0 + t).",
        "What is the relative pose [R | t] from view 0 to view 1?",
    ),
    "3d_scene_reconstruction": (
        "Images 1 and 2 are the colour image and the depth map of view A; images 3 and 4 those "
        "of view B (depth maps: brighter is nearer). Camera poses map camera coordinates "
        "(x right, y down, z forward) to world coordinates, in metres, as 3x4 [R | t]. "
        "Pose of view A: {pose_a}. Pose of view B: {pose_b}. Query pose: {pose_q}.",
        "Which candidate image was taken from the query pose?",
    ),
    "3d_depth_estimation": (
        "Images 1 and 2 are colour images of view A and view B, taken in one room. Camera "
        "poses map camera coordinates (x right, y down, z forward) to world coordinates, in "
        "metres, as 3x4 [R | t]. Pose of view A: {pose_a}. Pose of view B: {pose_b}. The "
        "remaining images are candidate depth maps (brighter is nearer).",
        "Which candidate is the depth map of view B?",
    ),
    "3d_object_detection": (
        "The images are a colour image and its depth map (brighter is nearer) of one view of "
        "a room. The camera pose maps camera coordinates (x right, y down, z forward) to "
        "world coordinates (z up, metres), as 3x4 [R | t]: {pose}. Boxes are written "
        "[x, y, z, dx, dy, dz]: the box centre and its size along the world axes, in metres, "
        "in the same world coordinates as the camera pose.",
        "Which list gives the 3D bounding boxes of every {category} visible in this view?",
    ),
    "visual_correspondence_scannet": (
        "Two images of one room from nearby viewpoints. A point marked REF is drawn on the "
        "first image; points A, B, C and D are drawn on the second image.",
        "Which point on the second image shows the same 3D point as REF on the first image?",
    ),
    "jigsaw_puzzle_solving": (
        "The images are the {cells} pieces of one photo cut into a {grid}x{grid} grid, "
        "shuffled. An answer lists, for each cell of the grid from left to right and top to "
        "bottom, the number of the image that belongs there.",
        "Which order of the images puts the photo back together?",
    ),
    "image_spatial_transformation_estimation": (
        "Image 2 is image 1 after one transformation about the image centre: an optional "
        "left-right flip, then a rotation (positive angles are counter-clockwise), then a "
        "scaling.",
        "Which transformation turns image 1 into image 2?",
    ),
}


def choices_block(options: Sequence[str]) -> str:
    lines = [f"{chr(ord('A') + k)}: {option}" for k, option in enumerate(options)]
    return CHOICES_LEAD + "\n" + "\n".join(lines)


def prompt_order(task: str) -> str:
    return "question_first" if task in QUESTION_FIRST_TASKS else "context_first"


def full_prompt(question: str, context: str, order: str) -> str:
    """What a model is sent, as the official evaluation assembles it."""
    body = question + "\n" + context if order == "question_first" else context + "\n" + question
    return body + ANSWER_SUFFIX
