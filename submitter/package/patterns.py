"""Every pattern the leak scan looks for, in one table: what it matches, what it is, and which part is secret.

The rules in `leaks.py` decide what a match means (and whether it is a false positive); this module
only holds the regular expressions, so adding a token format is one row here. Beside each pattern are
its needles: bytes that every match holds, which let the scan skip the lines that hold none.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple


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
    "fake",
    "replace",
    "abc123",
    "secret_here",
    "token_here",
)
# Whole values that stand for a secret in examples (`ftp://username:password@ftp.example.com`).
PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "apikey",
        "api_key",
        "changeit",
        "none",
        "null",
        "empty",
    }
)
# What a value starts with when it is no secret but a reference to one or code around a label: a variable
# (`$X`, `${X}`, `%(x)s`, `{{ x }}`), a placeholder (`<your-key>`), a list, a decorator or a comment, a CSS
# selector (`.data-api`), an option or a piece of a word (`"decoded_token": "-covered"`), or punctuation
# after a label in quotes (`"Password:"),$?e(…)`: the colon was inside the string).
_NOT_A_VALUE_START = ("$", "<", "{", "%(", "[", "@", "#", ".", "-", "(", ")", ",", ";", "]", "}")
# Names, not values: an environment variable's (`'aws_secret_access_key': 'AWS_SECRET_ACCESS_KEY'`), a
# dotted attribute or code reading a value (`gen_ai.latency.time_to_first_token`, `os.environ[…]`),
# a camel-case variable (`dataStoreTestQuery`).
_ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_DOTTED_NAME = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+(?:$|\s*[(\[])")
_CAMEL_CASE_NAME = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+")
# A path or an address (`token='/work/build/data/hub/…'`, `"o200k_base.tiktoken": "https://…"`); a password
# inside an address is url-credentials' to find.
_PATH_OR_ADDRESS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|~?\.{0,2}/[\w.-]*/")


# Credentials published for everyone to use, by the sha256 of their value (not repeated here): a tree that
# quotes one reveals nothing. MLCommons' read-only key to its bucket of models and datasets
# (`rclone config create mlc-inference s3 provider=Cloudflare … secret_access_key=…`) is in the reference
# implementations' instructions and in the code of most published submitters.
PUBLIC_CREDENTIALS: dict[str, str] = {
    "acb898248cfad96023c60eb2a033e07d0a60191deb1279303138cd5f1ccaf98c": "MLCommons' public download key",
}


def is_secret_value(value: str) -> bool:
    """Whether `value`, written where a secret goes, may be one: not a name, a placeholder, a path or code.

    A secret is a value. The name of the variable that holds it, a reference to it (`${HF_TOKEN}`,
    `os.environ["HF_TOKEN"]`), a placeholder (`<your-key>`, `REPLACE_WITH_TOKEN`, `********`) or a path is
    what careful code writes instead, and must not be reported as a leak; nor a credential published for
    everyone (PUBLIC_CREDENTIALS)."""
    lowered = value.lower()
    return not (
        value.startswith(_NOT_A_VALUE_START)
        or len(set(value)) <= 2
        or lowered in PLACEHOLDER_WORDS
        or any(marker in lowered for marker in PLACEHOLDER_MARKERS)
        or _ENVIRONMENT_NAME.fullmatch(value)
        or _DOTTED_NAME.match(value)
        or _CAMEL_CASE_NAME.fullmatch(value)
        or _PATH_OR_ADDRESS.match(value)
        or hashlib.sha256(value.encode()).hexdigest() in PUBLIC_CREDENTIALS
    )


def is_long_hex(value: str) -> bool:
    """32 hexadecimal digits or more, in one case, letters and digits both: a key or a digest of one."""
    return (
        len(value) >= 32
        and (value.islower() or value.isupper())
        and all(c in "0123456789abcdefABCDEF" for c in value)
        and any(c.isdigit() for c in value)
    )


class Needle(NamedTuple):
    """What a match leaves in the bytes of its line: `literal`, then what the bytes regex `tail` matches.
    The scan hands a rule only the lines where one of its needles occurs, so a needle may point at a line
    without a match, and must never miss one with a match. It is looked for in the line's bytes with
    ASCII letters lower-cased (as `hints` are), or with `raw`, as they are (for case-sensitive patterns)."""

    literal: bytes
    tail: bytes = b""
    raw: bool = False


@dataclass(frozen=True)
class LeakPattern:
    """One kind of secret. `secret` names the regex group to redact; without it the match is shown whole.

    `hints` are lower-case strings of which every match holds one: a line without any is skipped
    without running the regex (`in` is many times quicker). They are the pattern's needles too, unless
    `needles` names narrower ones.
    """

    id: str
    description: str
    hints: tuple[str, ...]
    regex: re.Pattern[str]
    secret: str | None = "secret"
    accept: Callable[[str], bool] | None = None  # a second look at the secret group, against false positives
    needles: tuple[Needle, ...] = ()

    def may_match(self, lowered_line: str) -> bool:
        return any(hint in lowered_line for hint in self.hints)

    def all_needles(self) -> tuple[Needle, ...]:
        return self.needles or tuple(Needle(hint.encode()) for hint in self.hints)


def _pattern(expression: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(expression, flags)


# Needles (what a match leaves in the lower-cased bytes of its line) are mostly the regex's first letters
# and what must follow them, lower-cased. Where a regex allows a space (\s, Python's Unicode spaces),
# a needle allows these bytes: ASCII spaces, \x1c-\x1f (spaces to Python too) and any byte beyond ASCII.
_SPACES = rb"[\t-\r\x1c-\x20\x80-\xff]"

# Keys and tokens never start in the middle of a word. That is checked after the key's first letters,
# looking back: the regex engine skips to a regex's first letters at once, where a regex starting with a
# look-behind is tried at every position, a hundred times slower on a long line.
_END = r"(?![A-Za-z0-9_-])"


def _key(start: str, rest: str, not_after: str = "A-Za-z0-9_-") -> str:
    """The group `secret`: `start`, not after a character of `not_after`, then `rest`."""
    return rf"(?P<secret>{re.escape(start)}(?<![{not_after}]{re.escape(start)}){rest})"


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
        _pattern(_key("hf_", "[A-Za-z0-9]{30,}") + _END),
        needles=(Needle(b"hf_", rb"[a-z0-9]{30}"),),  # not every hf_config
    ),
    LeakPattern(
        "github-token",
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _pattern(_key("g", "(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{22,})") + _END),
        needles=(Needle(b"gh", rb"[pousr]_[a-z0-9]{36}"), Needle(b"github_pat_", rb"[a-z0-9_]{22}")),
    ),
    LeakPattern(
        "aws-access-key-id",
        "an AWS access key id",
        ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
        _pattern(_key("A", "(?:KIA|SIA|GPA|IDA|ROA|NPA)[A-Z0-9]{16}", not_after="A-Z0-9") + "(?![A-Z0-9])"),
        accept=is_secret_value,  # AWS's documentation key ends in EXAMPLE
        # In capitals, as the regex wants them: a rare byte to look for, where "asia" is not.
        needles=tuple(
            Needle(prefix, raw=True) for prefix in (b"AKIA", b"ASIA", b"AGPA", b"AIDA", b"AROA", b"ANPA")
        ),
    ),
    LeakPattern(
        "openai-style-key",
        "an API key of the sk-… kind (OpenAI, Anthropic and others)",
        ("sk-",),
        _pattern(_key("sk-", "(?:[a-z]+-)*[A-Za-z0-9_-]{20,}") + _END),
        needles=(Needle(b"sk-", rb"[a-z0-9_-]{20}"),),
        accept=mixes_letters_and_digits,
    ),
    LeakPattern(
        "google-api-key",
        "a Google API key",
        ("aiza",),
        _pattern(_key("AIza", "[0-9A-Za-z_-]{35}") + _END),
        needles=(Needle(b"aiza", rb"[0-9a-z_-]{35}"),),
    ),
    LeakPattern(
        "slack-token",
        "a Slack token",
        ("xox",),
        _pattern(_key("xox", "[abposr]-[A-Za-z0-9-]{10,}") + _END),
        needles=(Needle(b"xox", rb"[abposr]-[a-z0-9-]{10}"),),
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
        # The look-ahead names the first letter in both cases: far quicker than trying (?i:…) everywhere.
        _pattern(r"(?=[Bb])(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"),
        needles=(Needle(b"bearer", _SPACES + rb"+[a-z0-9._~+/-]{20}"),),
        accept=mixes_letters_and_digits,
    ),
    LeakPattern(
        "basic-auth",
        "HTTP basic credentials",
        ("basic",),
        _pattern(
            r"(?=[Aa])(?i:\bauthorization[\"']?\s*[:=]\s*[\"']?basic)\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)"
        ),
        needles=(Needle(b"basic", _SPACES + rb"+[a-z0-9+/]{8}"),),
    ),
    LeakPattern(
        "json-web-token",
        "a JSON web token",
        ("eyj",),
        _pattern(_key("eyJ", r"[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
        needles=(Needle(b"eyj", rb"[a-z0-9_-]{10}"),),
    ),
)

# `password = "…"`, `HF_TOKEN=…`, `"api_key": "…"`: a key ending in a word that names a secret, then a
# value long enough to be one. Quoted values need 8 characters; bare ones 16 and a mix of letters and
# digits (or 32 hex digits: `secret_access_key=9d4b…`), because bare words after `token=` are mostly
# variable names. A bare value followed by `(`, `.` or `[` is code. Names, placeholders and paths are not
# values (`is_secret_value`). (`max_tokens: 1024` does not match: the key must end in the word.)
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    *(f"{first}{joint}key" for first in ("api", "access", "private") for joint in ("", "_", "-")),
)
# The look-ahead: the words' first letters in any case (to (?i), U+017F is an s too), far quicker than
# trying the fourteen words at every position.
_SECRET_KEY = "(?=[AaPpSsTt\u017f])(?i:" + "|".join(re.escape(word) for word in _SECRET_WORDS) + ")"
_SECRET_HINTS = _SECRET_WORDS
# Both regexes want `["']?\s*[:=]` after the word: most lines holding "token" (tokenizer, max_tokens,
# "the token is") have no such thing.
_SECRET_NEEDLES = tuple(Needle(word.encode(), rb"[\"']?" + _SPACES + rb"*[:=]") for word in _SECRET_WORDS)
SECRET_ASSIGNMENTS: tuple[LeakPattern, ...] = (
    LeakPattern(
        "quoted-secret",
        "a password, key or token written into the file",
        _SECRET_HINTS,
        _pattern(rf"{_SECRET_KEY}[\"']?\s*[:=]\s*(?P<quote>[\"'])(?P<secret>[^\"'\s]{{8,}})(?P=quote)"),
        accept=is_secret_value,
        needles=_SECRET_NEEDLES,
    ),
    LeakPattern(
        "bare-secret",
        "a password, key or token written into the file",
        _SECRET_HINTS,
        _pattern(rf"{_SECRET_KEY}\s*[:=]\s*(?P<secret>[A-Za-z0-9_+/=-]{{16,}})(?![\w(.\[])"),
        accept=lambda value: (
            is_secret_value(value) and (mixes_letters_and_digits(value) or is_long_hex(value))
        ),
        needles=_SECRET_NEEDLES,
    ),
    LeakPattern(
        "url-credentials",
        "a password inside an address (a user and a password before the @ of a URL)",
        ("://",),
        _pattern(r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:(?P<secret>[^/\s@\"']+)@"),
        accept=is_secret_value,
        # Bytes \s is ASCII spaces alone: these classes allow all the regex's do, and more.
        needles=(Needle(b"://", rb"[^/\s:@\"']+:[^/\s@\"']+@"),),
    ),
)

# An IPv4 address is four dotted numbers that are not part of a longer dotted run and do not follow a
# letter (`v5.1.0.2`, `cuda12.4.1.0`). Whether it is really an address is decided in `leaks.py`.
IPV4 = _pattern(r"(?<![\w.])(?P<address>\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?!\.?\d)(?![\w+~])")
# An address is reported only if `ipaddress` parses it, which takes ASCII digits alone.
IPV4_NEEDLES = (Needle(b".", rb"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]"),)
# Four dotted numbers right after these words are versions (`TensorRT 10.2.0.19`, `driver_version: …`);
# a word only counts whole or after `_` (four dotted numbers after `server` are an address). So are four
# dotted numbers joined to a name by a dash, as in a wheel's file name (`nvidia_cudnn_cu12-9.1.0.70-py3`).
VERSION_CONTEXT = _pattern(
    r"(?<![A-Za-z])(?i:version|ver|release|rel|build|driver|firmware|fw|bios|kernel|cuda|cudnn|cublas|tensorrt|trt|nccl"
    r"|rocm|torch|pytorch|vllm|python|ofed|doca|mlnx|package|pkg)[\s\"':=_/-]{0,4}$"
    r"|(?:==|>=|<=|~=|!=)\s*$"
    r"|\w-$"
)
# Colons and hex digits with at least two colons; `leaks.py` keeps what parses as an IPv6 address.
IPV6 = _pattern(r"(?<![\w:.])(?P<address>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:])")
# An address is reported only with three groups or more, so the middle one of three stands between colons.
IPV6_NEEDLES = (Needle(b":", rb"[0-9a-f]{1,4}:"),)

# Absolute paths into someone's home directory name that someone.
HOME_PATH_HINTS = ("/home/", "/users/", "/root", "\\users\\")
HOME_PATH_NEEDLES = tuple(Needle(hint.encode()) for hint in HOME_PATH_HINTS)
HOME_PATHS = _pattern(
    r"(?<![\w.~-])(?:(?P<unix>/home|/Users)/(?P<name>[A-Za-z0-9._-]+)"
    r"|(?P<windows>[A-Za-z]:\\Users)\\(?P<winname>[A-Za-z0-9._-]+)|(?P<root>/root)(?=/))"
)


def literal(text: str, ignore_case: bool) -> re.Pattern[str]:
    """A host name, user name or denied word, matched whole: `node1` does not match inside `node12`."""
    return re.compile(
        rf"(?<![A-Za-z0-9]){re.escape(text)}(?![A-Za-z0-9])", re.IGNORECASE if ignore_case else 0
    )
