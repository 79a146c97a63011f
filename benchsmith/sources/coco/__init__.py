"""COCO 2014 val: captions reader, resumable fetch, miniature sample writer."""
