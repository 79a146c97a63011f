"""A miniature MULTI release in the real layout: eight problems that cover every case.

``czsx_0`` a text SA with LaTeX; ``shjk_0`` a driving true/false SA whose ``knowledge`` is a
bare string; ``gzsw_0`` an MA (answer ACE) with one image and an Extend entry with its own
image; ``gzwl_0`` a shared stem with a two-blank FB (``1\\n2或二``) and an OP; ``shxc_0`` an MI
question whose options are images; ``czdl_0`` an Other (drawing) question; ``czyw_0`` an FB
whose blanks are separated by ``；``; ``dxgs_0`` a university MC with 13 options. Images are
drawn from known geometry (a triangle ABC with the midpoint M of BC; a rendered table; shapes);
the hard list names four questions; caption and OCR CSVs are written unquoted, as the release's
scripts write them. Both problem files are written: with answers, and ``_release`` without.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from benchsmith.core.atomic import atomic_directory
from benchsmith.sources.exams.fonts import cjk_font

PROBLEM_FILE = "problem_v1.3.1_20241210.json"
RELEASE_FILE = "problem_v1.3.1_20241210_release.json"
KNOWLEDGE_FILE = "knowledge_v1.2.2_20240212_release.json"
HARD_FILE = "hard_list_v1.3.0_20241203.json"
CSV_FILES = {
    "captions_v1.3.1_20241210_blip.csv": "caption",
    "ocr_v1.3.1_20241210_easyocr.csv": "ocr",
}


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def triangle_figure() -> Image.Image:
    """Triangle ABC with M the midpoint of BC, labelled (the geometry the questions use)."""
    image = Image.new("RGB", (220, 170), "white")
    draw = ImageDraw.Draw(image)
    a, b, c = (110, 20), (20, 150), (200, 150)
    m = ((b[0] + c[0]) // 2, (b[1] + c[1]) // 2)
    draw.polygon([a, b, c], outline="black", width=2)
    draw.line([a, m], fill="black", width=1)
    font = cjk_font().load(16)
    for label, (x, y), dx, dy in (("A", a, -5, -18), ("B", b, -16, -6), ("C", c, 6, -6),
                                  ("M", m, -5, 2)):  # fmt: skip
        draw.text((x + dx, y + dy), label, fill="black", font=font)
    return image


def table_figure() -> Image.Image:
    """A small table with a merged cell: the kind of table Markdown cannot hold."""
    rows = [["时间", "温度", "湿度"], ["早上", "12°C", "80%"], ["中午", "25°C", "40%"]]
    image = Image.new("RGB", (240, 100), "white")
    draw = ImageDraw.Draw(image)
    font = cjk_font().load(16)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            box = (10 + 75 * c, 8 + 28 * r, 10 + 75 * (c + 1), 8 + 28 * (r + 1))
            draw.rectangle(box, outline="black")
            draw.text((box[0] + 8, box[1] + 5), text, fill="black", font=font)
    return image


def shape_figure(kind: str) -> Image.Image:
    image = Image.new("RGB", (80, 80), "white")
    draw = ImageDraw.Draw(image)
    if kind == "circle":
        draw.ellipse((12, 12, 68, 68), outline="black", width=3)
    elif kind == "square":
        draw.rectangle((14, 14, 66, 66), outline="black", width=3)
    elif kind == "star":
        draw.polygon([(40, 8), (50, 32), (74, 32), (54, 48), (62, 72), (40, 58), (18, 72),
                      (26, 48), (6, 32), (30, 32)], outline="black", width=3)  # fmt: skip
    else:
        draw.rectangle((14, 24, 66, 56), outline="black", width=3)
    return image


def cell_figure() -> Image.Image:
    image = Image.new("RGB", (160, 120), "white")
    draw = ImageDraw.Draw(image)
    draw.ellipse((10, 10, 150, 110), outline="green", width=3)
    draw.ellipse((60, 40, 100, 80), outline="purple", width=3)
    return image


THIRTEEN = ["垂直", "平行", "相等", "重合", "相交但不垂直", "AM = 2BC", "BC = 2AM", "无法确定",
            "互为倒数", "夹角为 60°", "夹角为 45°", "AM 平分 BC 但不垂直", "以上都不对"]  # fmt: skip


def lettered(options: list[str]) -> str:
    return "\n".join(f"{chr(65 + k)}. {o}" for k, o in enumerate(options))


def _image_path(code: str, n: int, k: int) -> str:
    return f"../data/images/{code}/{n}_{k}.png"


def sample_problems() -> tuple[dict[str, Any], dict[str, bytes], dict[str, Any]]:
    """(problems, image bytes by release path, knowledge)."""
    images: dict[str, bytes] = {}

    def add(code: str, n: int, k: int, picture: Image.Image) -> str:
        path = _image_path(code, n, k)
        images[path] = _png(picture)
        return path

    def problem(content, questions, types, answers, education, subject, paths=(),
                knowledge=(), analysis=None, difficulty=2, quality=3):  # fmt: skip
        return {
            "problem_content": content,
            "problem_content_list": list(questions),
            "problem_type_list": list(types),
            "problem_answer_list": list(answers),
            "problem_analysis_list": list(analysis or ["" for _ in questions]),
            "knowledge": knowledge if isinstance(knowledge, str) else list(knowledge),
            "education": education,
            "subject": [subject],
            "img_paths": list(paths),
            "difficulty": difficulty,
            "quality": quality,
        }

    problems = {
        "czsx_0": problem(
            "",
            ["已知 $x^2=4$，且 $x>0$，则 $x$ 等于（ ）[MASK]\nA. $1$\nB. $2$\nC. $3$\nD. $4$"],
            ["单选"],
            ["B"],
            "初中",
            "数学",
            knowledge=["平方根"],
            analysis=["因为 $x>0$ 且 $2^2=4$，所以 $x=2$。"],
        ),  # fmt: skip
        "shjk_0": problem(
            "",
            ["驾驶机动车在高速公路上行驶时，可以随意变更车道。[MASK]\nA. 正确\nB. 错误"],
            ["单选"],
            ["B"],
            "驾考",
            "驾考",
            knowledge="安全驾驶",
        ),  # fmt: skip
        "gzsw_0": problem(
            "[IMAGE_1] 上图是某细胞的结构示意图。",
            [
                "下列关于该细胞的说法，正确的是（ ）[MASK]\nA. 有细胞膜\nB. 没有细胞核\n"
                "C. 能进行新陈代谢\nD. 一定是植物细胞\nE. 含有遗传物质"
            ],
            ["多选"],
            ["ACE"],
            "高中",
            "生物",
            [add("gzsw", 0, 1, cell_figure())],
            knowledge=["细胞结构"],
        ),  # fmt: skip
        "gzwl_0": problem(
            "一辆小车从静止开始做匀加速直线运动，2 s 内前进了 2 m。",
            [
                "(1) 小车的加速度为 [MASK] m/s²，第 2 s 末的速度为 [MASK] m/s。",
                "(2) 若小车质量为 1 kg，求它受到的合力，并说明理由。",
            ],
            ["填空", "解答"],
            ["1\n2或二", "合力为 1 N，由牛顿第二定律 F = ma 得 F = 1 × 1 = 1 N。"],
            "高中",
            "物理",
            knowledge=["匀变速直线运动"],
        ),  # fmt: skip
        "shxc_0": problem(
            "",
            [
                "下列图形中，与其他三个不同的是（ ）[MASK]\nA. [IMAGE_1]\nB. [IMAGE_2]\n"
                "C. [IMAGE_3]\nD. [IMAGE_4]"
            ],
            ["单选"],
            ["C"],
            "行测",
            "行测",
            [
                add("shxc", 0, k + 1, shape_figure(s))
                for k, s in enumerate(("circle", "square", "star", "rect"))
            ],
            knowledge=["图形推理"],
        ),  # fmt: skip
        "czdl_0": problem(
            "[IMAGE_1] 下表记录了某地一天的天气。",
            ["请根据表格画出该地一天的气温变化曲线。"],
            ["其他"],
            ["略"],
            "初中",
            "地理",
            [add("czdl", 0, 1, table_figure())],
            knowledge=["气温曲线"],
        ),  # fmt: skip
        "czyw_0": problem(
            "",
            ["“一年之计在于[MASK]”，“[MASK]高气爽”。"],
            ["填空"],
            ["春；秋"],
            "初中",
            "语文",
            knowledge=["名句默写"],
        ),  # fmt: skip
        "dxgs_0": problem(
            "[IMAGE_1] 如图，在三角形 ABC 中，M 是 BC 的中点。",
            ["若 $AB=AC$，则 $AM$ 与 $BC$ 的关系是（ ）[MASK]\n" + lettered(THIRTEEN)],
            ["单选"],
            ["A"],
            "大学",
            "高等数学",
            [add("dxgs", 0, 1, triangle_figure())],
            knowledge=["等腰三角形"],
        ),  # fmt: skip
    }
    knowledge = {
        "细胞结构": {
            "knowledge": "细胞结构",
            "knowledge_content": "细胞一般由细胞膜、细胞质和细胞核构成。[IMAGE_1] 为动物细胞。",
            "knowledge_images": [add("kn", 0, 1, cell_figure())],
        },
        "平方根": {
            "knowledge": "平方根",
            "knowledge_content": "若 $x^2=a$，则 $x$ 叫做 $a$ 的平方根。",
            "knowledge_images": [],
        },  # fmt: skip
        "安全驾驶": {
            "knowledge": "安全驾驶",
            "knowledge_content": "高速公路上不得随意变更车道。",
            "knowledge_images": [],
        },  # fmt: skip
    }
    return problems, images, knowledge


HARD_LIST = ["czsx_0_0", "gzsw_0_0", "shxc_0_0", "gzwl_0_0"]


def write_sample_release(out_dir: str | Path) -> Path:
    """``out_dir`` as the release unzips: both problem files, knowledge, hard list, CSVs,
    ``images/<code>/<n>_<k>.png``; written whole, then swapped in."""
    problems, images, knowledge = sample_problems()
    without = {pid: {k: v for k, v in r.items() if k != "problem_answer_list"}
               for pid, r in problems.items()}  # fmt: skip
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as staging:
        for path, data in images.items():
            target = staging / path.split("../data/", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        dump = lambda value: json.dumps(value, ensure_ascii=False, indent=1)  # noqa: E731
        (staging / PROBLEM_FILE).write_text(dump(problems), encoding="utf-8")
        (staging / RELEASE_FILE).write_text(dump(without), encoding="utf-8")
        (staging / KNOWLEDGE_FILE).write_text(dump(knowledge), encoding="utf-8")
        (staging / HARD_FILE).write_text(dump(HARD_LIST), encoding="utf-8")
        for name, kind in CSV_FILES.items():
            lines = [f"{path},{kind} of {Path(path).stem}, with a comma" for path in images]
            (staging / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out_dir
