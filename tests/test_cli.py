"""The command line's habits, as kubectl users expect them: `-f` beside FILE, directories and
`-R`, standard input, `-o` on every command that prints, a default that does not depend on the
terminal, global flags on either side of the subcommand, every file reported, clear messages
on empty input and broken YAML, nothing printed that a Python repr made."""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from topobridge import cli, cmd_completion
from topobridge.inputs import NO_INPUT

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_2 = ROOT / "controller" / "placer" / "demo" / "example-2.yaml"
LWS = yaml.safe_load((ROOT / "crds" / "examples" / "leaderworkerset.yaml").read_text())
REPR = re.compile(r"\bNone\b|\{'|\['|'\]|<[\w.]+ object at|\bTrue\b|\bFalse\b|<no name>|<unicode string>")
"""What only a Python repr (or a library's default naming) prints."""


def lws(mode: str = "hard", name: str = "llm-serving") -> dict[str, Any]:
    obj = yaml.safe_load(yaml.safe_dump(LWS))
    obj["metadata"]["name"] = name
    obj["spec"]["networkTopology"]["mode"] = mode
    return obj


@pytest.fixture(autouse=True)
def _keep_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    # main() configures logging onto the stderr of the moment: capsys's, gone after each test.
    monkeypatch.setattr("topobridge.logs.configure", lambda **_: None)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(yaml.safe_dump(lws()))
    bad.write_text(yaml.safe_dump(lws("hrad", "broken-mode")))
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod: x\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    folder = tmp_path / "dir"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.yaml").write_text(yaml.safe_dump(lws(name="in-dir")))
    (folder / "notes.txt").write_text("not read: not .yaml/.yml/.json")
    (folder / "sub" / "b.json").write_text(json.dumps(lws(name="in-subdir")))
    return {"good": good, "bad": bad, "broken": broken, "empty": empty, "dir": folder}


def run(
    argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None
) -> tuple[int, str, str]:
    if stdin is not None:
        sys_stdin = sys.stdin
        sys.stdin = io.StringIO(stdin)
    try:
        code = cli.main(argv)
    finally:
        if stdin is not None:
            sys.stdin = sys_stdin
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_no_repr(text: str) -> None:
    found = REPR.search(text)
    assert found is None, f"a repr leaked: {found.group(0)!r} in:\n{text}"


# --- every subcommand, every output format ------------------------------------------------------

CASES = [
    ("validate", ["validate", "{good}", "{bad}"], ["text", "json", "yaml", "name"]),
    ("translate", ["translate", str(EXAMPLE_2)], ["yaml", "json", "name"]),
    ("simulate", ["simulate", str(EXAMPLE_2)], ["text", "json", "yaml"]),
]


@pytest.mark.parametrize(
    ("argv", "fmt"),
    [(argv, fmt) for _, argv, formats in CASES for fmt in formats],
    ids=[f"{name}-{fmt}" for name, _, formats in CASES for fmt in formats],
)
def test_every_output_format_parses_and_carries_no_repr(
    argv: list[str], fmt: str, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    code, out, err = run([*argv, "-o", fmt], capsys)
    assert code in (0, 1), err
    assert out.strip(), "something was printed"
    assert_no_repr(out)
    assert_no_repr(err)
    if fmt == "json":
        json.loads(out)
    elif fmt == "yaml":
        assert list(yaml.safe_load_all(out))
    elif fmt == "name":
        assert all(re.fullmatch(r"[a-z][a-z0-9.-]*/[a-z0-9.-]+", line) for line in out.splitlines()), out


def test_validate_formats_say_the_same_thing(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, err = run(["validate", str(files["good"]), str(files["bad"])], capsys)
    assert code == 1
    assert text.splitlines() == [
        "valid LeaderWorkerSet llm-serving",
        f"invalid LeaderWorkerSet broken-mode ({files['bad']} document 1)",
    ]
    assert 'spec.networkTopology.mode: Unsupported value: "hrad"' in err
    _, out, _ = run(["validate", str(files["good"]), str(files["bad"]), "-o", "json"], capsys)
    doc = json.loads(out)
    assert [(r["object"], r["verdict"]) for r in doc["results"]] == [
        ("LeaderWorkerSet llm-serving", "valid"),
        ("LeaderWorkerSet broken-mode", "invalid"),
    ]
    assert doc["results"][1]["errors"][0].startswith("spec.networkTopology.mode: Unsupported value")
    _, out, _ = run(["validate", str(files["good"]), str(files["bad"]), "-o", "name"], capsys)
    assert out == "leaderworkerset.leaderworkerset.x-k8s.io/llm-serving\n", "only the valid ones"


def test_simulate_default_is_text_whatever_stdout_is(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["simulate", str(EXAMPLE_2)], capsys)
    assert code == 0 and out.startswith("== ") and "result: 4 bound" in out
    # Quantities in Kubernetes' units, the same on every line: never `0.0` beside `0`.
    assert "mem 0/32Gi" in out and "mem 32Gi/32Gi" in out and "0.0" not in out


def test_completion_scripts_know_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    for shell in cmd_completion.SHELLS:
        code, out, _ = run(["completion", shell], capsys)
        assert code == 0
        for name in cli.SUBCOMMANDS:
            assert name.replace("_", "-") in out, (shell, name)
        assert "--filename" in out and "--output" in out
    bash = cmd_completion.script("bash")
    proc = subprocess.run(["bash", "-n"], input=bash, text=True, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_version_names_the_commit_when_known(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    assert out.startswith("topobridge 0.1.0")
    if head:  # a checkout (CI, development); an unpacked sdist has no commit to name
        assert out.strip().endswith(f"(commit {head})")


# --- input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_global_flags_either_side_of_the_subcommand(where: str) -> None:
    flags = ["--log-level", "debug", "--kubeconfig", "/k", "--context", "c", "--log-format", "json"]
    argv = [*flags, "tree"] if where == "before" else ["tree", *flags]
    args = cli.build_parser().parse_args(argv)
    assert (args.log_level, args.kubeconfig, args.context, args.log_format) == ("debug", "/k", "c", "json")
    # A subcommand with its own --kubeconfig does not reset one given before it.
    args = cli.build_parser().parse_args(["--kubeconfig", "/k", "simulate", "--from-cluster"])
    assert args.kubeconfig == "/k"


def test_every_file_is_reported_and_the_worst_exit_wins(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    code, out, err = run(["validate", str(files["good"]), str(missing), str(files["broken"])], capsys)
    assert code == 2
    assert out == "valid LeaderWorkerSet llm-serving\n", "the good file still counts"
    assert f"error: {missing}: no such file or directory" in err
    assert f"error: {files['broken']}:2:10: not valid YAML: mapping values are not allowed here" in err


def test_directories_recursion_and_f(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", "-f", str(files["dir"])], capsys)
    assert (code, out) == (0, "valid LeaderWorkerSet in-dir\n"), "only .yaml/.yml/.json, this level"
    code, out, _ = run(["validate", "-R", "-f", str(files["dir"]), str(files["good"])], capsys)
    assert code == 0
    assert out.splitlines() == [
        "valid LeaderWorkerSet llm-serving",
        "valid LeaderWorkerSet in-dir",
        "valid LeaderWorkerSet in-subdir",
    ]


def test_standard_input_and_empty_input(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", "-f", "-"], capsys, stdin=files["good"].read_text())
    assert (code, out) == (0, "valid LeaderWorkerSet llm-serving\n")
    for command in ("validate", "translate", "simulate"):
        code, out, err = run([command, "-"], capsys, stdin="")
        assert (code, out) == (2, ""), command
        assert err == f"error: no objects passed to {command} (standard input: empty)\n"
    code, _, err = run(["validate", str(files["empty"])], capsys)
    assert code == 2 and f"({files['empty']}: empty)" in err
    code, _, err = run(["validate"], capsys)
    assert (code, err) == (2, f"error: {NO_INPUT}\n")


def test_translate_prints_only_what_it_made_and_nothing_on_failure(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["translate", str(EXAMPLE_2)], capsys)
    assert code == 0, err
    kinds = {d["kind"] for d in yaml.safe_load_all(out)}
    assert kinds == {"HyperNode", "PodGroup", "Pod"}, "no Nodes, CNT or PriorityClasses echoed back"
    code, out, err = run(["translate", str(EXAMPLE_2), str(files["broken"])], capsys)
    assert (code, out) == (2, "")
    assert err.rstrip().splitlines()[-1].startswith("error: nothing written: 1 problem(s) above")


def test_a_missing_kubeconfig_says_so_and_nothing_else(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "topobridge.cli", "tree", "--kubeconfig", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"error: cannot load the kubeconfig {tmp_path / 'nope'}: no such file\n"


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                out.extend(_all_parsers(sub))
    return out


def test_no_parser_takes_an_abbreviated_flag() -> None:
    parsers = _all_parsers(cli.build_parser())
    assert len(parsers) > 10
    assert [p.prog for p in parsers if p.allow_abbrev] == []


def test_simulate_from_is_an_error_not_from_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["simulate", "--from", str(EXAMPLE_2)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --from" in err


SNAPSHOT_COMMANDS = ("simulate", "explain", "ui", "tree")


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[name]
    return found


@pytest.mark.parametrize("command", SNAPSHOT_COMMANDS)
def test_every_snapshot_command_names_a_file_and_the_cluster_alike(command: str) -> None:
    p = _subparser(command)
    options = p._option_string_actions
    assert options["-f"] is options["--filename"] and options["-f"].dest == "filenames"
    assert options["-f"].metavar == "FILE" and options["--from-cluster"].dest == "from_cluster"
    assert options["-R"].dest == "recursive"


@pytest.mark.parametrize("command", ("explain", "ui"))
def test_from_is_kept_as_the_older_spelling_of_f_where_it_was(command: str) -> None:
    options = _subparser(command)._option_string_actions
    assert options["--from"] is options["-f"]
    assert "--from FILE is its older spelling" in (options["-f"].help or "")


def test_explain_reads_the_same_scenario_by_either_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    answers = []
    for flag in ("-f", "--from"):
        assert cli.main(["explain", "high-priority-training", flag, str(EXAMPLE_2), "-o", "json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] and answers[0]["verdict"]["code"] == "WaitingForVictims"


def test_tree_draws_a_scenario_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tree", "-f", str(EXAMPLE_2), "-o", "json"]) == 0
    assert "SpineLayer/spine-1" in capsys.readouterr().out


def test_ui_refuses_a_job_on_the_live_cluster_and_names_the_what_if(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["ui", "--from-cluster", "-f", str(EXAMPLE_2)]) == 2
    err = capsys.readouterr().err
    assert "what-if box" in err and "simulate --from-cluster -f JOB" in err


def test_simulate_with_a_job_on_an_unreadable_cluster_says_from_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        ["simulate", "--from-cluster", "-f", str(EXAMPLE_2), "--kubeconfig", str(tmp_path / "nope")]
    )
    assert code == 2
    assert capsys.readouterr().err.startswith("error: --from-cluster: cannot load the kubeconfig")
