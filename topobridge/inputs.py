"""Reading Kubernetes objects as kubectl does: `-f FILE|DIR|-` (repeatable) beside positional
FILEs, `-R` to descend into directories, YAML or JSON, `kind: List` and bare lists flattened.

Every source is read on its own: one that cannot be read is reported (`Inputs.problems`) and the
others still count, so `validate good.yaml missing.yaml` says something about both. Messages
name the file and, for YAML errors, the line and column (`objects.yaml:3:7: not valid YAML: ...`);
a key given twice in one mapping is such an error (`found duplicate key "x" (first at line 6)`),
as the API server's strict decoding refuses it. A text nested deeper than the readers go (JSON
past `jsontext.MAX_DEPTH` levels, which the API server stores in a `managedFields` entry's
`fieldsV1`; YAML past Python's stack) is such an error too, naming where when it can
(`items[0].metadata.managedFields[0].fieldsV1: JSON nested 1026 levels deep, ...`), never a
RecursionError out of a command or the ui's what-if.

The commands that read a cluster snapshot (`simulate`, `explain`, `ui`, `tree`) name it one
way (`add_snapshot_arguments`, `Snapshot`): `-f FILE` (repeatable; together one snapshot) reads
files, `--from-cluster` the live cluster through the kubeconfig (read-only, `list` calls only);
both together: the cluster with the files' objects added, a job not yet submitted (the ui's
what-if, `topobridge.ui.whatif.with_job`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from translations import jsontext

STDIN = "-"
NO_INPUT = "no input: give FILE or -f FILE (a file, a directory, or - for standard input)"
EXTENSIONS = (".yaml", ".yml", ".json")
"""What a directory is read for (kubectl's set)."""


class UnreadableError(Exception):
    """A source that cannot be read as Kubernetes objects; the message names it."""


class ClusterUnreadable(ValueError):
    """The live cluster could not be read; the message says what failed."""


class _Loader(yaml.SafeLoader):
    """YAML as the API server reads it: timestamps stay strings (JSON has no dates), and a key
    given twice in one mapping is an error naming both lines (the API server's strict decoding
    refuses it; SafeLoader would keep the last value without a word)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<` merges: an explicit key may override a merged one
                key = self.construct_object(key_node, deep=deep)
                try:
                    seen = first.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base class says so
                    break
                if seen is not key_node:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"found duplicate key {_key_text(key)} (first at line {seen.start_mark.line + 1})",
                        key_node.start_mark,
                    )
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True, slots=True)
class Located:
    """An object and where it came from, for messages."""

    obj: Any
    source: str


@dataclass
class Inputs:
    """What a command read: the objects in order, and one message per source that failed."""

    objects: list[Located] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing to work on and nothing went wrong: empty files or an empty standard input."""
        return not self.objects and not self.problems

    def empty_message(self, command: str) -> str:
        names = ", ".join(_shown(s) for s in self.sources) or "no input"
        return f"no objects passed to {command} ({names}: empty)"


def add_filename_arguments(parser: argparse.ArgumentParser, *, what: str = "objects") -> None:
    """`FILE...` and `-f/--filename` (both repeatable, mixed freely) and `-R/--recursive`."""
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help=f"file or directory of {what}; - for standard input"
    )
    parser.add_argument(
        "-f",
        "--filename",
        dest="filenames",
        action="append",
        default=[],
        metavar="FILE",
        help="as FILE (repeatable): a file, a directory (its .yaml, .yml and .json files) or -",
    )
    parser.add_argument(
        "-R", "--recursive", action="store_true", help="read directories given with FILE/-f recursively"
    )


FROM_CLUSTER_HELP = (
    "read the live cluster through the kubeconfig (read-only); with -f: the files' job added to it"
)


def add_snapshot_arguments(
    parser: argparse.ArgumentParser, *, files: bool = True, old_from: bool = False
) -> None:
    """`-f/--filename FILE` (repeatable, scenario files: one snapshot), `-R`, `--from-cluster`.
    `old_from`: `--from FILE` too, the spelling `explain` and `ui` had (one file, as `-f`).
    `files` False: only `--from-cluster` (the command adds its FILEs itself)."""
    if files:
        names = ["-f", "--filename", *(["--from"] if old_from else [])]
        parser.add_argument(
            *names,
            dest="filenames",
            action="append",
            default=[],
            metavar="FILE",
            help="a scenario file, a directory of them or - (repeatable: one snapshot together)"
            + ("; --from FILE is its older spelling" if old_from else ""),
        )
        parser.add_argument(
            "-R", "--recursive", action="store_true", help="read directories given with -f recursively"
        )
    parser.add_argument("--from-cluster", action="store_true", help=FROM_CLUSTER_HELP)


@dataclass(frozen=True)
class Snapshot:
    """Where a command's snapshot comes from: files, the live cluster, or the cluster with
    the files' objects added (a job not yet submitted)."""

    files: Sequence[str] = ()
    recursive: bool = False
    from_cluster: bool = False
    kubeconfig: str | None = None
    context: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace, *, files: Sequence[str] | None = None) -> Snapshot:
        return cls(
            tuple(files if files is not None else args.filenames),
            recursive=args.recursive,
            from_cluster=args.from_cluster,
            kubeconfig=args.kubeconfig,
            context=args.context,
        )

    @property
    def cluster(self) -> bool:
        """The live cluster is read: asked for, or no file given."""
        return self.from_cluster or not self.files

    @property
    def job(self) -> bool:
        """The files are a job added to the live cluster."""
        return self.from_cluster and bool(self.files)

    def read(
        self, command: str, *, stdin: TextIO | None = None
    ) -> tuple[list[Any], list[str], list[Any], list[str]]:
        """(cluster objects, their sources, file objects, their sources); ValueError, the
        reason, when something cannot be read."""
        cluster: list[Any] = []
        if self.cluster:
            from topobridge.snapshot_io import SnapshotError, read_cluster

            try:
                cluster = list(read_cluster(kubeconfig=self.kubeconfig, context=self.context))
            except SnapshotError as exc:
                raise ClusterUnreadable(str(exc)) from None
        if not self.files:
            return cluster, [f"cluster object {i + 1}" for i in range(len(cluster))], [], []
        inputs = read_inputs(self.files, recursive=self.recursive, stdin=stdin)
        if inputs.problems:
            raise ValueError("; ".join(inputs.problems))
        if inputs.empty:
            raise ValueError(inputs.empty_message(command))
        return (
            cluster,
            [f"cluster object {i + 1}" for i in range(len(cluster))],
            [loc.obj for loc in inputs.objects],
            [loc.source for loc in inputs.objects],
        )


def paths_of(args: argparse.Namespace) -> list[str]:
    """Positional FILEs then `-f` ones, in the order given within each."""
    return [*args.files, *args.filenames]


def read_inputs(paths: Sequence[str], *, recursive: bool = False, stdin: TextIO | None = None) -> Inputs:
    """Every object of every source; a source that fails is reported and skipped."""
    inputs = Inputs()
    for path in paths:
        try:
            files = expand(path, recursive=recursive)
        except UnreadableError as exc:
            inputs.sources.append(path)
            inputs.problems.append(str(exc))
            continue
        for file in files:
            inputs.sources.append(file)
            try:
                inputs.objects.extend(load_objects(file, stdin))
            except UnreadableError as exc:
                inputs.problems.append(str(exc))
    return inputs


def read_reporting(
    command: str, paths: Sequence[str], *, err: TextIO, recursive: bool = False, stdin: TextIO | None = None
) -> Inputs | None:
    """`read_inputs` for a command: each source that failed is reported on `err` as it would be
    by kubectl (`error: FILE: why`); None, after saying why, when there is nothing to work on
    (no FILE given, or only empty input)."""
    if not paths:
        print(f"error: {NO_INPUT}", file=err)
        return None
    inputs = read_inputs(paths, recursive=recursive, stdin=stdin)
    for problem in inputs.problems:
        print(f"error: {problem}", file=err)
    if inputs.empty:
        print(f"error: {inputs.empty_message(command)}", file=err)
        return None
    return inputs


def expand(path: str, *, recursive: bool = False) -> list[str]:
    """A file as itself; a directory as its .yaml/.yml/.json files, sorted (all levels with
    `recursive`). A directory with none of them is an error saying so."""
    if path == STDIN or not os.path.isdir(path):
        return [path]
    root = Path(path)
    walker = root.rglob("*") if recursive else root.iterdir()
    found = sorted(str(p) for p in walker if p.suffix in EXTENSIONS and p.is_file())
    if not found:
        hint = (
            "" if recursive or not any(p.is_dir() for p in root.iterdir()) else " (-R reads subdirectories)"
        )
        raise UnreadableError(f"{path}: a directory with no {', '.join(EXTENSIONS)} files{hint}")
    return found


def load_objects(path: str, stdin: TextIO | None = None) -> Iterator[Located]:
    """Every object in one file: documents, with `kind: List` (`*List`) and bare lists flattened."""
    shown = _shown(path)
    text = _read_text(path, stdin)
    documents = _json_documents(text, shown)
    if documents is None:
        try:
            documents = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as exc:
            raise UnreadableError(yaml_error(shown, exc)) from None
        except RecursionError:  # PyYAML composes and constructs nested nodes recursively
            raise UnreadableError(f"{shown}: not readable YAML: nested deeper than it can be read") from None
    for n, doc in enumerate(documents, start=1):
        if doc is not None:
            yield from _document_objects(doc, f"{shown} document {n}")


def _read_text(path: str, stdin: TextIO | None) -> str:
    """The file's text (`-`: standard input); why it cannot be read, in a user's words."""
    shown = _shown(path)
    try:
        if path == STDIN:
            return (stdin or sys.stdin).read()
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise UnreadableError(f"{shown}: no such file or directory") from None
    except IsADirectoryError:
        raise UnreadableError(f"{shown}: is a directory") from None
    except PermissionError:
        raise UnreadableError(f"{shown}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise UnreadableError(f"{shown}: byte {exc.start}: not UTF-8 text") from None
    except OSError as exc:
        raise UnreadableError(f"{shown}: cannot read: {exc.strerror or exc}") from None


def _document_objects(doc: Any, where: str) -> Iterator[Located]:
    """One document's objects: itself, or the items of a `*List` or of a bare list."""
    if isinstance(doc, list):  # a bare YAML list of objects
        items: list[Any] = doc
    elif (
        isinstance(doc, dict)
        and str(doc.get("kind", "")).endswith("List")
        and isinstance(doc.get("items"), list)
    ):
        items = doc["items"]
    elif isinstance(doc, dict):
        yield Located(doc, where)
        return
    else:
        raise UnreadableError(f"{where}: not a Kubernetes object (a {_yaml_type(doc)})")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UnreadableError(f"{where} item {i}: not a Kubernetes object (a {_yaml_type(item)})")
        yield Located(item, f"{where} item {i}")


class _DuplicateKey(Exception):
    pass


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_documents(text: str, shown: str) -> list[Any] | None:
    """A JSON text as one document, read by the json module (PyYAML's pure-Python reader takes
    minutes over a 10,000-node snapshot); None when it is not plain JSON or repeats a key, so
    the YAML reader reads it and says where (JSON is YAML: both readers agree on the rest).
    Nested deeper than `jsontext.MAX_DEPTH`: an UnreadableError naming where (`_too_deep`)."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        jsontext.check_depth(text)
    except jsontext.TooDeep as exc:
        raise UnreadableError(_too_deep(text, shown, exc)) from None
    try:
        return [json.loads(text, object_pairs_hook=_json_object, parse_constant=_not_json)]
    except (ValueError, _DuplicateKey):
        return None


def _too_deep(text: str, shown: str, exc: jsontext.TooDeep) -> str:
    """`shown: PATH: JSON nested N levels deep, ...`: the first value too deep, found by reading
    the text with such values cut out (no PATH when even that cannot read it)."""
    try:
        value, _ = jsontext.loads_bounded(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return f"{shown}: {exc}"
    where = _schema_field(_first_too_deep(value))
    return f"{shown}: {where}: Invalid value: {exc}" if where else f"{shown}: {exc}"


def _first_too_deep(value: Any) -> str:
    """The path of the first value nested deeper than `jsontext.MAX_DEPTH` in `value` (cut out
    by `loads_bounded`, or read whole by orjson, which reads 1,024 levels); an iterative walk."""
    stack: list[tuple[str, Any, int]] = [("", value, 1)]
    while stack:
        path, v, level = stack.pop()
        if v == jsontext.TOO_DEEP or (isinstance(v, dict | list) and level > jsontext.MAX_DEPTH):
            return path
        if isinstance(v, dict):
            stack.extend(
                (f"{path}.{k}" if path else str(k), sub, level + 1) for k, sub in reversed(v.items())
            )
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", sub, level + 1) for i, sub in reversed(list(enumerate(v))))
    return ""


_SEGMENT = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*)?(?:\[[0-9]+\])*")
_INDEXES_AT_END = re.compile(r"(?:\[[0-9]+\])+\Z")
FIELD_SHOWN = 120


def _schema_field(path: str) -> str:
    """The start of `path` made of field names and indexes (`items[0].metadata.managedFields[0]
    .fieldsV1`) up to the last name: the schema's field holding the value, before the free-form
    keys and the lists of lists inside it (`f:a`, `[0][0]`); cut at `FIELD_SHOWN` characters."""
    kept: list[str] = []
    for segment in path.split("."):
        if not segment or _SEGMENT.fullmatch(segment) is None:
            break
        kept.append(segment)
    where = _INDEXES_AT_END.sub("", ".".join(kept))
    if len(where) > FIELD_SHOWN:
        where = where[: max(where.rfind(".", 0, FIELD_SHOWN), where.rfind("[", 0, FIELD_SHOWN))] + "..."
    return where


def yaml_error(path: str, exc: yaml.YAMLError) -> str:
    """`path:line:column: not valid YAML: what` (1-based), from any PyYAML error."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        what = "; ".join(p for p in (exc.context, exc.problem) if p)
        return f"{path}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {what}"
    if isinstance(exc, yaml.reader.ReaderError):
        return f"{path}: character {exc.position + 1}: not valid YAML: {exc.reason}"
    return f"{path}: not valid YAML: {exc}"


def _key_text(key: Any) -> str:
    return f'"{key}"' if isinstance(key, str) else str(key)


def describe(obj: Any) -> str:
    """`Kind namespace/name` (or `Kind name`) of a raw object, whatever its shape."""
    if not isinstance(obj, dict):
        return f"a {_yaml_type(obj)}"
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or "(no name)"
    ns = meta.get("namespace")
    kind = obj.get("kind") or "(no kind)"
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _shown(path: str) -> str:
    return "standard input" if path == STDIN else path


def _yaml_type(value: Any) -> str:
    """The YAML name of a value's type, for messages (never a Python type name)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "mapping" if isinstance(value, dict) else "scalar"
