"""The public collections of real messages the crisis screen is measured on, where a developer
gets each one, and the readers that turn a local copy into rows (docs/safety-realdata.md).

No text of these collections is in the repository: ``fetch`` copies the files, by a user's
action, from pinned commits of public GitHub repositories into a git-ignored folder
(``runs/realdata/raw/`` by default, ``MASCOT_REALDATA`` or ``--root`` to move it), keeping only
the columns the readers need (no user names, profiles or links). The "Suicide and Depression
Detection" collection (r/SuicideWatch against r/teenagers) and copies of it are never used here:
it is kept apart for an independent check.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import subprocess
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DIR = ROOT / "runs" / "realdata"

csv.field_size_limit(1 << 27)


def data_dir(root: str | Path | None = None) -> Path:
    """The local folder of the real data: ``root``, else ``MASCOT_REALDATA``, else runs/realdata."""
    if root:
        return Path(root)
    env = os.environ.get("MASCOT_REALDATA")
    return Path(env) if env else DEFAULT_DIR


@dataclass(frozen=True)
class Row:
    """One message: ``id`` is stable across runs (source, place in the file); ``group`` is the
    unit the source's label was given to (a Reddit user for the C-SSRS set), else the id."""

    id: str
    source: str
    text: str
    source_label: str
    group: str = ""


@dataclass(frozen=True)
class Origin:
    """A file of a public repository at a pinned commit."""

    repo: str  # owner/name on GitHub
    commit: str
    path: str


@dataclass(frozen=True)
class Source:
    name: str
    title: str
    licence: str
    fitting: str  # whether the licence lets the screen be fitted on it
    origins: tuple[Origin, ...]
    # the raw file(s) of the copy -> the local files (name -> text), only the needed columns
    extract: Callable[[list[bytes]], dict[str, str]]
    read: Callable[[Path], Iterator[Row]]
    # the source's own labels mapped to the app's levels: a rough map (docs/safety-realdata.md);
    # None: the label says too little to score against
    level_map: dict[str, str | None]
    kind: str  # "risk" (labelled for suicide risk) or "everyday" (no risk expected)


class DataMissing(Exception):
    """A source's local copy is absent; the message says how to get it."""


# ---------------------------------------------------------------------------------------------
# Gaur et al. 2019, "Knowledge-aware assessment of severity of suicide risk" (WWW '19): 500
# Reddit users, each labelled by practising psychiatrists on the C-SSRS (Supportive, Indicator,
# Ideation, Behavior, Attempt); Zenodo 10.5281/zenodo.2667859.

_CSSRS = "cssrs_reddit"
_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", re.S)


def split_posts(cell: str) -> list[str]:
    """A user's posts from the file's Python-list cell. 28 cells stop at 32,759 characters (a
    spreadsheet's cell limit), inside a string: the complete posts are kept, the cut one dropped."""
    try:
        value = ast.literal_eval(cell)
        if isinstance(value, list):
            return [str(p) for p in value]
    except (ValueError, SyntaxError):
        pass
    posts = []
    for m in _STRING.finditer(cell):
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        try:
            posts.append(ast.literal_eval(m.group(0)))
        except (ValueError, SyntaxError):
            posts.append(raw)
    return posts


def _extract_cssrs(raw: list[bytes]) -> dict[str, str]:
    reader = csv.DictReader(io.StringIO(raw[0].decode("utf-8")))
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["user", "post_index", "label", "text"])
    for r in reader:
        for i, post in enumerate(split_posts(r["Post"])):
            if post.strip():
                w.writerow([r["User"], i, r["Label"].strip(), post])
    return {"posts.csv": out.getvalue()}


def _read_cssrs(folder: Path) -> Iterator[Row]:
    with open(folder / "posts.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            user = r["user"]
            yield Row(f"{_CSSRS}:{user}:{r['post_index']}", _CSSRS, r["text"], r["label"], user)


# ---------------------------------------------------------------------------------------------
# "Suicidal Tweet Detection Dataset" (Kaggle, 1,787 tweets, "Potential Suicide post" / "Not
# Suicide post"), as copied in mrinmoyxb/Suicidal-Tweet-Detection-NLP-Model.

_TWEETS = "si_tweets"
_TWEETS_MEMBER = "Suicide_Ideation_Dataset(Twitter-based).csv"


def fix_mojibake(text: str) -> str:
    """UTF-8 read as Latin-1 in the copy ("iâ\x80\x99m" -> "i’m"); other text unchanged."""
    if not re.search("[\u00c2-\u00f4][\u0080-\u00bf]", text):
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def _extract_tweets(raw: list[bytes]) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(raw[0])) as z:
        data = z.read(_TWEETS_MEMBER).decode("utf-8", errors="replace")
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["row", "label", "text"])
    for i, r in enumerate(csv.DictReader(io.StringIO(data))):
        text = fix_mojibake((r.get("Tweet") or "").strip())
        if text:
            w.writerow([i, (r.get("Suicide") or "").strip(), text])
    return {"tweets.csv": out.getvalue()}


def _read_tweets(folder: Path) -> Iterator[Row]:
    with open(folder / "tweets.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            yield Row(f"{_TWEETS}:{r['row']}", _TWEETS, r["text"], r["label"])


# ---------------------------------------------------------------------------------------------
# Tweets that contain "suicidal" (2021), hand-labelled 0 / 1 / 2 for suicidal tendency by the
# authors of Fei-X/twitter_suicidal_tendency (2 suicidal, 1 unclear, 0 not); five files.

_KEYWORD = "suicidal_kw_tweets"


def _extract_keyword(raw: list[bytes]) -> dict[str, str]:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["file", "row", "label", "text"])
    for k, blob in enumerate(raw):
        for i, r in enumerate(csv.DictReader(io.StringIO(blob.decode("utf-8", errors="replace")))):
            text = (r.get("tweet") or "").strip()
            if text:
                w.writerow([k, i, (r.get("label") or "").strip(), text])
    return {"tweets.csv": out.getvalue()}


def _read_keyword(folder: Path) -> Iterator[Row]:
    with open(folder / "tweets.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            yield Row(f"{_KEYWORD}:{r['file']}:{r['row']}", _KEYWORD, r["text"], r["label"])


# ---------------------------------------------------------------------------------------------
# EmpatheticDialogues (Rashkin et al. 2019): crowd workers telling a partner about a situation
# that made them feel one of 32 emotions. Its validation and test conversations as they appear in
# the model outputs of YangXiaorou/EmpatheticDialoguesHomework (each line's context ends with the
# speaker's own turn), the emotion of each conversation from nitin342/empathyclassifier.

_EMPATHETIC = "empathetic"
_SOC = " <SOC> "


def detokenise(text: str) -> str:
    """Undo the dataset's tokenising: "didn ' t" -> "didn't", "me !" -> "me!"."""
    text = re.sub(r" ' (?=(s|t|m|re|ve|ll|d)\b)", "'", text)
    text = re.sub(r"\s+([.,!?;:])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _extract_empathetic(raw: list[bytes]) -> dict[str, str]:
    emotions = {}
    for blob in raw[2:]:
        for r in csv.DictReader(io.StringIO(blob.decode("utf-8"))):
            emotions[r["conv_id"]] = r["context"]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["split", "conv", "turn", "label", "text"])
    seen = set()
    for split, blob in zip(("valid", "test"), raw[:2]):
        for line in blob.decode("utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) < 3 or not cols[1].isdigit():
                continue
            conv, turn = cols[0], int(cols[1]) - 1  # the speaker's turn before this response
            key = (split, conv, turn)
            if key in seen:
                continue
            seen.add(key)
            number = conv.rsplit("conv:", 1)[-1]
            text = detokenise(cols[2].split(_SOC.strip())[-1])
            if text:
                w.writerow([split, conv, turn, emotions.get(number, ""), text])
    return {"speaker_turns.csv": out.getvalue()}


def _read_empathetic(folder: Path) -> Iterator[Row]:
    with open(folder / "speaker_turns.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            conv = f"{r['split']}:{r['conv']}"
            yield Row(f"{_EMPATHETIC}:{conv}:{r['turn']}", _EMPATHETIC, r["text"], r["label"], conv)


# ---------------------------------------------------------------------------------------------
# GoEmotions (Demszky et al. 2020): 58k Reddit comments labelled with 27 emotions or neutral;
# the rater-agreement split (train, dev, test) as in monologg/GoEmotions-pytorch.

_GOEMOTIONS = "goemotions"


def _extract_goemotions(raw: list[bytes]) -> dict[str, str]:
    names = raw[3].decode("utf-8").split()
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["split", "comment", "label", "text"])
    for split, blob in zip(("train", "dev", "test"), raw[:3]):
        for line in blob.decode("utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) != 3 or not cols[0].strip():
                continue
            labels = "+".join(names[int(i)] for i in cols[1].split(",") if i.isdigit())
            w.writerow([split, cols[2], labels, cols[0].strip()])
    return {"comments.csv": out.getvalue()}


def _read_goemotions(folder: Path) -> Iterator[Row]:
    with open(folder / "comments.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            yield Row(
                f"{_GOEMOTIONS}:{r['split']}:{r['comment']}", _GOEMOTIONS, r["text"], r["label"]
            )


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            _CSSRS,
            "Reddit C-SSRS suicide dataset (Gaur et al. 2019), 500 users' posts",
            "CC BY 4.0 (Zenodo 10.5281/zenodo.2667859)",
            "allowed (CC BY 4.0: credit the authors)",
            (
                Origin(
                    "yw041202/DSAA2012_Project",
                    "1c7a104c504ee32051387033d3699d7b15fe87dc",
                    "500_Reddit_users_posts_labels.csv",
                ),
            ),
            _extract_cssrs,
            _read_cssrs,
            {
                "Supportive": "none",
                "Indicator": "concern",
                "Ideation": "concern",
                "Behavior": "urgent",
                "Attempt": "urgent",
            },
            "risk",
        ),
        Source(
            _TWEETS,
            "Suicidal Tweet Detection Dataset (Kaggle)",
            "none stated (Kaggle page and the GitHub copy name no licence; tweets are Twitter/X content)",
            "not allowed (no licence: evaluation only)",
            (
                Origin(
                    "mrinmoyxb/Suicidal-Tweet-Detection-NLP-Model",
                    "57529d75a42b56bf49bc1aa8307c1a6f3d12c570",
                    "suicide tweets.zip",
                ),
            ),
            _extract_tweets,
            _read_tweets,
            {"Potential Suicide post": "concern", "Not Suicide post": "none"},
            "risk",
        ),
        Source(
            _KEYWORD,
            'Tweets containing "suicidal", hand-labelled 0/1/2 (Fei-X/twitter_suicidal_tendency)',
            "none stated (no LICENSE in the repository; tweets are Twitter/X content)",
            "not allowed (no licence: evaluation only)",
            tuple(
                Origin(
                    "Fei-X/twitter_suicidal_tendency",
                    "0d2c1fedf1074dd70c00146bdac59d7d7a4fb823",
                    f"data/data_{k}.csv",
                )
                for k in range(5)
            ),
            _extract_keyword,
            _read_keyword,
            {"2": "concern", "1": None, "0": "none"},
            "risk",
        ),
        Source(
            _EMPATHETIC,
            "EmpatheticDialogues (Rashkin et al. 2019), speakers' turns of valid + test",
            "CC BY-NC 4.0 (facebookresearch/EmpatheticDialogues)",
            "non-commercial use only (CC BY-NC 4.0): fitting allowed for a non-commercial build",
            (
                Origin(
                    "YangXiaorou/EmpatheticDialoguesHomework",
                    "833aa8263db0620100cd27e93c54aec3be3650f8",
                    "retrieved_split_normal_transformer_valid.txt",
                ),
                Origin(
                    "YangXiaorou/EmpatheticDialoguesHomework",
                    "833aa8263db0620100cd27e93c54aec3be3650f8",
                    "retrieved_split_normal_transformer_test.txt",
                ),
                Origin(
                    "nitin342/empathyclassifier",
                    "368a7a20f476d0113727b43bf4e1b3e108b3475b",
                    "empatheticdialogues/cleaned_valid.csv",
                ),
                Origin(
                    "nitin342/empathyclassifier",
                    "368a7a20f476d0113727b43bf4e1b3e108b3475b",
                    "empatheticdialogues/cleaned_test.csv",
                ),
            ),
            _extract_empathetic,
            _read_empathetic,
            {},  # every label (an emotion) -> none
            "everyday",
        ),
        Source(
            _GOEMOTIONS,
            "GoEmotions (Demszky et al. 2020), Reddit comments, rater-agreement split",
            "Apache 2.0 (the annotations; google-research/google-research); comments are Reddit content",
            "allowed for the annotations (Apache 2.0); the comments' text is Reddit users'",
            tuple(
                Origin(
                    "monologg/GoEmotions-pytorch",
                    "b75f9d3a8b76bc1060687925b04ca98a1b8ea66b",
                    f"data/original/{name}",
                )
                for name in ("train.tsv", "dev.tsv", "test.tsv", "labels.txt")
            ),
            _extract_goemotions,
            _read_goemotions,
            {},
            "everyday",
        ),
    )
}


def mapped_level(source: Source, label: str) -> str | None:
    """The rough level of a source label (``level_map``); an everyday source's rows are none."""
    if source.kind == "everyday":
        return "none"
    return source.level_map.get(label)


# ---------------------------------------------------------------------------------------------
# Getting and reading the local copies


def _git_show(git_dir: Path, origin: Origin) -> bytes:
    r = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{origin.commit}:{origin.path}"],
        capture_output=True,
        check=False,
    )
    if r.returncode != 0:
        raise DataMissing(
            f"{origin.repo} has no {origin.path} at {origin.commit[:10]}: {r.stderr.decode().strip()}"
        )
    return r.stdout


def _clone(repo: str, into: Path) -> Path:
    url = f"https://github.com/{repo}.git"
    r = subprocess.run(
        ["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, str(into)],
        capture_output=True,
        check=False,
    )
    if r.returncode != 0:
        raise DataMissing(f"could not clone {url}: {r.stderr.decode().strip()}")
    return into


def fetch(name: str, root: Path, mirror: Path | None = None) -> Path:
    """Copy one source into ``root/raw/<name>/``: from bare clones under ``mirror`` (folders
    named ``owner+name/repo``) when given, else by cloning the public repositories (network)."""
    source = SOURCES[name]
    blobs = []
    with tempfile.TemporaryDirectory() as tmp:
        dirs: dict[str, Path] = {}
        for origin in source.origins:
            if origin.repo not in dirs:
                if mirror is not None:
                    dirs[origin.repo] = mirror / origin.repo.replace("/", "+") / "repo"
                else:
                    dirs[origin.repo] = _clone(
                        origin.repo, Path(tmp) / origin.repo.replace("/", "+")
                    )
            blobs.append(_git_show(dirs[origin.repo], origin))
    files = source.extract(blobs)
    folder = root / "raw" / name
    folder.mkdir(parents=True, exist_ok=True)
    for fname, text in files.items():
        (folder / fname).write_text(text, encoding="utf-8")
    meta = {
        "source": name,
        "licence": source.licence,
        "origins": [o.__dict__ for o in source.origins],
    }
    (folder / "ORIGIN.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder


HOW_TO_GET = (
    "the real-data copies are not here ({folder}); get them once with "
    "`python -m scripts.safety.real fetch` (clones public GitHub repositories; see "
    "docs/safety-realdata.md)"
)


def available(root: Path) -> list[str]:
    """The sources whose local copy is present under ``root``."""
    return [n for n in SOURCES if (root / "raw" / n / "ORIGIN.json").exists()]


def load(name: str, root: Path) -> list[Row]:
    """Every row of one source's local copy; ``DataMissing`` (how to get it) when it is absent."""
    folder = root / "raw" / name
    if not (folder / "ORIGIN.json").exists():
        raise DataMissing(HOW_TO_GET.format(folder=folder))
    return list(SOURCES[name].read(folder))
