"""The leak scan: host names, addresses, user names, tokens and keys in every text file of a tree.

Each rule looks at one line (or one path) at a time, so files of any size are streamed, never loaded
whole; `reading` hands the rules only the lines where one of their needles occurs. A finding says where
(`path:line`), what kind of leak, and shows the match with the secret part redacted: the report itself
must be safe to paste into a ticket.

What is read is bounded: no file past the size it had when the tree was listed, no more than
MAX_SCANNED_BYTES of a tree. A file that cannot be read is noted with the reason the system gave (an I/O
error is not a permission problem), for the package to report; the scan goes on.
"""

from __future__ import annotations

import errno
import getpass
import ipaddress
import os
import re
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from submitter.package.allow import AllowList
from submitter.package.patterns import (
    HOME_PATH_HINTS,
    HOME_PATH_NEEDLES,
    HOME_PATHS,
    IPV4,
    IPV4_NEEDLES,
    IPV6,
    IPV6_NEEDLES,
    PRIVATE_KEYS,
    SECRET_ASSIGNMENTS,
    TOKENS,
    VERSION_CONTEXT,
    LeakPattern,
    Needle,
    literal,
)
from submitter.package.reading import Lines, Piece, Trigger, chunks, segments
from submitter.regular_files import NotARegularFile, TooLarge, open_regular
from submitter.rule_registry import Finding, Problem, RuleSet, Severity

# User names that are ordinary words in logs and paths: matching them would flood the report, and
# naming them reveals nothing. Their home directories are still reported by LEAK-HOME-PATH.
GENERIC_USER_NAMES = frozenset(
    {"root", "user", "users", "admin", "nobody", "ubuntu", "runner", "username", "name", "me", "you"}
)
LOCAL_HOST_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
# Shorter names are ordinary words too often: a host called `vm` would match every "VM OS" of a
# system description. They are named in a note instead, and `--deny` scans for them on request.
MIN_NAME_LENGTH = 3

# The most the scan reads of one tree, all files together: 8 times the largest published submitter folder
# (open/GATEOverflow of v5.1, 0.49 GB; the whole of v5.1's results, 2.2 GB, fits too), about a minute of
# reading. What lies beyond is named, not read, and the package is refused: a scan cut short vouches for
# nothing.
MAX_SCANNED_BYTES = 4 << 30
READ_CHUNK_BYTES = 1 << 20  # files are read in blocks of this size; a longer line in pieces of it …
CHUNK_OVERLAP_CHARS = 256  # … each overlapping the previous, so a secret cut in two is still found
BINARY_SNIFF_BYTES = 8192  # a NUL byte among the first ones: a binary file, not scanned
MAX_FINDINGS_PER_RULE_AND_FILE = 20  # then one summary finding: a log full of addresses is one problem
EXCERPT_CHARS = 100


NamedPattern = tuple[str, re.Pattern[str]]


@dataclass(frozen=True)
class Sensitive:
    """Words that must never leave: this machine's names, its user's name, and whatever `--deny` adds."""

    hosts: tuple[NamedPattern, ...] = ()
    users: tuple[NamedPattern, ...] = ()
    denied: tuple[NamedPattern, ...] = ()
    not_scanned: tuple[str, ...] = ()  # names left out, and why: the user is told

    @classmethod
    def build(
        cls, hosts: Iterable[str] = (), users: Iterable[str] = (), denied: Iterable[str] = ()
    ) -> Sensitive:
        host_names = [h for h in _unique(hosts) if h.lower() not in LOCAL_HOST_NAMES]
        user_names = _unique(users)
        short = [name for name in (*host_names, *user_names) if len(name) < MIN_NAME_LENGTH]
        # Host and user names are matched as the machine writes them (logs copy them verbatim), so
        # `gpu01` is found and the "GPU" of a description is not. `--deny` words match in any case.
        return cls(
            hosts=tuple((h, literal(h, ignore_case=False)) for h in host_names if h not in short),
            users=tuple((u, literal(u, ignore_case=False)) for u in user_names if _is_telling_user_name(u)),
            denied=tuple((d, literal(d, ignore_case=True)) for d in _unique(denied)),
            not_scanned=tuple(
                f"{name!r} is too short to scan for (--deny {name} scans for it)" for name in short
            ),
        )

    @classmethod
    def of_this_machine(cls, denied: Iterable[str] = ()) -> Sensitive:
        hostname = socket.gethostname()
        fqdn = socket.getfqdn()
        hosts = (hostname, hostname.split(".")[0], fqdn, fqdn.split(".")[0])
        users = (getpass.getuser(), os.environ.get("SUDO_USER", ""))
        return cls.build(hosts, users, denied)

    def names_of_people(self) -> set[str]:
        """Names another rule already reports as errors, which the home-path warning leaves out."""
        return {*(name for name, _ in self.users), *(word.lower() for word, _ in self.denied)}


def _unique(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(word.strip() for word in words if word and word.strip()))


def _is_telling_user_name(name: str) -> bool:
    return len(name) >= MIN_NAME_LENGTH and name.lower() not in GENERIC_USER_NAMES


@dataclass(frozen=True)
class ScannedLine:
    """What a leak rule looks at: one line of a file (or, with no number, a path in the tree)."""

    path: str
    number: int | None
    text: str
    sensitive: Sensitive
    # A very long line comes in overlapping pieces: matches ending before `fresh_from` were reported
    # with the previous piece, and one touching the end of a piece that does not end the line may go
    # on in the next, where it is found whole.
    fresh_from: int = 0
    open_end: bool = False

    @cached_property
    def lowered(self) -> str:
        return self.text.lower()

    def find(self, regex: re.Pattern[str]) -> Iterator[re.Match[str]]:
        for match in regex.finditer(self.text):
            if match.end() >= self.fresh_from and not (self.open_end and match.end() == len(self.text)):
                yield match


class LeakProblem(Problem, frozen=True):
    matched: str = ""  # the text an allow entry is compared with (never printed for secrets)


LEAK_RULES: RuleSet[ScannedLine] = RuleSet("leak scan")
rule = LEAK_RULES.rule

SECRET_FIX = (
    "revoke it where it was issued, delete it from the file, and read it from the environment when the "
    "program runs"
)


@rule("LEAK-PRIVATE-KEY", Severity.ERROR, "no private key (PEM, OpenSSH, PuTTY) in any file")
def private_keys(line: ScannedLine) -> Iterator[Problem]:
    yield from _pattern_problems(
        line, PRIVATE_KEYS, f"remove the key from the tree; if it was shared, {SECRET_FIX}"
    )


@rule("LEAK-TOKEN", Severity.ERROR, "no access token of a known service (Hugging Face, GitHub, AWS, …)")
def service_tokens(line: ScannedLine) -> Iterator[Problem]:
    yield from _pattern_problems(line, TOKENS, SECRET_FIX)


@rule(
    "LEAK-SECRET", Severity.ERROR, "no password, key or token assigned in a file or written into an address"
)
def secret_assignments(line: ScannedLine) -> Iterator[Problem]:
    for problem in _pattern_problems(line, SECRET_ASSIGNMENTS, SECRET_FIX):
        # A known token in an assignment (`HF_TOKEN=hf_…`) is LEAK-TOKEN's finding already.
        if not any(pattern.regex.search(problem.matched) for pattern in TOKENS):
            yield problem


@rule(
    "LEAK-IP",
    Severity.ERROR,
    "no IPv4 or IPv6 address of a host (loopback, documentation ranges and versions aside)",
)
def ip_addresses(line: ScannedLine) -> Iterator[Problem]:
    fix = (
        "replace the address with a placeholder or remove the line; if it is a version number, allow it "
        "(--allow 'LEAK-IP PATH TEXT')"
    )
    for match in line.find(IPV4):
        address = match["address"]
        if _is_host_ipv4(address) and not VERSION_CONTEXT.search(
            line.text, max(0, match.start() - 40), match.start()
        ):
            yield LeakProblem(
                message=f"holds the IPv4 address {address}", fix=fix, line=line.number, matched=address
            )
    for match in line.find(IPV6):
        address = match["address"]
        if _is_host_ipv6(address):
            yield LeakProblem(
                message=f"holds the IPv6 address {address}", fix=fix, line=line.number, matched=address
            )


@rule("LEAK-HOSTNAME", Severity.ERROR, "no name of the machine that packages the tree (host name, FQDN)")
def host_names(line: ScannedLine) -> Iterator[Problem]:
    taken: list[tuple[int, int]] = []
    # Longest first: `node7` inside `node7.corp.example.com` is the same leak, reported once.
    for name, regex in sorted(line.sensitive.hosts, key=lambda named: -len(named[0])):
        for match in line.find(regex):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            taken.append(match.span())
            yield LeakProblem(
                message=f"names this machine ({name})",
                fix="replace the host name with the system's public name or remove it",
                line=line.number,
                matched=name,
            )


@rule("LEAK-USER", Severity.ERROR, "no name of the user who packages the tree")
def user_names(line: ScannedLine) -> Iterator[Problem]:
    for name, regex in line.sensitive.users:
        for _ in line.find(regex):
            yield LeakProblem(
                message=f"names the user {name!r} (who is packaging this tree)",
                fix="remove the name (paths: make them relative or use a neutral folder such as /models)",
                line=line.number,
                matched=name,
            )


@rule(
    "LEAK-HOME-PATH",
    Severity.WARNING,
    "no absolute path into a home directory (/home/NAME, /Users/NAME, /root)",
)
def home_paths(line: ScannedLine) -> Iterator[Problem]:
    if not any(hint in line.lowered for hint in HOME_PATH_HINTS):
        return
    already_errors = line.sensitive.names_of_people()
    for match in line.find(HOME_PATHS):
        name = match["name"] or match["winname"]
        if name is None:
            yield LeakProblem(
                message="holds a path in the root user's home directory",
                fix="use a neutral folder (/models, /data) or a relative path",
                line=line.number,
                matched="/root",
            )
        elif (
            name not in already_errors and name.lower() not in already_errors and _is_telling_user_name(name)
        ):
            home = f"{match['unix'] or match['windows']}{'/' if match['unix'] else chr(92)}{name}"
            yield LeakProblem(
                message=f"names the user {name!r} in a home-directory path ({home})",
                fix=(
                    "use a neutral folder or a relative path; if the name may leave, allow it "
                    f"(--allow 'LEAK-HOME-PATH * {home}'); --deny {name} makes it an error"
                ),
                line=line.number,
                matched=home,
            )


@rule("LEAK-DENIED", Severity.ERROR, "no word given with --deny (project code names, customers, sites)")
def denied_words(line: ScannedLine) -> Iterator[Problem]:
    for word, regex in line.sensitive.denied:
        for _ in line.find(regex):
            yield LeakProblem(
                message=f"holds the denied word {word!r}",
                fix="remove or replace it",
                line=line.number,
                matched=word,
            )


# Where each rule may report anything: the lines holding one of its needles (patterns.py says why every
# match holds one). None: a word no needle can stand for, and every line is read. A rule missing here
# would never see a line, so `_trigger` refuses to build without it.
RULE_NEEDLES: dict[str, Callable[[Sensitive], Iterable[Needle] | None]] = {
    "LEAK-PRIVATE-KEY": lambda _: _pattern_needles(PRIVATE_KEYS),
    "LEAK-TOKEN": lambda _: _pattern_needles(TOKENS),
    "LEAK-SECRET": lambda _: _pattern_needles(SECRET_ASSIGNMENTS),
    "LEAK-IP": lambda _: (*IPV4_NEEDLES, *IPV6_NEEDLES),
    "LEAK-HOSTNAME": lambda sensitive: _name_needles(name for name, _ in sensitive.hosts),
    "LEAK-USER": lambda sensitive: _name_needles(name for name, _ in sensitive.users),
    "LEAK-HOME-PATH": lambda _: HOME_PATH_NEEDLES,
    "LEAK-DENIED": lambda sensitive: _word_needles(word for word, _ in sensitive.denied),
}


def _pattern_needles(patterns: Iterable[LeakPattern]) -> list[Needle]:
    return [needle for pattern in patterns for needle in pattern.all_needles()]


def _name_needles(names: Iterable[str]) -> list[Needle] | None:
    """A name is matched as written: its UTF-8 bytes are in the line, unless the line was not valid
    UTF-8 and the name holds the character that stands for the bytes that were not."""
    names = list(names)
    if any("\ufffd" in name for name in names):
        return None
    return [Needle(name.encode(), raw=True) for name in names]


def _word_needles(words: Iterable[str]) -> list[Needle] | None:
    """A denied word matches in any case, which for ASCII letters is what lower-cased bytes show; of a word
    with other letters, its longest run of ASCII stands for it."""
    needles = []
    for word in words:
        run = max(re.findall(r"[\x00-\x7f]+", word), key=len, default="")
        if not run:
            return None
        needles.append(Needle(run.encode().lower()))
    return needles


@lru_cache(maxsize=8)
def _trigger(sensitive: Sensitive) -> Trigger:
    missing = [leak_rule.id for leak_rule in LEAK_RULES if leak_rule.id not in RULE_NEEDLES]
    if missing:
        raise ValueError(f"leak rules without needles in RULE_NEEDLES: {', '.join(missing)}")
    needles: dict[str, Iterable[Needle]] = {}
    for rule_id, needles_of in RULE_NEEDLES.items():
        found = needles_of(sensitive)
        if found is None:
            return Trigger(None)
        needles[rule_id] = found
    return Trigger(needles)


def _pattern_problems(line: ScannedLine, patterns: Iterable[LeakPattern], fix: str) -> Iterator[LeakProblem]:
    for pattern in patterns:
        if not pattern.may_match(line.lowered):
            continue
        for match in line.find(pattern.regex):
            secret = match[pattern.secret] if pattern.secret else match[0]
            if pattern.accept is not None and not pattern.accept(secret):
                continue
            yield LeakProblem(
                message=f"holds {pattern.description} ({redacted_excerpt(match, pattern)})",
                fix=fix,
                line=line.number,
                matched=secret,
            )


def redact(secret: str) -> str:
    """At most a quarter of the secret and 4 characters: enough to recognise it, not to use it."""
    return f"{secret[: min(4, len(secret) // 4)]}…[{len(secret)} characters redacted]"


def redacted_excerpt(match: re.Match[str], pattern: LeakPattern) -> str:
    if pattern.secret is None:
        return _shorten(match[0])
    start, end = match.span(pattern.secret)
    before = match.string[match.start() : start]
    after = match.string[end : match.end()]
    return f"{_shorten(before)}{redact(match[pattern.secret])}{_shorten(after)}"


def _shorten(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else f"{text[:EXCERPT_CHARS]}…"


def _is_host_ipv4(text: str) -> bool:
    try:
        address = ipaddress.IPv4Address(text)  # rejects octets over 255 and leading zeros: dates, versions
    except ValueError:
        return False
    return not (
        address.is_loopback
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved  # 240/4, 255.255.255.255, and netmasks such as 255.255.255.0
        or any(address in network for network in _NOT_HOSTS_V4)
        or address in _PUBLIC_RESOLVERS
    )


_NOT_HOSTS_V4 = (
    ipaddress.IPv4Network("0.0.0.0/8"),  # "this network"; 0.x.y.z in a log is a version
    ipaddress.IPv4Network("192.0.2.0/24"),  # the documentation ranges of RFC 5737
    ipaddress.IPv4Network("198.51.100.0/24"),
    ipaddress.IPv4Network("203.0.113.0/24"),
)
# Public DNS resolvers (Google, Cloudflare, Quad9, OpenDNS): code connects to one to learn its own way
# out (`s.connect(("8.8.8.8", 80))`, vLLM's get_ip), and they name no host of the submitter's.
_PUBLIC_RESOLVERS = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "8.8.8.8",
        "8.8.4.4",
        "1.1.1.1",
        "1.0.0.1",
        "9.9.9.9",
        "208.67.222.222",
        "208.67.220.220",
        "2001:4860:4860::8888",
        "2001:4860:4860::8844",
        "2606:4700:4700::1111",
        "2606:4700:4700::1001",
        "2620:fe::fe",
    )
)


def _is_host_ipv6(text: str) -> bool:
    # Times (12:34:56), slices (1::2) and C++ scopes are not addresses: an address that could be
    # mistaken for one of them is too short to say anything, so three groups are required.
    if sum(1 for group in text.split(":") if group) < 3:
        return False
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return not (
        address.is_loopback
        or address.is_unspecified
        or address.is_multicast
        or address in ipaddress.IPv6Network("2001:db8::/32")  # documentation (RFC 3849)
        or address in _PUBLIC_RESOLVERS
    )


@dataclass
class LeakScan:
    findings: list[Finding] = field(default_factory=list)
    scanned_files: int = 0
    scanned_bytes: int = 0
    binary_files: list[str] = field(default_factory=list)  # not scanned: their content is not text
    not_regular: dict[str, str] = field(default_factory=dict)  # not opened: path -> what it is (a FIFO, …)
    too_large: list[str] = field(default_factory=list)  # not scanned: over the limit, blocked by it anyway
    unreadable: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (why, how to fix)
    over_budget: list[str] = field(default_factory=list)  # not read: the scan had read MAX_SCANNED_BYTES


def scan_tree(
    root: Path,
    files: Mapping[str, int],
    names: Iterable[str],
    sensitive: Sensitive,
    allow: AllowList,
    max_bytes: int | None = None,
) -> LeakScan:
    """Scan every path in `names` and the content of every text file in `files` (path relative to root
    -> size when listed); files over `max_bytes` are not read (a sparse file may claim terabytes of zeros),
    no file is read past its listed size, and no more than MAX_SCANNED_BYTES in all."""
    scan = LeakScan()
    for path in sorted(names):
        # Only the last part: a folder's name is scanned once, not again in the path of each file it holds.
        line = ScannedLine(path, None, path.rsplit("/", 1)[-1], sensitive)
        scan.findings.extend(_findings(_Counts(), line, allow))
    for path, size in sorted(files.items()):
        if max_bytes is not None and size > max_bytes:
            scan.too_large.append(path)
            continue
        if scan.over_budget or scan.scanned_bytes + size > MAX_SCANNED_BYTES:
            scan.over_budget.append(path)
            continue
        try:
            findings = scan_file(root, path, sensitive, allow, limit=size)
        except NotARegularFile as exc:
            scan.not_regular[path] = exc.kind
            continue
        except TooLarge:
            scan.unreadable[path] = (
                f"held more than its {size:,} bytes when it was read: it grew while it was packaged",
                "leave the tree alone while it is packaged, then package again",
            )
            continue
        except OSError as exc:
            scan.unreadable[path] = unreadable_reason(exc)
            continue
        scan.scanned_bytes += size
        if findings is None:
            scan.binary_files.append(path)
            continue
        scan.scanned_files += 1
        scan.findings.extend(findings)
    return scan


def unreadable_reason(exc: OSError) -> tuple[str, str]:
    """Why a file could not be read, as the system said it (strerror and errno name), and how to fix that."""
    name = errno.errorcode.get(exc.errno or 0)
    reason = f"{exc.strerror or exc} ({name})" if name else str(exc.strerror or exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        fix = "give the user who packages read permission on it (chmod a+r FILE), or remove it from the tree"
    elif exc.errno == errno.EIO:
        fix = (
            "the disk or file system could not read it: copy it again from where it was made, and check "
            "the device (dmesg, fsck)"
        )
    else:
        fix = "make it readable, or remove it from the tree"
    return f"cannot be read: {reason}, so it was not scanned", fix


def scan_file(
    root: Path, path: str, sensitive: Sensitive, allow: AllowList, limit: int | None = None
) -> list[Finding] | None:
    """The findings in one file, or None when it is binary (not scanned).

    NotARegularFile, before a byte is read, when it is a FIFO, a device or a socket: a read could block.
    TooLarge when it holds more than `limit` bytes (read at most a block beyond), OSError when a read fails.
    """
    size = READ_CHUNK_BYTES
    with open_regular(root / path) as stream:
        first = stream.read(max(size, BINARY_SNIFF_BYTES))
        if b"\0" in first[:BINARY_SNIFF_BYTES]:
            return None
        parts = _bounded(chunks(stream, first, size), limit, root / path)
        return _scan_text(path, segments(parts, size), sensitive, allow)


def _bounded(parts: Iterable[bytes], limit: int | None, path: Path) -> Iterator[bytes]:
    """The parts, until they hold more than `limit` bytes in all: then TooLarge."""
    total = 0
    for data in parts:
        total += len(data)
        if limit is not None and total > limit:
            raise TooLarge(path, limit)
        yield data


def _scan_text(
    path: str, parts: Iterable[Lines | Piece], sensitive: Sensitive, allow: AllowList
) -> list[Finding]:
    counts, findings = _Counts(), []
    trigger = _trigger(sensitive)
    number, carry = 1, ""
    for part in parts:
        if isinstance(part, Lines):
            for candidate in trigger.lines(part.data):
                text = candidate.data.decode("utf-8", errors="replace")
                line = ScannedLine(path, number + candidate.index, text, sensitive)
                findings.extend(_findings(counts, line, allow, candidate.rules))
            number += part.data.count(b"\n")
            continue
        # A piece of a long line: the end of the previous piece comes first, so a match cut in two is whole.
        text = part.data.decode("utf-8", errors="replace")
        line = ScannedLine(path, number, carry + text, sensitive, len(carry), not part.ends_line)
        findings.extend(_findings(counts, line, allow, trigger.rules(line.text.encode())))
        number, carry = (number + 1, "") if part.ends_line else (number, text[-CHUNK_OVERLAP_CHARS:])
    return findings + _overflow_findings(counts, path)


@dataclass
class _Counts:
    seen: Counter[str] = field(default_factory=Counter)
    first_hidden_line: dict[str, int | None] = field(default_factory=dict)


def _findings(
    counts: _Counts, line: ScannedLine, allow: AllowList, only: frozenset[str] | None = None
) -> Iterator[Finding]:
    """The findings of every rule on a line; with `only`, of those rules alone (the others find nothing)."""
    reported: set[tuple[str, str]] = set()
    for leak_rule in LEAK_RULES:
        if only is not None and leak_rule.id not in only:
            continue
        for problem in leak_rule.check(line):
            matched = problem.matched if isinstance(problem, LeakProblem) else problem.message
            if (leak_rule.id, matched) in reported or allow.permits(leak_rule.id, line.path, matched):
                continue
            reported.add((leak_rule.id, matched))
            counts.seen[leak_rule.id] += 1
            if counts.seen[leak_rule.id] > MAX_FINDINGS_PER_RULE_AND_FILE:
                counts.first_hidden_line.setdefault(leak_rule.id, line.number)
                continue
            yield Finding(
                rule=leak_rule.id,
                severity=leak_rule.severity,
                path=line.path,
                line=line.number,
                message=problem.message if line.number is not None else f"its name {problem.message}",
                fix=problem.fix,
            )


def _overflow_findings(counts: _Counts, path: str) -> list[Finding]:
    findings = []
    for leak_rule in LEAK_RULES:
        hidden = counts.seen[leak_rule.id] - MAX_FINDINGS_PER_RULE_AND_FILE
        if hidden > 0:
            findings.append(
                Finding(
                    rule=leak_rule.id,
                    severity=leak_rule.severity,
                    path=path,
                    line=counts.first_hidden_line[leak_rule.id],
                    message=f"holds {hidden} more finding(s) of this rule from this line on, not listed",
                    fix="fix the ones listed, then package again to see the rest",
                )
            )
    return findings
