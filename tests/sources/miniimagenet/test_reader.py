"""MiniImageNet (Ravi-Larochelle layout): the sample writer, the reader and every bad input."""

from __future__ import annotations

import hashlib
import io
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import SourceError
from benchsmith.sources.miniimagenet.reader import (
    SPLITS,
    MiniImageNet,
    read_miniimagenet,
    require_images_per_class,
)
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet

DEFAULT_CLASSES = {"train": 4, "val": 2, "test": 6}
IMAGES_PER_CLASS = 8


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("mini")
    return {
        layout: write_sample_miniimagenet(base / layout, layout=layout)
        for layout in ("flat", "per_class")
    }


@pytest.fixture
def flat_copy(samples: dict[str, Path], tmp_path: Path) -> Path:
    """A writable copy of the flat sample, for tests that break it."""
    return Path(shutil.copytree(samples["flat"], tmp_path / "mini"))


def file_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def csv_lines(root: Path, split: str) -> list[str]:
    return (root / f"{split}.csv").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("layout", ["flat", "per_class"])
def test_sample_reads_back_with_its_layout(samples: dict[str, Path], layout: str) -> None:
    mini = read_miniimagenet(
        samples[layout],
        expect_classes=DEFAULT_CLASSES,
        expect_images_per_class=IMAGES_PER_CLASS,
    )
    assert mini.layout == layout
    for split in SPLITS:
        assert csv_lines(samples[layout], split)[0] == "filename,label"
        assert len(mini.splits[split]) == DEFAULT_CLASSES[split] * IMAGES_PER_CLASS
        for image in mini.splits[split]:
            assert image.split == split
            assert image.filename.startswith(image.label) and image.filename.endswith(".jpg")
            assert len(image.filename) == len("n0153282900000005.jpg")
            expected_parent = samples[layout] / "images"
            if layout == "per_class":
                expected_parent = expected_parent / image.label
            assert image.path == expected_parent / image.filename
            assert image.path.is_file()
    assert set(mini.csv_sha256) == set(SPLITS)


def test_rows_keep_csv_order_and_classes_sort(samples: dict[str, Path]) -> None:
    root = samples["flat"]
    mini = read_miniimagenet(root)
    rows = [line.split(",") for line in csv_lines(root, "test")[1:]]
    assert [(i.filename, i.label) for i in mini.splits["test"]] == [tuple(r) for r in rows]
    classes = mini.classes("test")
    assert list(classes) == sorted({label for _, label in rows})
    for label, images in classes.items():
        assert [i.filename for i in images] == sorted(f for f, lab in rows if lab == label)
    with pytest.raises(ValueError, match="unknown MiniImageNet split"):
        mini.classes("validation")


def test_sample_classes_are_disjoint_and_enough_for_the_builder(samples: dict[str, Path]) -> None:
    mini = read_miniimagenet(samples["flat"])
    labels = {split: set(mini.classes(split)) for split in SPLITS}
    assert not labels["train"] & labels["val"]
    assert not labels["train"] & labels["test"]
    assert not labels["val"] & labels["test"]
    assert all(label.startswith("n9") and len(label) == 9 for s in labels.values() for label in s)
    # open_mi: 5 test classes with >= 6 images (5 support + 1 query); matching: >= 2 classes.
    assert sum(len(v) >= 6 for v in mini.classes("test").values()) >= 5
    require_images_per_class(mini, "test", 6, why="open_mi (5 support + 1 query)")
    assert len(labels["train"]) >= 2 and len(labels["test"]) >= 2


def test_sample_is_deterministic(samples: dict[str, Path], tmp_path: Path) -> None:
    again = write_sample_miniimagenet(tmp_path / "again", layout="flat")
    assert file_hashes(again) == file_hashes(samples["flat"])
    other = write_sample_miniimagenet(tmp_path / "other", layout="flat", seed=1)
    assert set(read_miniimagenet(other).classes("test")).isdisjoint(
        read_miniimagenet(again).classes("test")
    )


def test_sample_images_are_jpeg_distinct_and_recognisable(samples: dict[str, Path]) -> None:
    mini = read_miniimagenet(samples["flat"])
    images = [image for split in SPLITS for image in mini.splits[split]]
    pixels = {}
    for image in images:
        with Image.open(image.path) as decoded:
            assert decoded.format == "JPEG" and decoded.size == (84, 84)
            pixels[image.filename] = np.asarray(decoded.convert("RGB"), dtype=np.float64)
    digests = {hashlib.sha256(p.astype(np.uint8).tobytes()).hexdigest() for p in pixels.values()}
    assert len(digests) == len(images)  # no two images pixel-identical
    # Leave-one-out nearest class mean on a coarse colour + layout feature: every image is
    # closest to its own class, i.e. classes stay recognisable despite noise and offsets.
    features = {
        name: np.asarray(Image.fromarray(p.astype(np.uint8)).resize((6, 6))).ravel()
        for name, p in pixels.items()
    }
    by_label: dict[str, list[str]] = {}
    for image in images:
        by_label.setdefault(image.label, []).append(image.filename)
    for image in images:
        means = {
            label: np.mean([features[n] for n in names if n != image.filename], axis=0)
            for label, names in by_label.items()
        }
        nearest = min(
            means, key=lambda label: np.linalg.norm(features[image.filename] - means[label])
        )
        assert nearest == image.label


def test_custom_sizes(tmp_path: Path) -> None:
    root = write_sample_miniimagenet(
        tmp_path / "m",
        classes_per_split={"train": 2, "val": 1, "test": 3},
        images_per_class=3,
        size=32,
        layout="per_class",
        seed=5,
    )
    mini = read_miniimagenet(
        root, expect_classes={"train": 2, "val": 1, "test": 3}, expect_images_per_class=3
    )
    with Image.open(mini.splits["val"][0].path) as decoded:
        assert decoded.size == (32, 32)
    assert sorted(p.name for p in (root / "images").iterdir()) == sorted(
        label for split in SPLITS for label in mini.classes(split)
    )


def test_missing_csv_names_the_file(flat_copy: Path) -> None:
    (flat_copy / "val.csv").unlink()
    with pytest.raises(SourceError, match="CSV not found: val.csv") as info:
        read_miniimagenet(flat_copy)
    assert str(flat_copy / "val.csv") in str(info.value) and "fix:" in str(info.value)


def test_wrong_header_names_the_file(flat_copy: Path) -> None:
    lines = csv_lines(flat_copy, "train")
    (flat_copy / "train.csv").write_text("\n".join(["image,class", *lines[1:]]) + "\n")
    with pytest.raises(SourceError, match="header") as info:
        read_miniimagenet(flat_copy)
    assert str(flat_copy / "train.csv") in str(info.value)


@pytest.mark.parametrize(
    ("bad_row", "message"),
    [
        ("n9000000100000001.jpg,n90000001,extra", "expected 2 fields, got 3"),
        ("n9000000100000001.jpg", "expected 2 fields, got 1"),
        (",n90000001", "empty field"),
        ("../../etc/passwd,n90000001", "not a plain file name"),
        ("n9000000100000001.jpg,../x", "not a plain file name"),
    ],
)
def test_malformed_row_names_file_and_line(flat_copy: Path, bad_row: str, message: str) -> None:
    lines = csv_lines(flat_copy, "test")
    lines.insert(3, bad_row)  # line 4 of the file
    (flat_copy / "test.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError, match=message) as info:
        read_miniimagenet(flat_copy)
    assert "test.csv line 4" in str(info.value)
    assert str(flat_copy / "test.csv") in str(info.value)


def test_duplicate_row_is_an_error(flat_copy: Path) -> None:
    lines = csv_lines(flat_copy, "val")
    (flat_copy / "val.csv").write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(SourceError, match=f"line {len(lines) + 1}: .* already listed on line 2"):
        read_miniimagenet(flat_copy)


@pytest.mark.parametrize("layout", ["flat", "per_class"])
def test_csv_naming_a_missing_image(samples: dict[str, Path], tmp_path: Path, layout: str) -> None:
    root = Path(shutil.copytree(samples[layout], tmp_path / "mini"))
    victim = read_miniimagenet(root).splits["train"][5]
    victim.path.unlink()
    with pytest.raises(SourceError, match="does not exist") as info:
        read_miniimagenet(root)
    message = str(info.value)
    assert victim.filename in message and "train.csv line 7" in message
    assert str(root / "train.csv") in message and f"{layout} layout" in message
    # Without the file check the copy still reads (e.g. to inspect a partial download).
    assert len(read_miniimagenet(root, check_files=False).splits["train"]) == 32


def test_class_in_two_splits(flat_copy: Path) -> None:
    train_row = csv_lines(flat_copy, "train")[1]
    lines = csv_lines(flat_copy, "test")
    (flat_copy / "test.csv").write_text("\n".join([*lines, train_row]) + "\n")
    label = train_row.split(",")[1]
    with pytest.raises(SourceError, match=f"class {label} appears in both train.csv and test.csv"):
        read_miniimagenet(flat_copy)


def test_class_count_expectations(samples: dict[str, Path]) -> None:
    with pytest.raises(SourceError, match="train.csv lists 4 classes, expected 64") as info:
        read_miniimagenet(samples["flat"], expect_classes={"train": 64, "val": 16, "test": 20})
    assert str(samples["flat"] / "train.csv") in str(info.value)
    with pytest.raises(SourceError, match="has 8 images, expected 600"):
        read_miniimagenet(samples["flat"], expect_images_per_class=600)


def test_uneven_class_fails_image_count(flat_copy: Path) -> None:
    lines = csv_lines(flat_copy, "val")
    (flat_copy / "val.csv").write_text("\n".join(lines[:-1]) + "\n")  # one class loses an image
    label = lines[-1].split(",")[1]
    with pytest.raises(SourceError, match=f"class {label} in val.csv has 7 images, expected 8"):
        read_miniimagenet(flat_copy, expect_images_per_class=8)


def test_too_few_images_for_episodes(samples: dict[str, Path]) -> None:
    mini = read_miniimagenet(samples["flat"])
    with pytest.raises(SourceError, match="needs at least 9") as info:
        require_images_per_class(mini, "test", 9, why="8-shot episodes")
    assert str(samples["flat"] / "test.csv") in str(info.value)


class _Trap:
    """Unpickling this creates a marker file: proof that a pickle was loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickled_caches_are_ignored_never_opened(
    flat_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "unpickled.marker"
    (flat_copy / "mini-imagenet-cache-train.pkl").write_bytes(pickle.dumps(_Trap(marker)))
    (flat_copy / "cache.pickle").write_bytes(pickle.dumps(_Trap(marker)))
    mini = read_miniimagenet(flat_copy)
    assert not marker.exists()
    assert [p.name for p in mini.ignored_pickles] == [
        "cache.pickle",
        "mini-imagenet-cache-train.pkl",
    ]
    err = capsys.readouterr().err
    assert "ignoring pickled caches" in err and "mini-imagenet-cache-train.pkl" in err


def test_only_pickles_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "mini"
    root.mkdir()
    (root / "mini-imagenet-cache-test.pkl").write_bytes(b"\x80\x04not really")
    with pytest.raises(SourceError, match="only pickled caches were found"):
        read_miniimagenet(root)


def test_missing_root_and_images_folder(tmp_path: Path, flat_copy: Path) -> None:
    with pytest.raises(SourceError, match="MiniImageNet folder not found"):
        read_miniimagenet(tmp_path / "nowhere")
    shutil.rmtree(flat_copy / "images")
    with pytest.raises(SourceError, match="images/ folder not found") as info:
        read_miniimagenet(flat_copy)
    assert str(flat_copy / "images") in str(info.value)


def test_blank_lines_and_crlf_are_tolerated(flat_copy: Path) -> None:
    lines = csv_lines(flat_copy, "val")
    (flat_copy / "val.csv").write_bytes(("\r\n".join(lines) + "\r\n\r\n").encode())
    mini = read_miniimagenet(flat_copy)
    assert isinstance(mini, MiniImageNet) and len(mini.splits["val"]) == len(lines) - 1


def test_sample_jpeg_quality_is_90(samples: dict[str, Path]) -> None:
    image = read_miniimagenet(samples["flat"]).splits["train"][0]
    data = image.path.read_bytes()
    with Image.open(io.BytesIO(data)) as decoded:
        # libjpeg's standard luminance table scaled for quality 90 starts with 3.
        assert decoded.quantization[0][0] == 3
