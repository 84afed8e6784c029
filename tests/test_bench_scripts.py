"""The GPU bench scripts' shared helpers: a command's `--json` output redirected into a file stays JSON,
because what finished when is reported on stderr and in progress.txt (bench/gpu_helpers.sh)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_timed_reports_on_stderr_so_redirected_json_stays_json(tmp_path: Path) -> None:
    script = (
        f'RESULTS="{tmp_path}"; source "{BENCH / "gpu_helpers.sh"}"; '
        f'timed python3 -c \'import json; print(json.dumps({{"ok": 1}}))\' > "{tmp_path / "out.json"}"'
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == {"ok": 1}
    assert "exit 0 after" in done.stderr
    assert re.search(r"exit 0 after \d+ s: python3 -c", (tmp_path / "progress.txt").read_text())


def test_the_bench_scripts_share_one_timed_helper() -> None:
    """A script with its own `timed` that echoes to stdout is how harness.json once stopped being JSON."""
    defining = [path.name for path in BENCH.glob("*.sh") if re.search(r"^timed\(\)", path.read_text(), re.M)]
    assert defining == ["gpu_helpers.sh"]
