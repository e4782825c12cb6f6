"""ReqGate installed as the image installs it, not as this checkout runs it: the wheel built from the files
deploy/Dockerfile copies, installed with deploy/requirements.lock into a fresh virtual environment outside the
checkout, run with the image's environment and working directory (absolute paths moved under a scratch
root). Nothing may read a file through a path outside the installed package: the editable install of the
test suite would hide that, as the source folders sit side by side there.

Slow (a virtual environment and the dependencies, from the package index or pip's cache): marked server.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e_support import free_port

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
LOCK = ROOT / "deploy" / "requirements.lock"
PACKAGE_FILES = ("pyproject.toml", "README.md", "bot", "handlers", "pipeline", "config", "prompts")


@dataclass(frozen=True)
class Install:
    venv: Path
    package: Path  # site-packages/reqgate

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def _pip(python: Path, *args: str) -> None:
    done = subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def install() -> Iterator[Install]:
    scratch = Path(tempfile.mkdtemp(prefix="reqgate-install-"))
    try:
        source = scratch / "src"
        source.mkdir()
        for name in PACKAGE_FILES:  # what the Dockerfile's build stage copies, nothing else
            copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
            copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                               if (ROOT / name).is_dir() else {}))
        _pip(Path(sys.executable), "wheel", "-q", "--no-deps", "--wheel-dir", str(scratch / "dist"), str(source))
        (wheel,) = (scratch / "dist").glob("reqgate-*.whl")
        venv = scratch / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        python = venv / "bin" / "python"
        # The image's two steps, in its order.
        _pip(python, "install", "-q", "--require-hashes", "-r", str(LOCK))
        _pip(python, "install", "-q", "--no-deps", str(wheel))
        _pip(python, "check")
        locate = "import os, reqgate.bot; print(os.path.dirname(os.path.dirname(reqgate.bot.__file__)))"
        where = subprocess.run([str(python), "-c", locate], capture_output=True, text=True, check=True, cwd=scratch,
                               timeout=60)
        yield Install(venv=venv, package=Path(where.stdout.strip()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def image_env_and_workdir(root: Path) -> tuple[dict[str, str], Path]:
    """ENV and WORKDIR of the Dockerfile's final stage, each absolute path moved under `root`."""
    final = DOCKERFILE.read_text(encoding="utf-8").rsplit("\nFROM ", 1)[1].replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in re.findall(r"^ENV\s+(.*)$", final, re.MULTILINE):
        for key, value in re.findall(r"(\w+)=(\S+)", line):
            env[key] = str(root / value.lstrip("/")) if value.startswith("/") else value
    (workdir,) = re.findall(r"^WORKDIR\s+(\S+)", final, re.MULTILINE)
    return env, root / workdir.lstrip("/")


def test_the_wheel_holds_one_package_and_its_data(install: Install) -> None:
    top = {p.name for p in install.package.parent.iterdir() if p.name.startswith(("bot", "handlers", "pipeline",
                                                                                   "config", "prompts"))}
    assert top == set(), f"generic names at the top of site-packages: {top}"
    for data in ("config/defaults.yml", "config/reqgate.schema.json", "prompts/structure.md", "prompts/render.md"):
        assert (install.package / data).is_file(), data


def test_the_image_layout_serves(install: Install, tmp_path: Path) -> None:
    env, workdir = image_env_and_workdir(tmp_path / "image")
    for folder in (env["REQGATE_DATA_DIR"], env["REQGATE_CACHE_DIR"], workdir):
        Path(folder).mkdir(parents=True, exist_ok=True)
    port = free_port()
    run_env = {
        "PATH": f"{install.venv / 'bin'}:/usr/bin:/bin",
        **env,
        "REQGATE_GITHUB_WEBHOOK_SECRET": "image-layout-secret",
        "REQGATE_GITHUB_TOKEN": "image-layout-token",
        "REQGATE_GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens: no review needs to finish here
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen([str(install.venv / "bin" / "reqgate"), "serve", "--host", "127.0.0.1",
                                   "--port", str(port)], cwd=workdir, env=run_env, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        ready = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                if ready.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert ready is not None and ready.status_code == 200, log.read_text(errors="replace")[-3000:]
        replay = subprocess.run(
            [str(install.venv / "bin" / "reqgate"), "replay", str(ROOT / "examples" / "github-issues-opened.json"),
             "--event", "issues", "--url", f"http://127.0.0.1:{port}/webhooks/github"],
            env=run_env, cwd=workdir, capture_output=True, text=True, timeout=60, check=False)
        assert replay.stdout.startswith("202 "), replay.stdout + replay.stderr
    finally:
        server.terminate()
        server.wait(30)
    # The image's working directory belongs to root: the server must not have written there.
    assert list(workdir.iterdir()) == []
    assert (Path(env["REQGATE_DATA_DIR"]) / "reqgate.sqlite").is_file()
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines and all(line.startswith("{") for line in lines), lines[:5]


# Every file a reqgate module opens (not an import) while running a review, the prompts, the schema, the
# server's wiring and the config report. Paths the caller gave (ticket, config, data and cache folders) are
# allowed; any other path must lie inside the installed package.
PROBE = r"""
import json, os, sys, sysconfig
package, allowed = sys.argv[1], sys.argv[2:]
stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
outside = []

def ours(frame):
    # The nearest frame that is neither the standard library nor this probe decides who opened the file.
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib"):
            return False  # an import: the loader opens module files wherever they are
        if not (name.startswith("<") or os.path.realpath(name).startswith(stdlib)):
            return os.path.realpath(name).startswith(package)
        frame = frame.f_back
    return False

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if not path.startswith((package, *allowed, "/dev/", "/proc/")) and ours(sys._getframe(1)):
            outside.append(path)

sys.addaudithook(hook)
from reqgate.bot.cli import main
from reqgate.pipeline import prompts, config_schema
from reqgate.pipeline.config import SCHEMA_PATH
from reqgate.pipeline.config_loader import load_config
from reqgate.bot import commands
for name in prompts.PROMPT_NAMES:
    prompts.load_prompt(name)
json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
assert config_schema.render()
commands.config_report(load_config())
for args in (["review", "ticket.md", "--offline", "--json", "--config", "reqgate.yml"], ["--help"]):
    try:
        main(args)
    except SystemExit:
        pass
from reqgate.bot.settings import Settings
from reqgate.bot.wiring import build
build(Settings()).services.state.close()
print("OUTSIDE " + json.dumps(sorted(set(outside))), file=sys.stderr)
"""


def test_no_module_reads_a_file_outside_the_installed_package(install: Install, tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "good-story.md", work / "ticket.md")
    (work / "reqgate.yml").write_text("threshold: 75\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "REQGATE_DATA_DIR": str(tmp_path / "data"),
        "REQGATE_CACHE_DIR": str(tmp_path / "cache"), "REQGATE_GITHUB_TOKEN": "t",
        "REQGATE_GITHUB_WEBHOOK_SECRET": "s", "REQGATE_GITHUB_API_URL": "http://127.0.0.1:9",
    }
    done = subprocess.run([str(install.python), "-c", PROBE, str(install.package), str(tmp_path.resolve())],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
    marker = done.stderr.rsplit("OUTSIDE ", 1)
    assert len(marker) == 2, done.stderr[-3000:]
    assert json.loads(marker[1]) == []


def test_the_probe_sees_a_read_beside_the_package(install: Install, tmp_path: Path) -> None:
    """A module that reads `../prompts/x.md` from its own file, as the code once did, is caught."""
    sneaky = install.package / "pipeline" / "_sneaky_probe_check.py"
    sneaky.write_text("from pathlib import Path\n"
                      "def read():\n"
                      "    try:\n"
                      "        return (Path(__file__).parent.parent.parent / 'prompts' / 'x.md').read_text()\n"
                      "    except OSError:\n"
                      "        return ''\n", encoding="utf-8")
    try:
        probe = PROBE.replace("sys.addaudithook(hook)\n",
                              "sys.addaudithook(hook)\nfrom reqgate.pipeline import _sneaky_probe_check\n"
                              "_sneaky_probe_check.read()\n")
        work = tmp_path / "elsewhere"
        work.mkdir()
        shutil.copy(ROOT / "examples" / "good-story.md", work / "ticket.md")
        (work / "reqgate.yml").write_text("threshold: 75\n", encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "REQGATE_DATA_DIR": str(tmp_path / "data"), "REQGATE_GITHUB_TOKEN": "t",
               "REQGATE_GITHUB_WEBHOOK_SECRET": "s", "REQGATE_CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run([str(install.python), "-c", probe, str(install.package), str(tmp_path.resolve())],
                              cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
        outside = json.loads(done.stderr.rsplit("OUTSIDE ", 1)[1])
        assert outside == [str((install.package.parent / "prompts" / "x.md").resolve())]
    finally:
        sneaky.unlink()


def test_no_source_file_locates_data_by_its_own_path() -> None:
    """The static half: data is found with importlib.resources, never from `__file__`."""
    offenders = [str(path.relative_to(ROOT)) for folder in ("bot", "handlers", "pipeline")
                 for path in (ROOT / folder).rglob("*.py") if "__file__" in path.read_text(encoding="utf-8")]
    assert offenders == []
