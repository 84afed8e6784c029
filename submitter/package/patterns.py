"""Every pattern the leak scan looks for, in one table: what it matches, what it is, and which part is secret.

The rules in `leaks.py` decide what a match means (and whether it is a false positive); this module
only holds the regular expressions, so adding a token format is one row here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


def mixes_letters_and_digits(value: str) -> bool:
    """Real keys are random: upper and lower case letters and digits. Words joined by dashes are not."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


# Values people write where a secret would go, which are not secrets themselves.
PLACEHOLDER_MARKERS = (
    "xxxx",
    "****",
    "....",
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "redacted",
    "dummy",
    "secret_here",
    "token_here",
)


def not_a_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        not value.startswith(("$", "<", "{", "%(", "[", "@"))
        and len(set(value)) > 2
        and not any(marker in lowered for marker in PLACEHOLDER_MARKERS)
    )


@dataclass(frozen=True)
class LeakPattern:
    """One kind of secret. `secret` names the regex group to redact; without it the match is shown whole.

    `hints` are lower-case strings of which every match holds one: a line without any is skipped
    without running the regex, which keeps the scan of large logs fast (`in` is many times quicker).
    """

    id: str
    description: str
    hints: tuple[str, ...]
    regex: re.Pattern[str]
    secret: str | None = "secret"
    accept: Callable[[str], bool] | None = None  # a second look at the secret group, against false positives

    def may_match(self, lowered_line: str) -> bool:
        return any(hint in lowered_line for hint in self.hints)


def _pattern(expression: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(expression, flags)


# Keys and tokens never start in the middle of a word.
_START = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"

PRIVATE_KEYS: tuple[LeakPattern, ...] = (
    LeakPattern(
        "pem-private-key",
        "a private key block",
        ("private key",),
        _pattern(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        secret=None,  # the header is not secret, and shows what was found
    ),
    LeakPattern(
        "putty-private-key",
        "a PuTTY private key",
        ("putty-user-key",),
        _pattern(r"PuTTY-User-Key-File-\d+:"),
        secret=None,
    ),
)

TOKENS: tuple[LeakPattern, ...] = (
    LeakPattern(
        "huggingface-token",
        "a Hugging Face access token",
        ("hf_",),
        _pattern(rf"{_START}(?P<secret>hf_[A-Za-z0-9]{{30,}}){_END}"),
    ),
    LeakPattern(
        "github-token",
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _pattern(rf"{_START}(?P<secret>gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}){_END}"),
    ),
    LeakPattern(
        "aws-access-key-id",
        "an AWS access key id",
        ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
        _pattern(r"(?<![A-Z0-9])(?P<secret>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16})(?![A-Z0-9])"),
        accept=not_a_placeholder,  # AWS's documentation key ends in EXAMPLE
    ),
    LeakPattern(
        "openai-style-key",
        "an API key of the sk-… kind (OpenAI, Anthropic and others)",
        ("sk-",),
        _pattern(rf"{_START}(?P<secret>sk-(?:[a-z]+-)*[A-Za-z0-9_-]{{20,}}){_END}"),
        accept=mixes_letters_and_digits,
    ),
    LeakPattern(
        "google-api-key",
        "a Google API key",
        ("aiza",),
        _pattern(rf"{_START}(?P<secret>AIza[0-9A-Za-z_-]{{35}}){_END}"),
    ),
    LeakPattern(
        "slack-token",
        "a Slack token",
        ("xox",),
        _pattern(rf"{_START}(?P<secret>xox[abposr]-[A-Za-z0-9-]{{10,}}){_END}"),
    ),
    LeakPattern(
        "slack-webhook",
        "a Slack webhook address",
        ("hooks.slack.com",),
        _pattern(r"https://hooks\.slack\.com/services/(?P<secret>[A-Za-z0-9/_-]{20,})"),
    ),
    LeakPattern(
        "bearer-token",
        "a bearer token",
        ("bearer",),
        _pattern(r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"),
        accept=mixes_letters_and_digits,
    ),
    LeakPattern(
        "basic-auth",
        "HTTP basic credentials",
        ("basic",),
        _pattern(r"(?i:\bauthorization[\"']?\s*[:=]\s*[\"']?basic)\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)"),
    ),
    LeakPattern(
        "json-web-token",
        "a JSON web token",
        ("eyj",),
        _pattern(
            rf"{_START}(?P<secret>eyJ[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}})"
        ),
    ),
)

# `password = "…"`, `HF_TOKEN=…`, `"api_key": "…"`: a key ending in a word that names a secret, then a
# value long enough to be one. Quoted values need 8 characters; bare ones 16 and a mix of letters and
# digits, because bare words after `token=` are mostly variable names. A bare value followed by `(`,
# `.` or `[` is code. (`max_tokens: 1024` does not match: the key must end in the word.)
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    *(f"{first}{joint}key" for first in ("api", "access", "private") for joint in ("", "_", "-")),
)
_SECRET_KEY = "(?i:" + "|".join(re.escape(word) for word in _SECRET_WORDS) + ")"
_SECRET_HINTS = _SECRET_WORDS
SECRET_ASSIGNMENTS: tuple[LeakPattern, ...] = (
    LeakPattern(
        "quoted-secret",
        "a password, key or token written into the file",
        _SECRET_HINTS,
        _pattern(rf"{_SECRET_KEY}[\"']?\s*[:=]\s*(?P<quote>[\"'])(?P<secret>[^\"'\s]{{8,}})(?P=quote)"),
        accept=not_a_placeholder,
    ),
    LeakPattern(
        "bare-secret",
        "a password, key or token written into the file",
        _SECRET_HINTS,
        _pattern(rf"{_SECRET_KEY}\s*[:=]\s*(?P<secret>[A-Za-z0-9_+/=-]{{16,}})(?![\w(.\[])"),
        accept=lambda value: not_a_placeholder(value) and mixes_letters_and_digits(value),
    ),
    LeakPattern(
        "url-credentials",
        "a password inside an address (a user and a password before the @ of a URL)",
        ("://",),
        _pattern(r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:(?P<secret>[^/\s@\"']+)@"),
        accept=not_a_placeholder,
    ),
)

# An IPv4 address is four dotted numbers that are not part of a longer dotted run and do not follow a
# letter (`v5.1.0.2`, `cuda12.4.1.0`). Whether it is really an address is decided in `leaks.py`.
IPV4 = _pattern(r"(?<![\w.])(?P<address>\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?!\.?\d)(?![\w+~])")
# Four dotted numbers right after these words are versions (`TensorRT 10.2.0.19`, `driver_version: …`);
# a word only counts whole or after `_` (four dotted numbers after `server` are an address).
VERSION_CONTEXT = _pattern(
    r"(?<![A-Za-z])(?i:version|ver|release|rel|build|driver|firmware|fw|bios|kernel|cuda|cudnn|cublas|tensorrt|trt|nccl"
    r"|rocm|torch|pytorch|vllm|python|ofed|doca|mlnx|package|pkg)[\s\"':=_/-]{0,4}$"
    r"|(?:==|>=|<=|~=|!=)\s*$"
)
# Colons and hex digits with at least two colons; `leaks.py` keeps what parses as an IPv6 address.
IPV6 = _pattern(r"(?<![\w:.])(?P<address>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:])")

# Absolute paths into someone's home directory name that someone.
HOME_PATH_HINTS = ("/home/", "/users/", "/root", "\\users\\")
HOME_PATHS = _pattern(
    r"(?<![\w.~-])(?:(?P<unix>/home|/Users)/(?P<name>[A-Za-z0-9._-]+)"
    r"|(?P<windows>[A-Za-z]:\\Users)\\(?P<winname>[A-Za-z0-9._-]+)|(?P<root>/root)(?=/))"
)


def literal(text: str, ignore_case: bool) -> re.Pattern[str]:
    """A host name, user name or denied word, matched whole: `node1` does not match inside `node12`."""
    return re.compile(
        rf"(?<![A-Za-z0-9]){re.escape(text)}(?![A-Za-z0-9])", re.IGNORECASE if ignore_case else 0
    )
