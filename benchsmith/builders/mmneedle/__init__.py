"""MMNeedle (Multimodal Needle in a Haystack) rebuilt from COCO 2014 val.

Plan (``plan.py``: which COCO images go into which stitched image and which sample), then
render (``render.py``: decode, resize, stitch, encode), then publish (``release.py``).
"""
