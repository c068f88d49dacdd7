"""`topobridge crds`: write the CRDs generated from the models, or check they are current."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

DEFAULT_OUTPUT = Path("crds")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "crds",
        help="write the CustomResourceDefinitions generated from the models",
        description="Write one YAML file per CRD (LWS, Volcano PodGroup/HyperNode, Koordinator "
        "ClusterNetworkTopology, both coscheduling PodGroups) generated from topobridge's models.",
    )
    p.add_argument(
        "--output-dir", type=Path, default=DEFAULT_OUTPUT, help="directory to write into (default: crds/)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the files differ from what the models generate",
    )
    p.set_defaults(handler=_handle)


def stale_files(output_dir: Path) -> list[str]:
    """Names of generated files that are missing or differ from the models' output."""
    from translations.crdgen import rendered_files

    stale = []
    for name, text in rendered_files().items():
        path = output_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def write_all(output_dir: Path) -> list[Path]:
    from translations.crdgen import rendered_files

    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered_files().items():
        path = output_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def _handle(args: argparse.Namespace) -> int:
    output_dir: Path = args.output_dir
    if args.check:
        stale = stale_files(output_dir)
        if stale:
            for name in stale:
                print(
                    f"{output_dir / name}: differs from the models; "
                    f"run `topobridge crds --output-dir {output_dir}`",
                    file=sys.stderr,
                )
            return 1
        log.info("crds.current", directory=str(output_dir))
        return 0
    written = write_all(output_dir)
    log.info("crds.written", directory=str(output_dir), changed=[p.name for p in written])
    return 0
