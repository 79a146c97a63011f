"""MULTI's Responsible-AI statement for ``croissant.json`` (see :class:`Card.rai`)."""

RAI = {
    "description": "Chinese exam questions with images (junior high, senior high, university, "
    "driving and civil-service tests): single and multiple choice, fill in the blank and open "
    "questions, with the Elite subset and the knowledge pieces of MULTI-Extend.",
    "collection": "Questions come from the official MULTI release and from crawled question "
    "pages and scanned exam pages read by OCR; each page's file and sha256 are recorded.",
    "preprocessing": "OCR (RapidOCR's bundled PP-OCR models by default; each scanned page "
    "records the engine, its version and model files) with cached results; questions split, typed, "
    "scored in points and cleaned (hints removed, parallel blanks split), near duplicates "
    "across sources removed by MinHash LSH and pHash, selection per the paper's Appendix D.",
    "limitations": "OCR errors remain possible on scans (measured character error rates are "
    "in the benchmark notes); open questions need a judge to score; Chinese only.",
    "biases": "Chinese curricula and exam styles; subjects weighted as the sources are.",
    "personal": "Exam questions; no personal information is kept.",
    "sources": [
        {
            "name": "OpenDFM/MULTI-Benchmark",
            "url": "https://huggingface.co/datasets/OpenDFM/MULTI-Benchmark",
            "license": "the MULTI release's terms (research use)",
        },
        {
            "name": "crawled question pages and exam scans",
            "license": "the terms of the site or exam each page came from",
        },
    ],
    "cite_as": "@article{zhu2024multi, title={MULTI: Multimodal Understanding Leaderboard with "
    "Text and Images}, author={Zhu, Zichen and others}, journal={arXiv preprint "
    "arXiv:2402.03173}, year={2024}}",
}
