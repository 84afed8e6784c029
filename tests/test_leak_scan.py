"""The leak scan reads files in blocks and hands the rules only the lines its needles point at: the
findings must be those of the plain scan, every line through every rule, whatever the file holds."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import submitter.package.leaks as leaks
from submitter.package.allow import AllowList
from submitter.package.leaks import CHUNK_OVERLAP_CHARS, LEAK_RULES, RULE_NEEDLES, ScannedLine, Sensitive
from submitter.package.patterns import (
    HOME_PATH_HINTS,
    PRIVATE_KEYS,
    SECRET_ASSIGNMENTS,
    TOKENS,
    LeakPattern,
    is_secret_value,
)
from submitter.package.reading import ASCII_LOOKALIKES, Candidate, Lines, Piece, Trigger, segments
from submitter.rule_registry import Finding

SENSITIVE = Sensitive.build(
    hosts=["gpu-node-7.corp.example.com", "gpu-node-7"], users=["alice"], denied=["Acme", "Zürich"]
)
HF_TOKEN = "hf_" + "Qm7XkP2vLs9TzR4wNc8YbJ5eHd3UaG6fKi"  # made up, in the real format

# Leaks, look-alikes, and what makes reading hard: characters that lower-case to ASCII or match it in
# any case, text that is not UTF-8, Windows line ends.
SNIPPETS = [
    HF_TOKEN,
    "GH_TOKEN=ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws_access_key_id = AKIA" + "Z3XQ7RWLT5K2M4PA",
    "OPENAI_API_KEY=sk-proj-" + "Ab3dEfGh1jKlMnOpQrStUvWx",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "-H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNr'",
    '"password": "correct-horse-battery"',
    "DB_SECRET=9fJ2kL0pQ8rS7tU6vW5x",
    "api_key\u00a0= '9fJ2kL0pQ8rS7tU6'",
    "https://bob:s3cretPass@pypi.example.com/simple",
    "-----BEGIN RSA PRIVATE KEY-----",
    "/home/carol/models",
    "/root/.cache",
    "C:\\Users\\dave\\run.log",
    "ssh rhel@10.0.0.5",
    "[fe80::1ff:fe23:4567:890a]:8000",
    "route via fd00:1:2::3 and 1.2.3.4",
    "TensorRT 10.2.0.19",
    "12:34:56",
    "gpu-node-7.corp.example.com",
    "ALICE alice",
    "acme ACME zürich ZÜRICH",
    "to\u212aen = 'abcdefgh12'",
    "token_count=1 pa\u017fsword = 'hunter2hunter2'",
    "\u0130stanbul",
    "\u0661.\u0662.\u0663.\u0664",
    "max_tokens: 1024 tokenizer",
    "\ufffd",
]
PIECES = st.one_of(
    st.sampled_from(SNIPPETS).map(str.encode),
    st.sampled_from([b"\n", b"\r\n", b" ", b"=", b'"', b"\t", b"\xff", b"\xe2\x84", b"x" * 70]),
    st.text(alphabet="abcdefhkosty_-.:/0123456789 \n", max_size=20).map(str.encode),
)


def reference_findings(root: Path, path: str, sensitive: Sensitive, size: int) -> list[Finding]:
    """The scan as it was before blocks and needles: every line through every rule, a line longer than
    `size` bytes in pieces of `size` bytes, each after the end of the previous one."""
    counts, findings = leaks._Counts(), []
    with (root / path).open("rb") as stream:
        number, carry = 1, ""
        piece = stream.readline(size)
        while piece:
            following = stream.readline(size)
            ends_line = piece.endswith(b"\n") or not following
            text = piece.decode("utf-8", errors="replace")
            line = ScannedLine(path, number, carry + text, sensitive, len(carry), not ends_line)
            findings.extend(leaks._findings(counts, line, AllowList()))
            number, carry = (number + 1, "") if ends_line else (number, text[-CHUNK_OVERLAP_CHARS:])
            piece = following
    return findings + leaks._overflow_findings(counts, path)


def scan(folder: Path, content: bytes, sensitive: Sensitive = SENSITIVE) -> list[Finding] | None:
    (folder / "f.txt").write_bytes(content)
    return leaks.scan_file(folder, "f.txt", sensitive, AllowList())


def assert_same_as_reference(folder: Path, content: bytes, sensitive: Sensitive = SENSITIVE) -> None:
    found = scan(folder, content, sensitive)
    assert found == reference_findings(folder, "f.txt", sensitive, leaks.READ_CHUNK_BYTES)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(PIECES, max_size=40), size=st.sampled_from([16, 37, 64, 200, 1 << 20]))
def test_any_file_gives_the_findings_of_every_line_through_every_rule(tmp_path, monkeypatch, parts, size):
    monkeypatch.setattr(leaks, "READ_CHUNK_BYTES", size)
    assert_same_as_reference(tmp_path, b"".join(parts))


def test_a_secret_across_a_block_boundary_is_found_at_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks, "READ_CHUNK_BYTES", 64)
    lines = [f"line {n}: nothing to see".encode() for n in range(9)]
    content = b"\n".join([*lines, f"export HF_TOKEN={HF_TOKEN}".encode(), *lines]) + b"\n"
    assert content.index(b"hf_") // 64 != (content.index(b"hf_") + len(HF_TOKEN)) // 64  # cut by a block
    found = scan(tmp_path, content)
    assert [(f.rule, f.line) for f in found] == [("LEAK-TOKEN", 10)]
    assert_same_as_reference(tmp_path, content)


def test_windows_line_ends_keep_the_line_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks, "READ_CHUNK_BYTES", 64)
    content = b"first\r\nsecond\r\nssh rhel@10.0.0.5\r\n" + b"filler line\r\n" * 20 + b"/home/carol/x\r\n"
    found = scan(tmp_path, content)
    assert [(f.rule, f.line) for f in found] == [("LEAK-IP", 3), ("LEAK-HOME-PATH", 24)]
    assert_same_as_reference(tmp_path, content)


@pytest.mark.parametrize("size", [64, 1 << 20])
def test_a_leak_on_the_last_line_without_a_newline_is_found(tmp_path, monkeypatch, size):
    monkeypatch.setattr(leaks, "READ_CHUNK_BYTES", size)
    content = b"one\ntwo\n" + b"x" * 100 + b"\n" + f"HF_TOKEN={HF_TOKEN}".encode()
    assert [(f.rule, f.line) for f in scan(tmp_path, content)] == [("LEAK-TOKEN", 4)]
    assert_same_as_reference(tmp_path, content)


def test_lines_longer_than_a_block_come_in_overlapping_pieces_and_the_numbers_go_on(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks, "READ_CHUNK_BYTES", 64)
    long_line = b"[" + b"1, " * 30 + f'"{HF_TOKEN}"'.encode() + b", 2" * 50 + b"]\n"
    exactly_a_block = b"y" * 63 + b"\n"  # 64 bytes with its newline: one piece, not two
    one_more = b"z" * 64 + b"\n"  # 65: a piece of 64 bytes, then the newline alone
    content = long_line + exactly_a_block + one_more + b"connect to 10.1.2.3\n" + long_line
    found = scan(tmp_path, content)
    assert [(f.rule, f.line) for f in found] == [("LEAK-TOKEN", 1), ("LEAK-IP", 4), ("LEAK-TOKEN", 5)]
    assert_same_as_reference(tmp_path, content)


def test_segments_split_long_lines_as_readline_does():
    size = 8
    chunks = [b"ab\ncdefghijklmn", b"opq\nrs", b"tuvwxyz\n", b"12345678", b"\nend"]
    parts = list(segments(chunks, size))
    assert parts == [
        Lines(b"ab\n"),
        Piece(b"cdefghij", ends_line=False),
        Piece(b"klmnopq\n", ends_line=True),
        Piece(b"rstuvwxy", ends_line=False),
        Piece(b"z\n", ends_line=True),
        Piece(b"12345678", ends_line=False),
        Piece(b"\n", ends_line=True),
        Lines(b"end"),
    ]


def test_characters_that_lower_case_to_ascii_send_their_block_to_every_rule(tmp_path):
    # The Kelvin sign lowers to k and long s matches s in any case: the plain scan reports both lines.
    content = "x = 1\nto\u212aen = 'abcdefgh12'\ntoken_count=1 pa\u017fsword = 'hunter2hunter2'\n".encode()
    found = scan(tmp_path, content)
    assert [(f.rule, f.line) for f in found] == [("LEAK-SECRET", 2), ("LEAK-SECRET", 3)]
    assert_same_as_reference(tmp_path, content)


def test_the_ascii_look_alikes_are_all_the_characters_that_stand_for_ascii():
    """Lower-cased bytes show every match only if no other character lowers to ASCII or matches it."""
    any_case_ascii = re.compile(r"[\x00-\x7f]", re.IGNORECASE)
    found = {
        chr(code)
        for code in range(0x80, sys.maxunicode + 1)
        if any(c.isascii() for c in chr(code).lower()) or any_case_ascii.fullmatch(chr(code))
    }
    assert found == set(ASCII_LOOKALIKES)


def test_addresses_in_digits_other_than_ascii_are_not_reported():
    # The IPv4 needle looks for ASCII digits: that is all `ipaddress` accepts.
    line = ScannedLine("f.txt", 1, "\u0661\u0660.\u0660.\u0660.\u0665 and 10.0.0.5", SENSITIVE)
    assert [p.matched for p in leaks.ip_addresses(line)] == ["10.0.0.5"]


def test_every_rule_has_needles_and_every_hint_is_a_lower_case_ascii_needle():
    assert set(RULE_NEEDLES) == {rule.id for rule in LEAK_RULES}
    hints = [hint for pattern in (*PRIVATE_KEYS, *TOKENS, *SECRET_ASSIGNMENTS) for hint in pattern.hints]
    for hint in [*hints, *HOME_PATH_HINTS]:
        assert hint.isascii() and hint == hint.lower()


def test_a_line_goes_at_least_to_the_rules_whose_needles_it_holds():
    trigger = leaks._trigger(SENSITIVE)
    block = (
        b"plain\nHF_TOKEN=hf_x\nplain\nGPU-NODE-7 and gpu-node-7\n\xff\xfeplain\nssh 10.0.0.5 /root/x\n"
        b"key AKIA and akia\nzurich ZURICH\nhf_config and tokenizer\n"
    )
    candidates = list(trigger.lines(block))
    assert [c.index for c in candidates] == [1, 3, 5, 6, 7]
    expected = [
        {"LEAK-SECRET"},  # token=, where hf_x is too short for a token
        {"LEAK-HOSTNAME"},  # host names are matched as written
        {"LEAK-HOME-PATH", "LEAK-IP"},
        {"LEAK-TOKEN"},  # the AWS prefixes in capitals, as the regex wants them
        {"LEAK-DENIED"},  # "Zürich" is looked for as "rich", in any case
    ]
    for candidate, rules in zip(candidates, expected, strict=True):
        assert candidate.rules is not None and rules <= candidate.rules
    assert list(Trigger(None).lines(b"a\nb")) == [Candidate(0, b"a\n", None), Candidate(1, b"b", None)]


@pytest.mark.parametrize(
    ("sensitive", "prefiltered"),
    [
        (Sensitive.build(denied=["Zürich"]), True),  # its longest ASCII run, "rich", stands for it
        (Sensitive.build(denied=["東京"]), False),  # nothing can: every line goes to the rules
        (Sensitive.build(hosts=["node\ufffd7"]), False),
    ],
)
def test_words_beyond_ascii_are_found_as_the_plain_scan_finds_them(tmp_path, sensitive, prefiltered):
    assert leaks._trigger(sensitive).everything != prefiltered
    content = "zürich and ZÜRICH\n東京 office\nnode\ufffd7 and node\xff7\n".encode()
    assert_same_as_reference(tmp_path, content, sensitive)
    assert_same_as_reference(tmp_path, content + b"node\xff7\n", sensitive)


def test_binary_means_a_nul_byte_in_the_first_8192_bytes(tmp_path):
    assert scan(tmp_path, b"x" * 8191 + b"\0" + HF_TOKEN.encode()) is None
    late_nul = b"x" * 8192 + b"\0\n" + HF_TOKEN.encode() + b"\n"
    assert [(f.rule, f.line) for f in scan(tmp_path, late_nul) or []] == [("LEAK-TOKEN", 2)]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_listed_as_not_regular_and_never_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.log")  # no writer: a plain open or read would wait for ever
    (tmp_path / "notes.txt").write_text("ssh rhel@10.0.0.5\n")
    result = leaks.scan_tree(
        tmp_path, {"pipe.log": 0, "notes.txt": 18}, ["pipe.log", "notes.txt"], SENSITIVE, AllowList()
    )
    assert result.not_regular == {"pipe.log": "a named pipe (FIFO)"}
    assert result.scanned_files == 1 and result.binary_files == []
    assert [(f.rule, f.path) for f in result.findings] == [("LEAK-IP", "notes.txt")]


def test_the_red_hat_tree_gives_the_findings_of_the_plain_scan(redhat_tree):
    root = redhat_tree.parents[1]
    sensitive = Sensitive.build(hosts=["XE8640"], users=["rhel"], denied=["vllm"])
    for path in sorted(p for p in redhat_tree.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        found = leaks.scan_file(root, relative, sensitive, AllowList())
        if found is not None:
            assert found == reference_findings(root, relative, sensitive, leaks.READ_CHUNK_BYTES)


# The regexes as they were written before they were reordered for speed: the same matches are required.
_WORD = "(?<![A-Za-z0-9_-])"
_NOT_WORD = "(?![A-Za-z0-9_-])"
_SECRET_KEY = (
    "(?i:password|passwd|passphrase|secret|token|apikey|api_key|api\\-key|accesskey|access_key|access\\-key"
    "|privatekey|private_key|private\\-key)"
)
_JWT = r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
ORIGINAL_REGEXES = {
    "huggingface-token": rf"{_WORD}(?P<secret>hf_[A-Za-z0-9]{{30,}}){_NOT_WORD}",
    "github-token": (
        rf"{_WORD}(?P<secret>gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}){_NOT_WORD}"
    ),
    "aws-access-key-id": (
        r"(?<![A-Z0-9])(?P<secret>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16})(?![A-Z0-9])"
    ),
    "openai-style-key": rf"{_WORD}(?P<secret>sk-(?:[a-z]+-)*[A-Za-z0-9_-]{{20,}}){_NOT_WORD}",
    "google-api-key": rf"{_WORD}(?P<secret>AIza[0-9A-Za-z_-]{{35}}){_NOT_WORD}",
    "slack-token": rf"{_WORD}(?P<secret>xox[abposr]-[A-Za-z0-9-]{{10,}}){_NOT_WORD}",
    "bearer-token": r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)",
    "basic-auth": r"(?i:\bauthorization[\"']?\s*[:=]\s*[\"']?basic)\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)",
    "json-web-token": rf"{_WORD}(?P<secret>{_JWT})",
    "quoted-secret": rf"{_SECRET_KEY}[\"']?\s*[:=]\s*(?P<quote>[\"'])(?P<secret>[^\"'\s]{{8,}})(?P=quote)",
    "bare-secret": rf"{_SECRET_KEY}\s*[:=]\s*(?P<secret>[A-Za-z0-9_+/=-]{{16,}})(?![\w(.\[])",
}
PATTERNS: dict[str, LeakPattern] = {pattern.id: pattern for pattern in (*TOKENS, *SECRET_ASSIGNMENTS)}
TEXTS = st.lists(
    st.one_of(
        st.sampled_from([*SNIPPETS, "hf_", "ghp_", "github_pat_", "AKIA", "sk-", "AIza", "xoxb-", "eyJ"]),
        st.text(alphabet="aAbBeEhHkKpPsStTyYzZ019_-.:=/+'\" \t\u00a0\u017f\u212a\u0130\u0131", max_size=12),
        st.text(
            alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=8, max_size=40
        ),
    ),
    max_size=12,
).map("".join)


def matches(regex: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(match.span(), match.groupdict()) for match in regex.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_the_regexes_reordered_for_speed_match_as_the_originals(text):
    for pattern_id, original in ORIGINAL_REGEXES.items():
        assert matches(PATTERNS[pattern_id].regex, text) == matches(re.compile(original), text), pattern_id


def test_the_reordered_regexes_keep_the_originals_on_the_known_leaks():
    for text in [*SNIPPETS, "x" + HF_TOKEN, "-" + HF_TOKEN, HF_TOKEN + "-", "AAKIA" + "Z3XQ7RWLT5K2M4PA"]:
        for pattern_id, original in ORIGINAL_REGEXES.items():
            assert matches(PATTERNS[pattern_id].regex, text) == matches(re.compile(original), text)


# Each rule on lines of the published results repositories: one line it must report (a leak) and near
# misses it must not. v5.1 is mlcommons/inference_results_v5.1, v6.0 the v6.0 results as mirrored
# (gbeezybez/inference_results_v6.0); each line is quoted with its path, where VLLM51 stands for
# v5.1 closed/Dell_MangoBoost/code/llama2-70b-99.9/amd/setup/vllm and VLLM60 for
# v6.0 closed/Lambda_SIT/code/qwen3-vl-235b-a22b/vllm/vllm (copies of vLLM). Where a published line holds a
# real credential, its value is replaced by made-up characters of the same shape; where no published tree
# holds a case, it is constructed, and the comment says so.
NOTHING_SENSITIVE = Sensitive()


@dataclass(frozen=True)
class Case:
    rule: str
    text: str
    leak: bool  # True: the rule reports the line; False: a near miss it must let pass
    sensitive: Sensitive = NOTHING_SENSITIVE


REDHAT_USER = Sensitive.build(users=["rhel"])
GOOGLE_HOST = "mlperf-inference-tohaowu-google-com-x86-64-14183"
HEX32 = "3c9e1f0a7b2d4e6f8a1c3e5b7d9f0a2c"  # made up
HEX64 = "9d4b7e2a1f6c3058e7d2b9a4c1f8e3d6a0b5c7e9f2d4a6b8c1e3f5a7b9d0c2e4"  # made up

REAL_CASES = [
    # --- LEAK-PRIVATE-KEY: no published tree holds a key; the true case is constructed.
    Case("LEAK-PRIVATE-KEY", "-----BEGIN OPENSSH PRIVATE KEY-----", True),
    # v6.0 closed/Dell/src/code/dlrm-v3/README.md:50 (words about a key, not a key)
    Case(
        "LEAK-PRIVATE-KEY",
        "# Initialize SSH agent and upload your private key so Docker can clone private repos",
        False,
    ),
    Case("LEAK-PRIVATE-KEY", "-----BEGIN PUBLIC KEY-----", False),  # constructed: a public key is no secret
    # --- LEAK-TOKEN
    # v5.1 closed/The_Stage/code/stable-diffusion-xl/text_to_image_using_loadgen/README.md:49 publishes a
    # real JWT access token ({"sub": "apiUser", "tokenType": "access", "exp": 1785244270, ...}); here a
    # token of the same shape with made-up claims and signature.
    Case(
        "LEAK-TOKEN",
        "thestage config set --api-token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhcGlVc2VyIiwidXNlcklkIjo0Mn0"
        ".Qm7XkP2vLs9TzR4wNc8YbJ5eHd3UaG6fKi",
        True,
    ),
    # VLLM51/examples/online_serving/cohere_rerank_client.py:22
    Case("LEAK-TOKEN", 'co2 = cohere.ClientV2("sk-fake-key", base_url="http://localhost:8000")', False),
    # v5.1 open/HPE/code/llmlib/cores/http_async_client.py:597
    Case("LEAK-TOKEN", "                'Authorization': 'Bearer dummy'", False),
    # VLLM51/benchmarks/disagg_benchmarks/disagg_prefill_proxy_server.py:14
    Case("LEAK-TOKEN", """    "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY')}\"""", False),
    # VLLM51/docs/source/contributing/model/multimodal.md:363
    Case("LEAK-TOKEN", "    hf_processor_mm_kwargs: Mapping[str, object],", False),
    # --- LEAK-SECRET
    # v5.1 open/AMD/setup/Dockerfile.model_and_dataset:23, an rclone remote with its secret access key in 64
    # hex digits: with a key of one's own (made up here) it is a leak ...
    Case(
        "LEAK-SECRET",
        f"&& rclone config create mlc-inference s3 provider=Cloudflare access_key_id={HEX32} "
        f"secret_access_key={HEX64} endpoint=https://{HEX32}.r2.cloudflarestorage.com",
        True,
    ),
    # ... and as published there (and in 90 more files of both rounds), with the read-only key MLCommons
    # gives everyone in its reference implementations' instructions, it is not.
    Case(
        "LEAK-SECRET",
        "&& rclone config create mlc-inference s3 provider=Cloudflare access_key_id="
        "f65ba5eef400db161ea49967de89f47b secret_access_key="
        "fbea333914c292b854f14d3fe232bad6c5407bf0ab1bebf78833c2b359bdfd2b "
        "endpoint=https://c2686074cb2caf5cbaf6d134bdba8b47.r2.cloudflarestorage.com",
        False,
    ),
    # constructed: the RedHat line below with a value in its place
    Case(
        "LEAK-SECRET",
        "            'aws_secret_access_key': 'q7Vd2kR9sLx0PzT4mB8nW1cY6hJ3fG5aE2uK9oQs',",
        True,
    ),
    # v6.0 closed/RedHat/src/gpt-oss-120b/scripts/run_submission.py:203: the NAME of the variable
    Case("LEAK-SECRET", "            'aws_secret_access_key': 'AWS_SECRET_ACCESS_KEY',", False),
    # VLLM51/docs/source/deployment/k8s.md:47
    Case("LEAK-SECRET", '        token: "REPLACE_WITH_TOKEN"', False),
    # VLLM51/docs/source/serving/openai_compatible_server.md:19
    Case("LEAK-SECRET", '    api_key="token-abc123",', False),
    # VLLM51/tests/utils.py:69
    Case(
        "LEAK-SECRET",
        '    DUMMY_API_KEY = "token-abc123"  # vLLM\'s OpenAI server does not need API key',
        False,
    ),
    # VLLM51/examples/online_serving/cohere_rerank_client.py:10
    Case("LEAK-SECRET", 'co = cohere.Client(base_url="http://localhost:8000", api_key="sk-fake-key")', False),
    # VLLM51/tests/models/fixtures/pixtral_chat.json:1
    Case("LEAK-SECRET", '"rank": 4, "decoded_token": "-covered"}, "77187": {"logprob": -5.47', False),
    # VLLM51/vllm/tracing.py:108
    Case(
        "LEAK-SECRET", '    GEN_AI_LATENCY_TIME_TO_FIRST_TOKEN = "gen_ai.latency.time_to_first_token"', False
    ),
    # v5.1 closed/Dell_MangoBoost/code/llama2-70b-99.9/amd/tools/amd_quark-0.8.0rc2/docs/html/_static/
    # scripts/bootstrap.js.map:1
    Case(
        "LEAK-SECRET",
        "const EVENT_KEY$2 = `.${DATA_KEY$2}`;\\nconst DATA_API_KEY = '.data-api';\\nconst EVENT_ACTI",
        False,
    ),
    # v5.1 closed/Intel/code/retinanet/pytorch-cpu/retinanet-env/rapidjson/bin/data/webapp.json:41
    Case("LEAK-SECRET", '        "dataStorePassword": "dataStoreTestQuery",', False),
    # v5.1 open/AMD/code/llama3_1-405b_finetuned/mlperf_finetune/LLaMA-Factory/data/kto_en_demo.json:2237
    Case(
        "LEAK-SECRET",
        "<pre>git ftp -u anonymous ftp://username:password@ftp.example.com/Repository</pre>",
        False,
    ),
    # v6.0 closed/NVIDIA/code/llmlib/launch_server.py:123
    Case(
        "LEAK-SECRET",
        '        "o200k_base.tiktoken": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",',
        False,
    ),
    # v6.0 closed/Google/src/qwen3-vl-235b-a22b/vllm/output/mlperf_log_benchmark.rank0.txt:3 and :30
    Case(
        "LEAK-SECRET",
        "model=Model(repo_id='RedHatAI/Qwen3-VL-235B-A22B-Instruct-FP8-dynamic', token='/work/build/data/hub/"
        "models--nvidia--Qwen3-VL-235B-A22B-Instruct-NVFP4-MLPerf-Inference-Closed-V6.0', revision='main')",
        False,
    ),
    Case(
        "LEAK-SECRET",
        "'NATS_SERVER': 'nats://127.0.0.1:4222', 'HF_TOKEN': '/work/build/data/hub/models--nv'",
        False,
    ),
    # VLLM60/vllm/entrypoints/serve/instrumentator/static/swagger-ui-bundle.js:2
    Case(
        "LEAK-SECRET",
        'Re.createElement("label",{htmlFor:"auth_password"},"Password:"),$?Re.createElement("code",null,"',
        False,
    ),
    # v6.0 closed/Dell/src/code/qwen3-vl-235b-a22b/vllm/scripts/benchmarks/slurm/1x8xb300/server.sh:15
    Case("LEAK-SECRET", 'HF_TOKEN=${HF_TOKEN:-""}', False),
    # VLLM51/docs/source/deployment/frameworks/skypilot.md:74
    Case("LEAK-SECRET", 'HF_TOKEN="your-huggingface-token" sky launch serving.yaml --env HF_TOKEN', False),
    # VLLM51/docs/source/deployment/docker.md:15
    Case("LEAK-SECRET", '    --env "HUGGING_FACE_HUB_TOKEN=<secret>" \\', False),
    # v6.0 closed/RedHat/src/gpt-oss-120b/setup/llm-d/H200/GRAFANA_INSTALLATION.md:257
    Case("LEAK-SECRET", "      admin_password: YOUR_SECURE_PASSWORD", False),
    # VLLM60/docs/deployment/frameworks/hf_inference_endpoints.md:36
    Case(
        "LEAK-SECRET",
        '        api_key=os.environ["HF_TOKEN"],  # https://huggingface.co/settings/tokens',
        False,
    ),
    # --- LEAK-IP
    # v5.1 closed/Supermicro/code/llama2-70b-99.9/README.md:218
    Case("LEAK-IP", '    --sut_server_addr "http://10.4.16.1:8000,http://10.4.16.2:8000"', True),
    # v5.1 closed/ASUSTeK/power/server-ipp1-1469.cfg:56
    Case("LEAK-IP", "devicePort: 10.117.41.199", True),
    # v6.0 closed/Cisco/setup/build_scripts/build_steps.sh:90
    Case("LEAK-IP", "            --build-arg http_proxy=http://173.36.224.108:80/ \\", True),
    # v6.0 closed/HPE/systems/HPE_Proliant_DL385_RTX_PRO_6000_PCIe_96GBx4_TRT_10_11_0_33_TRT.json:41
    Case(
        "LEAK-IP", '    "other_software_stack": "TensorRT 10.11.0.33, CUDA 13.0, Driver 580.105.09",', False
    ),
    # v6.0 closed/Google/src/qwen3-vl-235b-a22b/vllm/output/mlperf_log_benchmark.rank0.txt:1
    Case("LEAK-IP", "the endpoint settings are: url='http://127.0.0.1:8000/v1' api_key=''", False),
    # VLLM51/vllm/utils.py:610 and :620: public
    # DNS resolvers, which name no host of the submitter's
    Case("LEAK-IP", '        s.connect(("8.8.8.8", 80))  # Doesn\'t need to be reachable', False),
    Case(
        "LEAK-IP", '        s.connect(("2001:4860:4860::8888", 80))  # Doesn\'t need to be reachable', False
    ),
    # v5.1 closed/ASUSTeK/docker/poetry.lock:1514: a version inside a wheel's name
    Case(
        "LEAK-IP",
        '    {file = "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl", hash = "sha256:1"},',
        False,
    ),
    # --- LEAK-HOSTNAME, as the machine that ran v6.0 closed/Google's log would package it
    # v6.0 closed/Google/src/qwen3-vl-235b-a22b/vllm/output/mlperf_log_benchmark.rank0.txt:30
    Case(
        "LEAK-HOSTNAME",
        f"'HOSTNAME': '{GOOGLE_HOST}', 'NATS_SERVER'",
        True,
        Sensitive.build(hosts=[GOOGLE_HOST]),
    ),
    # the same line packaged on a sibling machine, numbered 1418: a host name matches whole
    Case(
        "LEAK-HOSTNAME",
        f"'HOSTNAME': '{GOOGLE_HOST}', 'NATS_SERVER'",
        False,
        Sensitive.build(hosts=[GOOGLE_HOST[:-1]]),
    ),
    # --- LEAK-USER, as the user rhel would package v5.1 closed/RedHat
    # v5.1 closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Server/accuracy/accuracy.txt:1
    Case("LEAK-USER", "[nltk_data] Downloading package punkt to /home/rhel/nltk_data...", True, REDHAT_USER),
    # v5.1 closed/RedHat/systems/XE8640_4xH100_vLLM.json:34: user names match as written, RHEL is the system
    Case("LEAK-USER", '  "framework"                         : "vLLM 0.10.0, RHEL 9.6",', False, REDHAT_USER),
    # --- LEAK-HOME-PATH
    # v5.1 closed/RedHat/results/IBM_Cloud_gx3-48x240x2l40s_vLLM/llama3.1-8b/Server/accuracy/accuracy.txt:1
    Case("LEAK-HOME-PATH", "[nltk_data] Downloading package punkt to /home/vpcuser/nltk_data...", True),
    # v5.1 closed/Dell/docker/Dockerfile.user:50
    Case(
        "LEAK-HOME-PATH",
        '    && echo -e "\\nssh-add /home/${USER}/.ssh/* > /dev/null 2>&1" >> /home/${USER}/.bashrc',
        False,
    ),
    # VLLM51/docs/dev-docker/README.md:120
    Case("LEAK-HOME-PATH", "For example, `-v /home/username/models:/data` would store the models", False),
    # --- LEAK-DENIED
    # v5.1 closed/RedHat/systems/IBM_Cloud_gx3-48x240x2l40s_vLLM.json:41, with --deny ibm
    Case(
        "LEAK-DENIED",
        '  "sw_notes": "IBM Cloud instance gx3-48x240x2l40s ( 1 GPU used), RHEL 9.6, vllm 0.10.0"',
        True,
        Sensitive.build(denied=["ibm"]),
    ),
    # the accuracy.txt line above with --deny user: a denied word matches whole, not inside vpcuser
    Case(
        "LEAK-DENIED",
        "[nltk_data] Downloading package punkt to /home/vpcuser/nltk_data...",
        False,
        Sensitive.build(denied=["user"]),
    ),
]


def rules_on(case: Case) -> list[str]:
    line = ScannedLine("f.txt", 1, case.text, case.sensitive)
    return [finding.rule for finding in leaks._findings(leaks._Counts(), line, AllowList())]


@pytest.mark.parametrize(
    "case",
    REAL_CASES,
    ids=[f"{c.rule}-{'leak' if c.leak else 'near-miss'}-{n}" for n, c in enumerate(REAL_CASES)],
)
def test_each_rule_reports_its_leak_and_lets_its_near_miss_pass(case):
    found = rules_on(case)
    if case.leak:
        assert case.rule in found, found
    else:
        assert case.rule not in found, found


def test_every_leak_rule_has_a_leak_and_a_near_miss():
    covered = {(case.rule, case.leak) for case in REAL_CASES}
    assert {(rule.id, leak) for rule in LEAK_RULES for leak in (True, False)} <= covered


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("AWS_SECRET_ACCESS_KEY", False),  # the name of an environment variable
        ("os.environ['HF_TOKEN']", False),
        ("${HF_TOKEN}", False),
        ("<your-key>", False),
        ("********", False),
        ("gen_ai.latency.time_to_first_token", False),  # a dotted name
        ("/work/build/data/hub", False),  # a path
        ("https://example.org/x", False),  # an address: url-credentials looks at its password
        ("q7Vd2kR9sLx0PzT4mB8nW1cY6hJ3fG5aE2uK9oQs", True),
        ("correct-horse-battery", True),
        ("Tr0ub4dor&3-horse", True),
    ],
)
def test_a_value_is_told_from_a_name_or_a_placeholder(value, secret):
    assert is_secret_value(value) is secret
