"""MMNeedle (Multimodal Needle in a Haystack) rebuilt from COCO 2014 val.

Plan (``plan.py``: which COCO images go into which stitched image and which sample), then
render (``render.py`` with ``stitching``, ``cell_cache`` and ``render_pool``: decode, resize,
stitch, encode), then publish (``publication.py``, through the one publisher). ``family.py``
is what the shared layers see; ``cli.py`` its command-line steps; ``audit.py`` its audit hook.
"""
