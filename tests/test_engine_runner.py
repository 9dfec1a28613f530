"""The lane's CLI runner (e2e/engine.py, ``run_whole``): output and exit code as
``subprocess.run`` gives them, and a command that runs out of time killed with every process
under it, as the CLI's plugins are (each in a process group of its own, so a kill of the CLI
alone, or of its group, leaves them waiting for ever)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from e2e.engine import run_whole

# A "CLI" that starts a "plugin" in a process group of its own, as pulumi does, and waits.
CLI = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         process_group=0)
print(child.pid, flush=True)
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(600)
"""


def test_output_and_exit_code_are_the_commands(tmp_path: Path) -> None:
    done = run_whole(
        ["python3", "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        cwd=tmp_path,
        env=os.environ,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


def test_a_timed_out_command_is_killed_with_its_plugins(tmp_path: Path) -> None:
    script = tmp_path / "cli.py"
    script.write_text(CLI)
    pid_file = tmp_path / "plugin.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run_whole(["python3", str(script), str(pid_file)], cwd=tmp_path, env=os.environ, timeout=3)
    plugin = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while psutil.pid_exists(plugin) and psutil.Process(plugin).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the plugin outlived its CLI"
        time.sleep(0.1)
