"""Raw sources: fetch, link, check and read them, and write miniature copies in the real format.

``SOURCES`` is the registry behind ``benchsmith source VERB NAME``: one line per raw source.
"""

from benchsmith.core.registry import Entry, Registry

SOURCES = Registry(
    "source",
    Entry("coco", "benchsmith.sources.coco.source", "COCO"),
    Entry("miniimagenet", "benchsmith.sources.miniimagenet.source", "MINIIMAGENET"),
    Entry("clevr", "benchsmith.sources.clevr.source", "CLEVR"),
    Entry("textocr", "benchsmith.sources.textocr.source", "TEXTOCR"),
    Entry("vlicl_release", "benchsmith.sources.vlicl_release.source", "VLICL_RELEASE"),
    Entry("scannet", "benchsmith.sources.scannet.source", "SCANNET"),
    Entry("exams", "benchsmith.sources.exams.source", "EXAMS"),
)
