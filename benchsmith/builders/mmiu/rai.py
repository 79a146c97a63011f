"""MMIU's Responsible-AI statement for ``croissant.json`` (see :class:`Card.rai`)."""

RAI = {
    "description": "Multi-image understanding tasks rebuilt from their sources: ScanNet 3D "
    "tasks (depth, detection, pose, reconstruction, correspondence) and COCO spatial tasks "
    "(jigsaw, spatial transformation), multiple choice, with a circular-evaluation config.",
    "collection": "No new data was collected: frames come from ScanNet v2 scans (.sens) and "
    "images from COCO 2014 val; items are drawn with a recorded seed.",
    "preprocessing": "Frames are extracted and rendered; questions, options and distractors "
    "are generated from the scenes' geometry and annotations; options are checked for "
    "shortcuts (the answer guessable from the text alone).",
    "limitations": "ScanNet images are published as references (ScanNet's terms) and must be "
    "rehydrated from a licensed copy; indoor scenes only for the 3D tasks.",
    "biases": "ScanNet's indoor North American scenes; COCO's geographic and cultural skew.",
    "personal": "Scans and photos may show people; no personal fields are kept.",
    "sources": [
        {
            "name": "ScanNet v2",
            "url": "http://www.scan-net.org",
            "license": "ScanNet Terms of Use (non-commercial research)",
        },
        {
            "name": "COCO 2014 val",
            "url": "https://cocodataset.org",
            "license": "annotations CC BY 4.0; images under their Flickr licences",
        },
    ],
    "cite_as": "@article{meng2024mmiu, title={MMIU: Multimodal Multi-image Understanding for "
    "Evaluating Large Vision-Language Models}, author={Meng, Fanqing and others}, "
    "journal={arXiv preprint arXiv:2408.02718}, year={2024}}",
}
