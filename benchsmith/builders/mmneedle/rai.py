"""MMNeedle's Responsible-AI statement for ``croissant.json`` (see :class:`Card.rai`)."""

RAI = {
    "description": "Multimodal needle-in-a-haystack: COCO 2014 val images stitched into grids "
    "(haystacks); the model is given a caption and must say which image and cell hold it, or "
    "that none does.",
    "collection": "No new data was collected: images and captions come from COCO 2014 val "
    "(images from Flickr); the plan draws them with a recorded seed.",
    "preprocessing": "Images are resized into grid cells and stitched (JPEG or PNG as "
    "published); captions are normalised to pick a unique needle; haystacks with an exact or "
    "near-duplicate picture are reported. Every row's provenance names the COCO files and "
    "sha256s it came from.",
    "limitations": "English captions only; COCO's object vocabulary; a caption may describe "
    "more than one image although the plan keeps needle captions unique; synthetic grids are "
    "not natural long documents.",
    "biases": "COCO's geographic and cultural skew (Flickr photos, mostly North American and "
    "European scenes) and the biases of its crowd-written captions.",
    "personal": "COCO photos may show people; no names or other personal fields are kept.",
    "sources": [
        {
            "name": "COCO 2014 val",
            "url": "https://cocodataset.org",
            "license": "annotations CC BY 4.0; images under their Flickr licences",
        }
    ],
    "cite_as": "@article{wang2024mmneedle, title={Multimodal Needle in a Haystack: Benchmarking "
    "Long-Context Capability of Multimodal Large Language Models}, author={Wang, Hengyi and "
    "others}, journal={arXiv preprint arXiv:2406.11230}, year={2024}}",
}
