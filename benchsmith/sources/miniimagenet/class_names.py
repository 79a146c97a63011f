"""What a MiniImageNet class is called in words: what a text-to-image judge is asked to find.

A MiniImageNet copy names its classes by WordNet id only (``n04146614``). A judge of a
generated image needs the name ("school bus"), so names come from, in order:

1. ``LOC_synset_mapping.txt`` in the copy's root, if there is one: ImageNet's own file (one
   ``<wnid> <name>, <other names>`` line per class; the first name is used). Put ImageNet's
   file there to name any class; the sample writes one for its invented classes.
2. The 20 classes of the Ravi-Larochelle ``test.csv`` (the classes ``open_mi`` and
   ``open_t2i_mi`` draw from), built in: their ImageNet names.

A class with no name is an error naming the class and both ways to name it.
"""

from __future__ import annotations

from pathlib import Path

from benchsmith.core.errors import SourceError

SYNSET_FILE = "LOC_synset_mapping.txt"

# ImageNet's first name of each class of the Ravi-Larochelle test split
TEST_CLASS_NAMES: dict[str, str] = {
    "n01930112": "nematode",
    "n01981276": "king crab",
    "n02099601": "golden retriever",
    "n02110063": "malamute",
    "n02110341": "dalmatian",
    "n02116738": "African hunting dog",
    "n02129165": "lion",
    "n02219486": "ant",
    "n02443484": "black-footed ferret",
    "n02871525": "bookshop",
    "n03127925": "crate",
    "n03146219": "cuirass",
    "n03272010": "electric guitar",
    "n03544143": "hourglass",
    "n03775546": "mixing bowl",
    "n04146614": "school bus",
    "n04149813": "scoreboard",
    "n04418357": "theater curtain",
    "n04522168": "vase",
    "n07613480": "trifle",
}


def read_synset_names(path: str | Path) -> dict[str, str]:
    """``wnid -> first name`` from an ImageNet ``LOC_synset_mapping.txt``."""
    path = Path(path)
    names: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        wnid, _, rest = line.strip().partition(" ")
        name = rest.split(",")[0].strip()
        if not (wnid.startswith("n") and wnid[1:].isdigit() and name):
            raise SourceError(
                f"line {number} is not `<wnid> <name>, ...`: {line[:80]!r}",
                path=path,
                fix="use ImageNet's LOC_synset_mapping.txt, or one `n01234567 name` per line",
            )
        names[wnid] = name
    return names


def class_names(root: str | Path) -> dict[str, str]:
    """Every name known for the copy at ``root`` (its synset file over the built-in names)."""
    mapping = Path(root) / SYNSET_FILE
    return {**TEST_CLASS_NAMES, **(read_synset_names(mapping) if mapping.is_file() else {})}


def class_name(names: dict[str, str], wnid: str, root: str | Path) -> str:
    if wnid not in names:
        raise SourceError(
            f"MiniImageNet class {wnid} has no name, and a text-to-image judge needs one",
            path=Path(root) / SYNSET_FILE,
            fix=f"put ImageNet's {SYNSET_FILE} (or a line `{wnid} <name>`) in the MiniImageNet "
            "root",
        )
    return names[wnid]


def write_synset_names(path: str | Path, names: dict[str, str]) -> None:
    """The file :func:`read_synset_names` reads (sorted by wnid, as ImageNet's is)."""
    Path(path).write_text("".join(f"{w} {names[w]}\n" for w in sorted(names)), encoding="utf-8")
