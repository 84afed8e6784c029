"""`submitter package`: repository rules and the leak scan on planted problems, then the archive itself."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

import minitree
import pytest
from click.testing import CliRunner
from conftest import run_cli
from treecopy import H100, copy_tree

import submitter.package.leaks as leaks_module
from submitter.errors import UsageProblem
from submitter.package.allow import AllowList
from submitter.package.leaks import ScannedLine, scan_file
from submitter.package.packaging import (
    PackageReport,
    PackageRequest,
    Sensitive,
    package_tree,
    parse_allow_list,
)

# Never this machine's names: the library tests must not depend on where they run.
SENSITIVE = Sensitive.build(hosts=["gpu-node-7.corp.example.com"], users=["alice"])
HF_TOKEN = "hf_" + "Qm7XkP2vLs9TzR4wNc8YbJ5eHd3UaG6fKi"  # made up, in the real format
SUBMITTER = "closed/Acme"
RESULT = f"{SUBMITTER}/results/sys_1xH100/llama3.1-8b/Offline"
PERF_LOG = f"{RESULT}/performance/run_1/mlperf_log_detail.txt"
MB = 1024 * 1024


# What a real tree holds that a careless scanner takes for a leak: version numbers with four parts,
# times, loopback addresses, `max_tokens`, an `api_key` placeholder, a token read from the environment.
# They are laid over a tree that `submitter check` passes, since `package` checks it first.
BAIT = {
    f"{RESULT}/README.md": "# sys_1xH100 Offline\n\nRun at 12:34:56 with vLLM 0.10.0.\n",
    f"{SUBMITTER}/src/harness.py": (
        "import os\n"
        'TOKEN = os.environ["HF_TOKEN"]\n'
        'client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="EMPTY")\n'
        "params = dict(max_tokens=128, temperature=0.0)\n"
        "every_other = samples[1::2]\n"
    ),
}
SYSTEM_BAIT = {
    "sw_notes": "vLLM 0.10.0, CUDA 12.8, cuDNN 9.1.0.70, TensorRT 10.2.0.19, driver 570.148.08",
    "host_networking": "Infiniband HDR, 200 Gb/s",
}


def build_tree(root: Path) -> Path:
    """A valid v6.1 tree of llama3.1-8b on one system, with the bait laid over it."""
    mini = minitree.build_tree(
        root, "v6.1", [("sys_1xH100", "llama3.1-8b", s) for s in ("Offline", "Server")], submitter="Acme"
    )
    system = mini.system_json("sys_1xH100")
    system.write_text(json.dumps({**json.loads(system.read_text()), **SYSTEM_BAIT}, indent=2))
    for relative, text in BAIT.items():
        (root / relative).write_text(text, encoding="utf-8")
    return root


def files_in(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tree")


def package(folder: Path, out: Path, **options: Any) -> PackageReport:
    request = PackageRequest(path=folder, out_dir=out, round_name="v6.1", sensitive=SENSITIVE)
    return package_tree(dataclasses.replace(request, **options))


def rules_found(report: PackageReport) -> set[str]:
    return {finding.rule for finding in report.findings}


def plant(root: Path, relative: str, line: str, at: int | None = None) -> None:
    """Put `line` into a file as line number `at` (appended when None)."""
    path = root / relative
    lines = path.read_text().splitlines() if path.exists() else []
    lines.insert(len(lines) if at is None else at - 1, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def test_a_clean_small_tree_has_no_findings_despite_the_bait(tree, tmp_path):
    report = package(tree / SUBMITTER, tmp_path / "out")
    assert report.findings == []
    assert report.scanned_files == len(files_in(tree))
    assert report.written is not None


def test_a_planted_hf_token_is_found_at_its_line_and_never_printed(tree, tmp_path):
    plant(tree, PERF_LOG, f"export HF_TOKEN={HF_TOKEN}", at=3)
    result = run_cli("package", str(tree / SUBMITTER), "--round", "v6.1", "--out", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert f"{PERF_LOG}:3: LEAK-TOKEN error holds a Hugging Face access token (hf_Q…[" in result.stdout
    assert HF_TOKEN not in result.stdout + result.stderr
    assert HF_TOKEN[4:12] not in result.stdout + result.stderr  # not even a long piece of it
    assert "nothing written" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_planted_private_key_is_found(tree, tmp_path):
    plant(tree, f"{SUBMITTER}/src/deploy_key", "-----BEGIN OPENSSH PRIVATE KEY-----")
    plant(
        tree,
        f"{SUBMITTER}/src/deploy_key",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    )
    report = package(tree / SUBMITTER, tmp_path / "out")
    [finding] = report.findings
    assert (finding.rule, finding.path, finding.line) == (
        "LEAK-PRIVATE-KEY",
        f"{SUBMITTER}/src/deploy_key",
        1,
    )
    assert report.written is None and not (tmp_path / "out").exists()


def test_a_planted_60_mb_file_is_found(tree, tmp_path):
    big = tree / RESULT / "performance" / "run_1" / "mlperf_log_trace.json"
    big.touch()
    os.truncate(big, 60 * MB)  # sparse: costs no disk
    report = package(tree / SUBMITTER, tmp_path / "out")
    [finding] = report.findings
    assert (finding.rule, finding.path) == (
        "HYG-FILE-SIZE",
        f"{RESULT}/performance/run_1/mlperf_log_trace.json",
    )
    assert "60.0 MB, over the 50 MB limit" in finding.message
    assert report.too_large_files == [f"{RESULT}/performance/run_1/mlperf_log_trace.json"]  # never read
    assert report.written is None and not (tmp_path / "out").exists()


def test_a_symlink_and_a_dot_file_are_found(tree, tmp_path):
    (tree / SUBMITTER / "src" / "model").symlink_to("/models/llama")
    (tree / SUBMITTER / "src" / ".env").write_text("VLLM_USE_V1=1\n")
    report = package(tree / SUBMITTER, tmp_path / "out")
    found = {(f.rule, f.path) for f in report.findings}
    assert found == {("HYG-SYMLINK", f"{SUBMITTER}/src/model"), ("HYG-NAME", f"{SUBMITTER}/src/.env")}
    assert report.written is None


def test_names_of_this_machine_and_its_user_are_errors_in_paths_and_content(tree, tmp_path):
    plant(tree, f"{RESULT}/README.md", "Measured on gpu-node-7.corp.example.com by alice.")
    (tree / SUBMITTER / "documentation" / "gpu-node-7.corp.example.com.md").write_text("notes\n")
    report = package(tree / SUBMITTER, tmp_path / "out")
    found = {(f.rule, f.path, f.line) for f in report.findings}
    assert found == {
        ("LEAK-HOSTNAME", f"{RESULT}/README.md", 4),
        ("LEAK-USER", f"{RESULT}/README.md", 4),
        ("LEAK-HOSTNAME", f"{SUBMITTER}/documentation/gpu-node-7.corp.example.com.md", None),
    }


def test_the_name_of_a_secret_variable_does_not_block_the_package(tree, tmp_path):
    # v6.0 closed/RedHat/src/gpt-oss-120b/scripts/run_submission.py:203 names the environment variable
    # that holds the key; the value is read from it when the program runs.
    plant(tree, f"{SUBMITTER}/src/harness.py", "config = {'aws_secret_access_key': 'AWS_SECRET_ACCESS_KEY'}")
    report = package(tree / SUBMITTER, tmp_path / "out")
    assert report.findings == [] and report.written is not None


def test_denied_words_match_in_any_case(tree, tmp_path):
    plant(tree, f"{SUBMITTER}/src/harness.py", "# tuned for the BLUEBIRD cluster")
    report = package(tree / SUBMITTER, tmp_path / "out", sensitive=Sensitive.build(denied=["bluebird"]))
    assert [(f.rule, f.line) for f in report.findings] == [("LEAK-DENIED", 6)]


def test_home_paths_are_warnings_that_block_only_with_strict(tree, tmp_path):
    plant(
        tree,
        f"{RESULT}/accuracy/accuracy.txt",
        "[nltk_data] Downloading package punkt to /home/bob/nltk_data...",
        1,
    )
    report = package(tree / SUBMITTER, tmp_path / "out")
    [finding] = report.findings
    assert (finding.rule, finding.severity, finding.line) == ("LEAK-HOME-PATH", "warning", 1)
    assert "'bob'" in finding.message and report.written is not None
    strict = package(tree / SUBMITTER, tmp_path / "strict", strict=True)
    assert strict.blocked and strict.written is None


def test_a_clean_tree_packages_into_an_archive_its_checksum_and_manifest_describe(tree, tmp_path):
    (tree / SUBMITTER / "src" / "harness.py").chmod(0o755)
    report = package(tree / SUBMITTER, tmp_path / "out")
    archive = tmp_path / "out" / "Acme.tar.gz"
    assert report.written is not None and report.written.paths.archive == archive

    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (tmp_path / "out" / "Acme.tar.gz.sha256").read_text() == f"{digest}  Acme.tar.gz\n"

    manifest = json.loads((tmp_path / "out" / "Acme.manifest.json").read_text())
    assert manifest["archive"] == "Acme.tar.gz" and manifest["archive_sha256"] == digest
    on_disk = {
        path.relative_to(tree).as_posix(): path.read_bytes() for path in tree.rglob("*") if path.is_file()
    }
    assert [entry["path"] for entry in manifest["files"]] == sorted(on_disk)
    for entry in manifest["files"]:
        data = on_disk[entry["path"]]
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest["file_count"] == len(on_disk) and manifest["total_bytes"] == sum(
        map(len, on_disk.values())
    )

    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        tar.extractall(tmp_path / "extracted", filter="tar")
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", 0)}
    assert [m.name for m in members][:2] == ["closed", "closed/Acme"]
    assert {m.name: m.mode for m in members}[f"{SUBMITTER}/src/harness.py"] == 0o755
    extracted = {
        path.relative_to(tmp_path / "extracted").as_posix(): path.read_bytes()
        for path in (tmp_path / "extracted").rglob("*")
        if path.is_file()
    }
    assert extracted == on_disk


def test_packaging_twice_gives_identical_bytes_wherever_the_tree_lies(tree, tmp_path):
    first = package(tree / SUBMITTER, tmp_path / "one")
    moved = tmp_path / "elsewhere" / "deeper"
    shutil.copytree(tree, moved, copy_function=shutil.copyfile)  # new times, new place
    for path in moved.rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    second = package(moved / SUBMITTER, tmp_path / "two")
    assert first.written is not None and second.written is not None
    for name in ("Acme.tar.gz", "Acme.tar.gz.sha256", "Acme.manifest.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_the_input_tree_is_left_as_it_was(tree, tmp_path):
    def snapshot() -> dict[str, tuple[bytes, int, int]]:
        return {
            str(path): (
                path.read_bytes() if path.is_file() else b"",
                path.stat().st_mtime_ns,
                path.stat().st_mode,
            )
            for path in sorted(tree.rglob("*"))
        }

    before = snapshot()
    package(tree / SUBMITTER, tmp_path / "out")
    assert snapshot() == before


def test_an_interrupted_packaging_leaves_no_file(tree, tmp_path, monkeypatch):
    import submitter.package.archive as archive_module

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(archive_module, "_verify", interrupted)
    (tmp_path / "out").mkdir()
    with pytest.raises(KeyboardInterrupt):
        package(tree / SUBMITTER, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_allow_entries_suppress_only_what_they_name(tree, tmp_path):
    plant(tree, f"{RESULT}/README.md", "The load balancer at 10.20.30.40 fed both nodes.")
    plant(tree, f"{SUBMITTER}/src/harness.py", "SERVER = '10.20.30.41'")
    blocked = package(tree / SUBMITTER, tmp_path / "out")
    assert [(f.rule, f.path) for f in blocked.findings] == [
        ("LEAK-IP", f"{RESULT}/README.md"),
        ("LEAK-IP", f"{SUBMITTER}/src/harness.py"),
    ]

    by_path_and_text = parse_allow_list(
        (f"LEAK-IP {RESULT}/README.md 10.20.30.40", "LEAK-IP */src/* 10.9.9.9"), ()
    )
    partly = package(tree / SUBMITTER, tmp_path / "out", allow=by_path_and_text)
    assert [(f.rule, f.path) for f in partly.findings] == [("LEAK-IP", f"{SUBMITTER}/src/harness.py")]
    assert [str(entry) for entry in partly.unused_allows] == ["LEAK-IP */src/* 10.9.9.9"]

    allow_file = tmp_path / "allow.txt"
    allow_file.write_text("# addresses of our own lab, fine to publish\nLEAK-IP\n")
    whole_rule = package(tree / SUBMITTER, tmp_path / "out", allow=parse_allow_list((), (allow_file,)))
    assert whole_rule.findings == [] and whole_rule.written is not None


def test_repository_rules_and_unknown_rules_cannot_be_allowed(tmp_path):
    with pytest.raises(UsageProblem, match="HYG-FILE-SIZE is a repository rule"):
        parse_allow_list(("HYG-FILE-SIZE",), ())
    with pytest.raises(UsageProblem, match="'LEAK-NOPE' is not a leak rule"):
        parse_allow_list(("LEAK-NOPE",), ())
    bad = tmp_path / "allow.txt"
    bad.write_text("LEAK-IP\nPERF-SEED *\n")
    with pytest.raises(UsageProblem, match=r"allow.txt:2: 'PERF-SEED' is not a leak rule"):
        parse_allow_list((), (bad,))


@pytest.mark.slow
def test_exit_codes(tree, tmp_path):
    def package_cli(*args: str) -> int:
        return run_cli("package", *args, "--round", "v6.1", cwd=tmp_path).returncode

    assert package_cli(str(tmp_path / "nowhere")) == 2
    assert package_cli(str(tree / SUBMITTER / "src" / "harness.py")) == 2
    assert package_cli(str(tree / SUBMITTER), "--allow", "HYG-SYMLINK") == 2
    assert package_cli(str(tree / SUBMITTER), "--name", "") == 2
    assert package_cli(str(tree / SUBMITTER), "--name", "../escape") == 2
    assert package_cli(str(tree / SUBMITTER), "--out", str(tree / SUBMITTER / "dist")) == 2
    assert not (tree / SUBMITTER / "dist").exists()
    (tmp_path / "a_file").write_text("")
    assert package_cli(str(tree / SUBMITTER), "--out", "a_file/dist") == 2
    assert package_cli(str(tree / SUBMITTER), "--out", "out") == 0
    archive = tmp_path / "out" / "Acme.tar.gz"
    before = archive.read_bytes()
    assert package_cli(str(tree / SUBMITTER), "--out", "out") == 2  # exists: not replaced
    assert package_cli(str(tree / SUBMITTER), "--out", "out", "--force") == 0
    assert archive.read_bytes() == before
    assert package_cli(str(tree / SUBMITTER)) == 0  # by default into work/, which a checkout ignores
    assert (tmp_path / "work" / "dist" / "Acme.tar.gz").read_bytes() == before
    plant(tree, f"{RESULT}/README.md", "password: 'Tr0ub4dor&3-horse'")
    assert package_cli(str(tree / SUBMITTER), "--out", "out2") == 1
    assert package_cli(str(tree / SUBMITTER), "--dry-run") == 1


def test_json_document_from_the_real_command_line(tree, tmp_path):
    result = run_cli("package", str(tree / SUBMITTER), "--out", "out", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    digest = hashlib.sha256((tmp_path / "out" / "Acme.tar.gz").read_bytes()).hexdigest()
    assert document["schema_version"] == 1 and document["round"] == "v6.1"
    assert "carry the v6.1 LoadGen seeds" in document["detected"]
    assert document["findings"] == [] and document["errors"] == 0
    assert document["archive"] == "out/Acme.tar.gz" and document["sha256"] == digest
    assert document["file_count"] == len(files_in(tree)) and document["manifest"] == "out/Acme.manifest.json"
    assert "round v6.1 detected" in result.stderr


def test_json_document_lists_findings_and_no_archive(tree, tmp_path):
    plant(tree, PERF_LOG, f"token={HF_TOKEN}")
    result = run_cli("package", str(tree / SUBMITTER), "--round", "v6.1", "--json", cwd=tmp_path)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["archive"] is None and document["errors"] == 1
    [finding] = [finding for finding in document["findings"] if finding["severity"] == "error"]
    planted_at = len((tree / PERF_LOG).read_text().splitlines())
    assert (finding["rule"], finding["path"], finding["line"]) == ("LEAK-TOKEN", PERF_LOG, planted_at)
    assert HF_TOKEN not in result.stdout


def test_leak_rules_are_listed_with_the_hygiene_rules_package_reuses():
    from submitter.cli import cli

    result = CliRunner().invoke(cli, ["rules", "--json"])
    rules = {row["rule"]: row for row in json.loads(result.output)}
    assert {"LEAK-PRIVATE-KEY", "LEAK-TOKEN", "LEAK-SECRET", "LEAK-IP", "LEAK-HOSTNAME"} <= set(rules)
    assert {"LEAK-USER", "LEAK-HOME-PATH", "LEAK-DENIED"} <= set(rules)
    assert rules["LEAK-TOKEN"]["severity"] == {"package": "error"}
    # the checker's hygiene findings warn in `check` and stop `package`
    assert rules["HYG-FILE-SIZE"]["severity"] == {"check": "warning", "package": "error"}
    assert rules["LEAK-HOME-PATH"]["severity"] == {"package": "warning"}


LEAKS = [
    ("connect to 10.1.2.3:8000", "LEAK-IP"),
    ("ssh rhel@10.0.0.5 'nvidia-smi'", "LEAK-IP"),
    ("server 172.16.4.20 answered", "LEAK-IP"),
    ("listening on [fe80::1ff:fe23:4567:890a]:8000", "LEAK-IP"),
    (f"HF_TOKEN={HF_TOKEN}", "LEAK-TOKEN"),
    ("GH_TOKEN=ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "LEAK-TOKEN"),
    ("aws_access_key_id = AKIA" + "Z3XQ7RWLT5K2M4PA", "LEAK-TOKEN"),
    ("OPENAI_API_KEY=sk-proj-" + "Ab3dEfGh1jKlMnOpQrStUvWx", "LEAK-TOKEN"),
    ("SLACK=xoxb-" + "123456789012-abcdefghij", "LEAK-TOKEN"),
    (
        "curl -H 'Authorization: Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNr'",
        "LEAK-TOKEN",
    ),
    ('"password": "correct-horse-battery"', "LEAK-SECRET"),
    ("DB_SECRET=9fJ2kL0pQ8rS7tU6vW5x", "LEAK-SECRET"),
    ("pip install --index-url https://bob:s3cretPass@pypi.example.com/simple", "LEAK-SECRET"),
    ("-----BEGIN RSA PRIVATE KEY-----", "LEAK-PRIVATE-KEY"),
    ("model at /home/carol/models/llama", "LEAK-HOME-PATH"),
    ("HF_HOME=/root/.cache/huggingface", "LEAK-HOME-PATH"),
    ("open /Users/dave/Downloads/run.log", "LEAK-HOME-PATH"),
]

NOT_LEAKS = [
    "TensorRT 10.2.0.19, cuDNN v9.1.0.70, kernel 5.15.0.91",
    '"driver_version": "535.104.05.1", torch==2.1.0.1',
    "loopback 127.0.0.1, any 0.0.0.0, mask 255.255.255.0, docs 192.0.2.4 and 2001:db8::1 and ::1",
    "1.2.3.4.5 and 2024.01.15.1 and 01.02.03.04",
    "at 12:34:56, 2025-07-24T16:58:53-04:00, x[1::2], std::vector, mlperf::logging",
    "MAC 00:1a:2b:3c:4d:5e",
    'TOKEN = os.environ["HF_TOKEN"]; api_key="EMPTY"; password = getpass()',
    "'aws_secret_access_key': 'AWS_SECRET_ACCESS_KEY', 'api_key': '${API_KEY}', token: '<your-token>'",
    "token=get_token_from_environment(); max_tokens: 1024; api_key: ${API_KEY}",
    'password: "<your password>"; secret = "xxxxxxxxxxxx"',
    "pip install sk-learn-compatible-estimators",
    "the example key AKIAIOSFODNN7EXAMPLE",
    "result_first_token_mean_latency_ns and hf_tokenizer_config",
    "/home/user/models and ~/home/notes and ./home/x",
]


def findings_on(text: str) -> list[str]:
    line = ScannedLine("f.txt", 1, text, SENSITIVE)
    return [finding.rule for finding in leaks_module._findings(leaks_module._Counts(), line, AllowList())]


@pytest.mark.parametrize(("text", "rule"), LEAKS)
def test_each_kind_of_leak_is_found(text, rule):
    assert findings_on(text) == [rule]


@pytest.mark.parametrize("text", NOT_LEAKS)
def test_look_alikes_are_not_leaks(text):
    assert findings_on(text) == []


def test_a_secret_cut_by_the_reading_window_is_still_found(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks_module, "READ_CHUNK_BYTES", 64)
    (tmp_path / "one_line.json").write_text("[" + "1, " * 30 + f'"{HF_TOKEN}"' + ", 2" * 50 + "]\n")
    findings = scan_file(tmp_path, "one_line.json", SENSITIVE, AllowList())
    assert [(f.rule, f.line) for f in findings] == [("LEAK-TOKEN", 1)]


def test_a_file_full_of_addresses_is_summarised(tmp_path):
    (tmp_path / "hosts.txt").write_text("".join(f"10.0.{n // 250}.{n % 250 + 1}\n" for n in range(500)))
    findings = scan_file(tmp_path, "hosts.txt", SENSITIVE, AllowList())
    assert len(findings) == leaks_module.MAX_FINDINGS_PER_RULE_AND_FILE + 1
    assert findings[-1].line == leaks_module.MAX_FINDINGS_PER_RULE_AND_FILE + 1
    assert "480 more finding(s)" in findings[-1].message


def test_binary_files_are_listed_not_scanned(tree, tmp_path):
    (tree / SUBMITTER / "src" / "weights.bin").write_bytes(b"\0\1\2" + HF_TOKEN.encode())
    report = package(tree / SUBMITTER, tmp_path / "out")
    assert report.findings == [] and report.binary_files == [f"{SUBMITTER}/src/weights.bin"]


def test_short_names_of_this_machine_are_named_not_scanned(tree, tmp_path):
    report = package(
        tree / SUBMITTER, tmp_path / "out", sensitive=Sensitive.build(hosts=["vm"], users=["root"])
    )
    assert report.findings == []
    assert report.not_scanned == ("'vm' is too short to scan for (--deny vm scans for it)",)


def test_the_red_hat_tree_packages_with_its_home_paths_as_warnings(redhat_tree, tmp_path):
    report = package(redhat_tree, tmp_path / "out", round_name=None)
    assert report.check.rules.name == "v5.1" and report.errors == 0
    leaks = [f for f in report.findings if f.rule.startswith("LEAK-")]
    # The rest are the checker's warnings about the system descriptions (H100 memory written as HBM3, …).
    assert {f.rule for f in report.findings} - {f.rule for f in leaks} == {
        f.rule for f in report.check.findings
    }
    homes = {(f.path.split("/")[3], f.line, f.message.split("(")[-1]) for f in leaks}
    assert {f.rule for f in leaks} == {"LEAK-HOME-PATH"}
    assert homes == {
        ("XE8640_4xH100_vLLM", 1, "/home/rhel)"),
        ("XE8640_4xH100_vLLM", 3, "/home/rhel)"),
        ("IBM_Cloud_gx3-48x240x2l40s_vLLM", 1, "/home/vpcuser)"),
        ("IBM_Cloud_gx3-48x240x2l40s_vLLM", 4, "/home/vpcuser)"),
    }
    assert len(leaks) == 8  # Offline and Server accuracy.txt of both systems
    assert report.written is not None and len(report.written.files) == 68


def test_a_secret_and_a_60_mb_file_planted_in_a_copy_of_the_red_hat_tree_are_found(redhat_tree, tmp_path):
    root = copy_tree(redhat_tree, tmp_path / "copy")
    server_log = f"{H100}/Server/performance/run_1/mlperf_log_summary.txt"
    plant(root, server_log, f"HF_TOKEN={HF_TOKEN}", at=2)
    big = root / H100 / "Offline" / "performance" / "run_1" / "mlperf_log_trace.json"
    os.truncate(big, 60 * MB)
    report = package(root / "closed" / "RedHat", tmp_path / "out", round_name=None)
    errors = {(f.rule, f.path, f.line) for f in report.findings if f.severity == "error"}
    assert errors == {
        ("LEAK-TOKEN", server_log, 2),
        ("HYG-FILE-SIZE", f"{H100}/Offline/performance/run_1/mlperf_log_trace.json", None),
    }
    assert report.written is None and not (tmp_path / "out").exists()


def test_the_sources_staging_ships_pass_the_leak_scan(tmp_path: Path) -> None:
    """Every staged tree carries submitter's own sources: they must not trip its own leak rules."""
    from submitter.errors import SubmitterError
    from submitter.stage.sources import write_sources

    tree = tmp_path / "tree"
    try:
        write_sources("HEAD", tree / "open" / "Demo" / "src")
    except SubmitterError as exc:
        pytest.skip(f"not a git checkout: {exc}")
    result = run_cli(
        "package", str(tree), "--out", str(tmp_path / "out"), "--dry-run", "--json", cwd=tmp_path
    )
    findings = json.loads(result.stdout)["findings"]
    # This machine's host and user names are left out: they depend on where the test runs.
    content_rules = {"LEAK-TOKEN", "LEAK-SECRET", "LEAK-PRIVATE-KEY", "LEAK-IP", "LEAK-HOME-PATH"}
    assert [f for f in findings if f["rule"] in content_rules or f["rule"].startswith("HYG-")] == []


def test_a_tree_that_check_fails_is_not_packaged_and_the_errors_are_named(tree, tmp_path):
    accuracy = tree / RESULT / "accuracy" / "accuracy.txt"
    accuracy.write_text(re.sub(r"'rouge1': '?[0-9.]+'?", "'rouge1': 0.0", accuracy.read_text()))
    result = run_cli("package", str(tree / SUBMITTER), "--out", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert f"{RESULT}/accuracy/accuracy.txt:1: ACC-TARGET error ROUGE1: is 0.0" in result.stdout
    assert "1 result(s) invalid, `submitter check" in result.stderr
    assert not (tmp_path / "out").exists()


def test_strict_stops_on_a_warning_of_the_checker(tree, tmp_path):
    system = tree / SUBMITTER / "systems" / "sys_1xH100.json"
    system.write_text(json.dumps({**json.loads(system.read_text()), "cooling": "N/A"}))
    lenient = package(tree / SUBMITTER, tmp_path / "lenient")
    assert [(f.rule, f.severity) for f in lenient.findings] == [("SYS-PLACEHOLDER", "warning")]
    assert lenient.written is not None
    strict = package(tree / SUBMITTER, tmp_path / "strict", strict=True)
    assert [(f.rule, f.severity) for f in strict.findings] == [("SYS-PLACEHOLDER", "error")]
    assert strict.blocked and strict.written is None and not (tmp_path / "strict").exists()


def test_submitters_own_work_files_inside_the_tree_are_refused(tree, tmp_path):
    """A review, a staging folder or an archive of ours does not belong in the upload."""
    review = tree / SUBMITTER / "review"
    review.mkdir()
    (review / "review.md").write_text("# review\n")
    (review / "review.html").write_text("<html></html>\n")
    staging = tree / SUBMITTER / "submission-staging"
    (staging / "accuracy-logs").mkdir(parents=True)
    (staging / "accuracy-logs" / "mlperf_log_accuracy.json").write_text("[]\n")
    (staging / "manifest.json").write_text("{}\n")
    docs = tree / SUBMITTER / "documentation"
    for name in ("Acme.tar.gz", "Acme.tar.gz.sha256", "Acme.manifest.json"):
        (docs / name).write_text("x\n")
    (docs / "model.manifest.json").write_text("{}\n")  # the submitter's own file: no archive beside it
    report = package(tree / SUBMITTER, tmp_path / "out")
    found = {(f.rule, f.severity, f.path) for f in report.findings}
    assert found == {
        ("HYG-WORK-FILE", "error", f"{SUBMITTER}/review"),
        ("HYG-WORK-FILE", "error", f"{SUBMITTER}/submission-staging"),
        ("HYG-WORK-FILE", "error", f"{SUBMITTER}/documentation/Acme.tar.gz"),
        ("HYG-WORK-FILE", "error", f"{SUBMITTER}/documentation/Acme.tar.gz.sha256"),
        ("HYG-WORK-FILE", "error", f"{SUBMITTER}/documentation/Acme.manifest.json"),
    }
    assert report.written is None
    # `check` names them too, as warnings: they cost no result its verdict.
    assert {(f.rule, f.severity) for f in report.check.findings} == {("HYG-WORK-FILE", "warning")}
    assert all(row.valid for row in report.check.results)
