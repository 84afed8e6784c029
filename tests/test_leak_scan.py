"""The leak scan reads files in blocks and hands the rules only the lines its needles point at: the
findings must be those of the plain scan, every line through every rule, whatever the file holds."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import submitter.package.leaks as leaks
from submitter.package.allow import AllowList
from submitter.package.leaks import CHUNK_OVERLAP_CHARS, LEAK_RULES, RULE_NEEDLES, ScannedLine, Sensitive
from submitter.package.patterns import HOME_PATH_HINTS, PRIVATE_KEYS, SECRET_ASSIGNMENTS, TOKENS, LeakPattern
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
