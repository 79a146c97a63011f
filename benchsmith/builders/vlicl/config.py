"""VL-ICL build settings: task sizes per profile, shot lists, seeds, samplers and the word list.

``full`` sizes are the paper's (Table 1); ``sample`` sizes fit the miniature sources written by
the sources' sample writers, so the default profile builds offline in seconds. Operator tasks
are rendered, so they have their full size in both profiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl.shots import DEFAULT_SHOTS, Shots
from benchsmith.builders.vlicl.text_variants import TEXT_VARIANTS
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import executor_setting, workers_setting
from benchsmith.core.settings import (
    check_settings,
    nulls_as_defaults,
    paths_as_paths,
    setting,
    settings_from,
)

IMAGE_TASKS = (
    "open_mi",
    "matching_mi",
    "clevr",
    "operator_induction",
    "operator_induction_interleaved",
)
# from the official release only (vlicl.sources.ingest_dir, in either mode): their sources
# (CoBSAT's images, the fast tasks' frozen episodes) are not among benchsmith's sources
RELEASE_TASKS = ("cobsat", "fast_count_t2i", "fast_attr_t2i")
# text to image: the answer is a generated image
GENERATION_TASKS = ("open_t2i_mi", "cobsat", "fast_count_t2i", "fast_attr_t2i")
# variants: made from image tasks' rows
TASKS = (*IMAGE_TASKS, "open_t2i_mi", "textocr", *TEXT_VARIANTS, *RELEASE_TASKS)
REBUILT_TASKS = tuple(t for t in TASKS if t not in RELEASE_TASKS)  # what rebuild mode can make
OPERATOR_TASKS = ("operator_induction", "operator_induction_interleaved")
MODES = ("rebuild", "ingest")
SAMPLERS = ("hashed", "legacy")
PROFILES = ("sample", "full")

DEFAULT_EPISODE_SEEDS = (0, 1, 2)

# Pronounceable nonsense words for fast binding. The first five are the examples named in the
# paper and in Frozen; the rest are ours, checked to be no English word.
NONSENSE_WORDS = (
    "dax",
    "blicket",
    "slation",
    "shously",
    "perpo",
    "wug",
    "fep",
    "zorb",
    "gazzer",
    "tulver",
    "mipsy",
    "florp",
    "glimble",
    "trazzle",
    "plonth",
    "mubble",
    "keswin",
    "drabbet",
    "fendle",
    "yorbit",
    "zindle",
    "vorpin",
    "pralby",
    "lunket",
)


def _size(group: str, key: str, full: int, sample: int | None, help: str) -> Any:
    """A size, ``vlicl.sizes.<profile>.<group>.<key>``: ``full`` is the paper's, ``sample``
    (None: the same) fits the miniature sources (write_sample_miniimagenet's train 4 / test 6
    classes x 8 images, write_sample_clevr's 24 train / 12 val scenes, write_sample_textocr's
    12 train / 6 val images, one of each without a usable word)."""
    return setting(full, help, minimum=1, flag=False, metavar="N", under=f"{{profile}}.{group}",
                   key=key, profile_defaults=None if sample is None else {"sample": sample})  # fmt: skip


@dataclass(frozen=True)
class Sizes:
    """How many items each task has, per profile (``vlicl.sizes.<profile>.<task>``): full is
    the paper's Table 1; operator tasks are rendered, so they have their full size in both."""

    open_mi_episodes: int = _size("open_mi", "episodes", 200, 8,
                                  "episodes, one query each (ways x shots support images)")  # fmt: skip
    open_mi_ways: int = _size("open_mi", "ways", 5, None, "classes per episode (2 are shown)")
    open_mi_shots: int = _size("open_mi", "shots", 5, None, "support images per class")
    open_t2i_mi_episodes: int = _size("open_t2i_mi", "episodes", 200, 8,
                                      "episodes, one text query each (ways and shots: open_mi's)")  # fmt: skip
    matching_support_pairs: int = _size("matching_mi", "support", 1600, 16,
                                        "support pairs (even: same + different groups)")  # fmt: skip
    matching_query_pairs: int = _size("matching_mi", "query", 400, 8, "query pairs (even)")
    clevr_support: int = _size("clevr", "support", 800, 24, "support scenes (CLEVR train)")
    clevr_query: int = _size("clevr", "query", 200, 12, "query scenes (CLEVR val)")
    operator_support: int = _size("operators", "support", 80, None, "support expressions")
    operator_query_per_operator: int = _size("operators", "query_per_operator", 20, None,
                                             "queries per operator (x 3 operators)")  # fmt: skip
    textocr_support: int = _size("textocr", "support", 800, 10,
                                 "support images (TextOCR train), one boxed word each")  # fmt: skip
    textocr_query: int = _size("textocr", "query", 200, 4, "query images (TextOCR val)")

    def __post_init__(self) -> None:
        check_settings(self, "vlicl.sizes")

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def of_profile(cls, profile: str, sizes: dict[str, Any] | None = None) -> Sizes:
        """The sizes ``vlicl.sizes`` (``sizes``) sets for ``profile``, else the declared ones."""
        return settings_from(cls, sizes, profile=profile)


def _fail(message: str, key: str) -> BenchsmithError:
    return BenchsmithError(message, path="params.yaml", fix=f"fix vlicl.{key} in params.yaml")


@dataclass(frozen=True)
class VliclPlanSettings:
    """What the plan builds (the top of ``vlicl:``): the mode, the tasks, the seeds and the
    samplers. Each is declared once, here: the params schema, the ``build vlicl plan`` flags
    and the params reference are read from it (the per-task sizes, shots and words are read
    by :meth:`VliclConfig.from_params`)."""

    mode: str = setting(
        "rebuild", "rebuild: our construction from the raw sources; ingest: read the official "
        "VL-ICL release (faithful, versioned separately)", choices=MODES,
    )  # fmt: skip
    tasks: tuple[str, ...] = setting(
        TASKS,
        "tasks to build (cobsat, fast_count_t2i, fast_attr_t2i are read from the release, "
        "vlicl.sources.ingest_dir, in both modes)",
        choices=TASKS,
        metavar="TASK",
    )
    seed: int | None = setting(None, "build seed (null: the top-level seed)", minimum=0,
                               metavar="S")  # fmt: skip
    episode_seeds: tuple[int, ...] = setting(
        DEFAULT_EPISODE_SEEDS, "few-shot episodes are materialised for each seed", minimum=0,
        metavar="S",
    )  # fmt: skip
    samplers: tuple[str, ...] = setting(
        SAMPLERS, "hashed: order-independent; legacy: replays the original random stream",
        choices=SAMPLERS, metavar="SAMPLER",
    )  # fmt: skip
    words: tuple[str, ...] = setting(
        NONSENSE_WORDS, "nonsense words bound to classes in open_mi and open_t2i_mi (distinct "
        "single words, at least as many as open_mi's ways)", flag=False, metavar="WORD",
    )  # fmt: skip

    def __post_init__(self) -> None:
        for name in ("tasks", "episode_seeds", "samplers", "words"):
            if not getattr(self, name):
                raise _fail(f"vlicl.{name} is empty", name)
        check_settings(self, "vlicl")


_TOP = VliclPlanSettings()  # the declared defaults


@dataclass(frozen=True)
class VliclConfig:
    """Everything that decides the build directory."""

    profile: str = "sample"
    mode: str = _TOP.mode
    seed: int = 0
    tasks: tuple[str, ...] = _TOP.tasks
    sizes: Sizes = field(default_factory=lambda: Sizes.of_profile("sample"))
    words: tuple[str, ...] = NONSENSE_WORDS
    shots: dict[str, tuple[int, ...]] = field(default_factory=lambda: dict(DEFAULT_SHOTS))
    episode_seeds: tuple[int, ...] = _TOP.episode_seeds
    samplers: tuple[str, ...] = _TOP.samplers

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise _fail(f"unknown profile {self.profile!r}", "profile")
        if self.mode not in MODES:
            raise _fail(f"unknown mode {self.mode!r}; use one of {MODES}", "mode")
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown or not self.tasks or len(set(self.tasks)) != len(self.tasks):
            raise _fail(
                f"tasks must be distinct names from {TASKS}, got {list(self.tasks)}", "tasks"
            )
        if self.mode == "ingest" and any(t in TEXT_VARIANTS for t in self.tasks):
            raise _fail(
                "text variants are made from the rebuilt image tasks' scenes and expressions; "
                "ingest mode reads the release's image tasks only (the release's own *_text "
                f"files are not read): remove {[t for t in self.tasks if t in TEXT_VARIANTS]}",
                "tasks",
            )
        orphans = [
            t for t in self.tasks if t in TEXT_VARIANTS and TEXT_VARIANTS[t][0] not in self.tasks
        ]
        if orphans:
            needed = sorted({TEXT_VARIANTS[t][0] for t in orphans})
            raise _fail(
                f"text variants {orphans} are made from the rows of {needed}, which are not in "
                "tasks: add them (vlicl.tasks, or --tasks for one run)",
                "tasks",
            )
        bad_samplers = [s for s in self.samplers if s not in SAMPLERS]
        if bad_samplers:
            raise _fail(f"unknown samplers {bad_samplers}; use {SAMPLERS}", "samplers")
        self._check_sizes()
        self._check_words()
        self._check_shots()

    def _check_sizes(self) -> None:
        s = self.sizes
        for name, value in s.to_dict().items():
            if int(value) < 1:
                raise _fail(f"sizes.{name} must be >= 1, got {value}", "sizes")
        for name in ("matching_support_pairs", "matching_query_pairs"):
            if getattr(s, name) % 2:
                raise _fail(
                    f"sizes.{name} must be even (pairs come as same + different groups), "
                    f"got {getattr(s, name)}",
                    "sizes",
                )
        if s.open_mi_ways < 2:
            raise _fail("open_mi ways must be >= 2 (2-way episodes are drawn from them)", "sizes")

    def _check_words(self) -> None:
        words = [w.strip() for w in self.words]
        if len(set(words)) != len(words) or any(not w or " " in w for w in words):
            raise _fail("words must be distinct single words", "words")
        if len(words) < self.sizes.open_mi_ways:
            raise _fail(
                f"{len(words)} nonsense words cannot name {self.sizes.open_mi_ways} classes "
                "per episode without repeats",
                "words",
            )

    def _check_shots(self) -> None:
        for task in self.tasks:
            shots = self.shots.get(task)
            if shots is None or any(int(n) < 0 for n in shots):
                raise _fail(f"shots for {task} must be a list of counts >= 0", f"shots.{task}")
        for task in ("open_mi", "open_t2i_mi"):
            if task in self.tasks and max(self.shots[task], default=0) > self.sizes.open_mi_shots:
                raise _fail(
                    f"{task} shots go up to {max(self.shots[task])} but an episode stores "
                    f"{self.sizes.open_mi_shots} images per class",
                    f"shots.{task}",
                )

    def task_shots(self, task: str) -> tuple[int, ...]:
        return tuple(int(n) for n in self.shots[task])

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "mode": self.mode,
            "seed": self.seed,
            "tasks": list(self.tasks),
            "sizes": self.sizes.to_dict(),
            "words": list(self.words),
            "shots": {task: list(self.task_shots(task)) for task in self.tasks},
            "episode_seeds": list(self.episode_seeds),
            "samplers": list(self.samplers),
        }

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> VliclConfig:
        """The config :meth:`to_dict` recorded (build_info ``params``)."""
        return cls(
            profile=values["profile"],
            mode=values["mode"],
            seed=int(values["seed"]),
            tasks=tuple(values["tasks"]),
            sizes=Sizes(**values["sizes"]),
            words=tuple(values["words"]),
            shots={task: tuple(shots) for task, shots in values["shots"].items()},
            episode_seeds=tuple(values["episode_seeds"]),
            samplers=tuple(values["samplers"]),
        )

    @classmethod
    def from_params(
        cls, params_section: dict[str, Any], profile: str = "sample", **overrides: Any
    ) -> VliclConfig:
        """Build from the ``vlicl:`` section of params.yaml, then non-None ``overrides`` on top.

        Recognised keys: ``mode``, ``seed``, ``tasks``, ``words``, ``shots: {task: [..]}``,
        ``episode_seeds``, ``samplers`` and ``sizes: {sample|full: {open_mi: {episodes, ways,
        shots}, matching_mi: {support, query}, clevr: {support, query}, operators: {support,
        query_per_operator}, textocr: {support, query}}}``; absent keys keep the profile defaults above.
        """
        if profile not in PROFILES:
            raise _fail(f"unknown profile {profile!r}", "profile")
        section = params_section or {}
        sizes = Sizes.of_profile(profile, section.get("sizes"))
        for task in section.get("shots") or {}:
            if task not in TASKS:
                raise _fail(f"shots given for unknown task {task!r}", "shots")
        given = settings_from(Shots, section.get("shots"))
        shots = {task: tuple(int(v) for v in getattr(given, task)) for task in DEFAULT_SHOTS}
        top = settings_from(VliclPlanSettings, section, overrides)
        tasks = top.tasks
        if top.mode == "ingest" and section.get("tasks") is None and not overrides.get("tasks"):
            tasks = IMAGE_TASKS  # the default list, less the text variants (rebuilt only)
        return cls(
            profile=profile,
            mode=top.mode,
            seed=int(top.seed or 0),
            tasks=tasks,
            sizes=sizes,
            words=top.words,
            shots=shots,
            episode_seeds=tuple(int(s) for s in top.episode_seeds),
            samplers=top.samplers,
        )


@dataclass(frozen=True)
class VliclSourceFolders:
    """Where the plan reads (``vlicl.sources``; ``data/sources/*`` is written by the source
    stages); a flag names another folder for one run."""

    miniimagenet: Path | None = setting(
        Path("data/sources/miniimagenet"), "MiniImageNet root (Ravi layout, or the Hugging Face "
        "parquet copy)", metavar="DIR",
    )  # fmt: skip
    clevr: Path | None = setting(Path("data/sources/clevr/CLEVR_v1.0"), "the CLEVR_v1.0 folder",
                                 metavar="DIR")  # fmt: skip
    textocr: Path | None = setting(
        Path("data/sources/textocr/TextOCR"), "the TextOCR folder "
        "(TextOCR_0.1_{train,val}.json and train_images/)", metavar="DIR",
    )  # fmt: skip
    font: Path | None = setting(
        None, "TTF for the operator images (null: Pillow's embedded font; sha256 recorded)",
        metavar="TTF",
    )  # fmt: skip
    ingest_dir: Path | None = setting(
        Path("data/sources/vlicl_release/VL-ICL"), "the VL-ICL release root (<task>/query.json ...): the tasks only it has "
        "(cobsat, fast_count_t2i, fast_attr_t2i), or every task in mode: ingest", metavar="DIR",
    )  # fmt: skip

    def __post_init__(self) -> None:
        nulls_as_defaults(self)
        paths_as_paths(self)
        check_settings(self, "vlicl.sources")


DEFAULT_IMAGE_THRESHOLD = 4


@dataclass(frozen=True)
class LeakageConfig:
    """How support and query images are compared (``vlicl.leakage``): pairs this close are
    leaks, and a query that leaks is removed at publish."""

    image_threshold: int = setting(
        DEFAULT_IMAGE_THRESHOLD,
        "pHash Hamming distance (of 64 bits) at which two images are near duplicates",
        minimum=0,
        maximum=64,
        metavar="BITS",
        aliases=("--threshold",),
    )
    workers: int = workers_setting(2, "hashing processes")
    executor: str = executor_setting("images are hashed")

    def __post_init__(self) -> None:
        check_settings(self, "vlicl.leakage")
