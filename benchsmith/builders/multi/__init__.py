"""MULTI (Zhu et al., SCIS 2025): Chinese exam questions with images, from three source kinds.

``ocr`` turns raw crawled HTML pages and scanned exam pages into problem records in the
release's own shape, cached by page (:mod:`.convert`); ``questions`` splits every problem of
the official release and of the converted pages into questions and cleans them
(:mod:`.questions`, :mod:`.cleaning`); ``select`` removes near duplicates (:mod:`.near_dups`),
applies the paper's Appendix D selection to crawled problems (:mod:`.selection`) and marks Elite
(:mod:`.elite`); ``elite`` re-draws a hard list from judge runs; ``publish`` writes the configs
``questions``, ``elite`` and ``extend`` (:mod:`.publication`), and ``audit`` re-derives them
(:mod:`.audit`).
"""
