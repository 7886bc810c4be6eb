"""The crisis screen on real messages (docs/safety-realdata.md).

    .venv/bin/python -m scripts.safety.real fetch                  # copy the sources (network)
    .venv/bin/python -m scripts.safety.real fetch --mirror DIR     # ... from local bare clones
    .venv/bin/python -m scripts.safety.real batches                # the annotation batches
    .venv/bin/python -m scripts.safety.real measure                # confusion per source, rates
    .venv/bin/python -m scripts.safety.real measure --curve        # + the thresholds' trade-off
    .venv/bin/python -m scripts.safety.real measure --limit 600 --limit cssrs_reddit=1200
    .venv/bin/python -m scripts.safety.real agreement              # the two annotators' labels

Everything reads and writes under ``runs/realdata/`` (``--root`` or ``MASCOT_REALDATA`` to move
it); nothing here runs at test time or goes online unless ``fetch`` is asked to.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import batches as bt
from . import report
from . import sources as src


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m scripts.safety.real", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--root", help="the real data's folder (default runs/realdata or MASCOT_REALDATA)"
    )
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="copy the public sources into ROOT/raw/")
    f.add_argument("--mirror", help="a folder of bare clones named owner+name/repo (no network)")
    f.add_argument("--source", action="append", choices=sorted(src.SOURCES), help="only these")
    b = sub.add_parser("batches", help="write the unlabelled annotation batches")
    b.add_argument("--seed", type=int, default=40)
    m = sub.add_parser("measure", help="screen every message; confusion and rates per source")
    m.add_argument("--source", action="append", choices=sorted(src.SOURCES), help="only these")
    m.add_argument(
        "--limit",
        action="append",
        default=[],
        help="at most N messages per source (N, or SOURCE=N for one source; 0: all): the "
        "annotated ones, then whole users or conversations in a seeded order",
    )
    m.add_argument("--curve", action="store_true", help="also the thresholds' trade-off curve")
    m.add_argument("--rules-only", action="store_true", help="the rules without the learned layer")
    m.add_argument(
        "--cached-only", action="store_true", help="only the messages screened before (fast)"
    )
    m.add_argument("--out", help="also write the report (markdown) to this file")
    sub.add_parser(
        "agreement", help="agreement of the annotators' labels (ROOT/annotation/labels/)"
    )
    return p


def _limits(values: list[str]) -> dict[str, int] | None:
    """``--limit`` values -> source -> limit (``""``: every other source); None when malformed."""
    out: dict[str, int] = {}
    for v in values:
        name, _, n = v.rpartition("=")
        if (name and name not in src.SOURCES) or not n.isdigit():
            return None
        out[name] = int(n)
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    root = src.data_dir(args.root)
    try:
        if args.command == "fetch":
            mirror = Path(args.mirror) if args.mirror else None
            for name in args.source or list(src.SOURCES):
                folder = src.fetch(name, root, mirror)
                print(f"{name}: {len(src.load(name, root))} messages in {folder}")
            return 0
        present = src.available(root)
        if not present:
            print(src.HOW_TO_GET.format(folder=root / "raw"), file=sys.stderr)
            return 2
        if args.command == "batches":
            picked = []
            for name in present:
                rows = bt.sample(name, src.load(name, root), bt.PLANS[name], args.seed)
                print(f"{name}: {len(rows)} messages sampled")
                picked += rows
            out = bt.write(root, picked, args.seed)
            n = len(list(out.glob("batch-*.jsonl")))
            print(f"{len(picked)} messages in {n} batches under {out} (brief: {out / 'BRIEF.md'})")
            return 0
        if args.command == "measure":
            names = [n for n in (args.source or present) if n in present]
            missing = sorted(set(args.source or []) - set(present))
            if missing:
                print(src.HOW_TO_GET.format(folder=root / "raw"), file=sys.stderr)
                return 2
            limits = _limits(args.limit)
            if limits is None:
                print(
                    "--limit takes a number or SOURCE=NUMBER, e.g. --limit 600 "
                    "--limit cssrs_reddit=1200",
                    file=sys.stderr,
                )
                return 2
            text = report.measure(
                root, names, limits, args.curve, not args.rules_only, args.cached_only
            )
            print(text)
            if args.out:
                Path(args.out).write_text(text + "\n", encoding="utf-8")
            return 0
        if args.command == "agreement":
            print(report.agreement(root))
            return 0
    except src.DataMissing as e:
        print(str(e), file=sys.stderr)
        return 2
    except report.LabelsError as e:
        print(str(e), file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
