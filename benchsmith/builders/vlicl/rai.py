"""VL-ICL's Responsible-AI statement for ``croissant.json`` (see :class:`Card.rai`)."""

RAI = {
    "description": "Multimodal in-context learning episodes (VL-ICL Bench tasks): support and "
    "query splits and the seeded episodes that pair each query with its demonstrations.",
    "collection": "No new data was collected: images come from MiniImageNet (ImageNet 2012, "
    "Ravi-Larochelle split) and CLEVR v1.0; operator images are rendered with a recorded font.",
    "preprocessing": "Classes get made-up names (open_mi), CLEVR scenes give counting "
    "questions, episodes are drawn per seed; duplicate images across support and query and "
    "shared classes are checked and removed queries are listed in the card.",
    "limitations": "Synthetic tasks (made-up names, rendered operators) test in-context "
    "learning, not world knowledge; small query sets give wide confidence intervals.",
    "biases": "ImageNet's class and geographic skew; CLEVR is synthetic and has no people.",
    "personal": "ImageNet photos may show people; no personal fields are kept.",
    "sources": [
        {
            "name": "MiniImageNet (ImageNet 2012, Ravi-Larochelle split)",
            "url": "https://image-net.org",
            "license": "ImageNet terms of access (research use)",
        },
        {
            "name": "CLEVR v1.0",
            "url": "https://cs.stanford.edu/people/jcjohns/clevr/",
            "license": "CC BY 4.0",
        },
    ],
    "cite_as": "@article{zong2024vlicl, title={VL-ICL Bench: The Devil in the Details of "
    "Multimodal In-Context Learning}, author={Zong, Yongshuo and Bohdal, Ondrej and Hospedales, "
    "Timothy}, journal={arXiv preprint arXiv:2403.13164}, year={2024}}",
}
