"""`-o/--output` as kubectl has it: a fixed default that never depends on the terminal, JSON and
YAML of the same data, and `name` (`kind.group/name`, one a line) where objects are printed.

Objects print as kubectl prints them: one object alone, several as a `kind: List` (JSON) or as
YAML documents. Results (validate's verdicts, simulate's outcome, the topology tree) print as
one document of plain data. No Python repr reaches the output: everything goes through JSON or
YAML serialisers, or through text made from strings.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import yaml

TEXT, JSON, YAML, NAME = "text", "json", "yaml", "name"


def add_output_argument(
    parser: argparse.ArgumentParser, *, formats: Sequence[str], default: str, says: str
) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=formats,
        default=default,
        help=f"{'|'.join(formats)} (default: {default}); {says}",
    )


class _PlainDumper(yaml.SafeDumper):
    """Shared sub-objects written out in full: no anchors and aliases in output people read."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: Any, out: TextIO) -> None:
    yaml.dump(data, out, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def dump_yaml_documents(docs: Iterable[Any], out: TextIO) -> None:
    yaml.dump_all(
        docs, out, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def dump_json(data: Any, out: TextIO, *, indent: int | None = 2, sort_keys: bool = False) -> None:
    json.dump(data, out, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    out.write("\n")


def write_objects(objects: Sequence[dict[str, Any]], fmt: str, out: TextIO) -> None:
    """Kubernetes objects in `fmt` (yaml, json or name)."""
    if fmt == NAME:
        for obj in objects:
            out.write(object_name(obj) + "\n")
    elif fmt == JSON:
        if len(objects) == 1:
            dump_json(objects[0], out)
        elif objects:
            dump_json({"apiVersion": "v1", "kind": "List", "items": list(objects)}, out)
    elif objects:
        dump_yaml_documents(objects, out)


def object_name(obj: dict[str, Any]) -> str:
    """`kind.group/name` as `kubectl get -o name` prints it (`pod/x`, `podgroup.scheduling.volcano.sh/x`)."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind") or "").lower()
    meta = obj.get("metadata")
    name = str((meta if isinstance(meta, dict) else {}).get("name") or "")
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"
