"""MMIU (Meng et al., ICLR 2025): the seven tasks built from ScanNet v2 and COCO.

``plan`` draws the items (:mod:`.tasks`, one module per task; frames by :mod:`.scenes`,
options by :mod:`benchsmith.options.distractors`, images as references by :mod:`.images`),
``check`` runs the shortcut gate (:mod:`.shortcuts`), ``publish`` writes one config per task
plus ``circular`` (:mod:`.publication`), ``audit`` rebuilds and compares (:mod:`.audit`), and
``rehydrate`` fills in ScanNet images from the user's own copy (:mod:`.rehydrate`).
"""
