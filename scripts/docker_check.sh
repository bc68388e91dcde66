#!/usr/bin/env bash
# Checks the Dockerfile without a Docker engine:
#   1. hadolint (from .venv) with --failure-threshold error;
#   2. a clean temporary virtualenv with requirements.lock installed as the image does
#      (pip install --require-hashes);
#   3. the files the Dockerfile COPYs, staged into a temporary directory laid out
#      like the image and made read-only (chmod -R a-w);
#   4. the image's exec-form ENTRYPOINT/CMD run from that directory, with the
#      Dockerfile's ENV, on a free port, as the Dockerfile's USER when we are root;
#   5. /_stcore/health polled until it answers "ok" or the timeout passes;
#   6. the main script run once headless (streamlit.testing AppTest), in the same
#      read-only copy, to catch errors the health endpoint cannot see.
# Exits non-zero when any step fails or the server never becomes healthy.
#
# Overrides (environment):
#   DOCKER_CHECK_CONTEXT     build context holding the copied files and requirements.lock
#                            (default: the repository root)
#   DOCKER_CHECK_DOCKERFILE  Dockerfile to check (default: <repo root>/Dockerfile)
#   DOCKER_CHECK_TIMEOUT     seconds to wait for a healthy server (default: 30)
#   DOCKER_CHECK_PYTHON      interpreter for the temporary virtualenv (default: python3)
#   HADOLINT                 hadolint binary (default: <repo root>/.venv/bin/hadolint)
#   DOCKER_CHECK_SKIP_APPTEST=1  skip step 6
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONTEXT=$(cd "${DOCKER_CHECK_CONTEXT:-$ROOT}" && pwd)
DOCKERFILE=${DOCKER_CHECK_DOCKERFILE:-$ROOT/Dockerfile}
TIMEOUT=${DOCKER_CHECK_TIMEOUT:-30}
VENV_PYTHON=${DOCKER_CHECK_PYTHON:-python3}
HADOLINT=${HADOLINT:-$ROOT/.venv/bin/hadolint}

if [ ! -f "$DOCKERFILE" ]; then
    echo "docker_check: no Dockerfile at $DOCKERFILE" >&2
    exit 1
fi

echo "== hadolint --failure-threshold error $DOCKERFILE"
if [ ! -x "$HADOLINT" ]; then
    if command -v hadolint >/dev/null 2>&1; then
        HADOLINT=$(command -v hadolint)
    else
        echo "docker_check: hadolint not found; run 'make docker-check' (it installs requirements-dev.txt)" >&2
        exit 1
    fi
fi
"$HADOLINT" --failure-threshold error "$DOCKERFILE"
echo "hadolint: passed"

exec python3 - "$DOCKERFILE" "$CONTEXT" "$TIMEOUT" "$VENV_PYTHON" <<'PY'
import glob
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

dockerfile, context, timeout, venv_python = sys.argv[1:5]
timeout = float(timeout)


def fail(msg):
    print(f"docker_check: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- Dockerfile
def instructions(path):
    """Yield (INSTRUCTION, argument text) for the Dockerfile, continuations joined."""
    logical = ""
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if line.strip().startswith("#"):
                continue  # comments are dropped, also inside continuations
            if line.rstrip().endswith("\\"):
                logical += line.rstrip()[:-1] + " "
                continue
            logical += line
            if logical.strip():
                word, _, rest = logical.strip().partition(" ")
                yield word.upper(), rest.strip()
            logical = ""
    if logical.strip():
        word, _, rest = logical.strip().partition(" ")
        yield word.upper(), rest.strip()


def parse(path):
    plan = {"env": {}, "workdir": "/", "copies": [], "entrypoint": None, "cmd": None,
            "user": None, "from": None}
    for ins, arg in instructions(path):
        if ins == "FROM":  # only the final stage describes the image
            plan = {"env": {}, "workdir": "/", "copies": [], "entrypoint": None,
                    "cmd": None, "user": None, "from": arg.split()[0]}
        elif ins == "ENV":
            parts = shlex.split(arg)
            if parts and "=" not in parts[0]:  # legacy "ENV key value"
                key, _, value = arg.partition(" ")
                plan["env"][key] = value.strip()
            else:
                for part in parts:
                    key, _, value = part.partition("=")
                    plan["env"][key] = value
        elif ins == "WORKDIR":
            plan["workdir"] = os.path.normpath(os.path.join(plan["workdir"], arg))
        elif ins == "USER":
            plan["user"] = arg.split(":")[0]
        elif ins in ("COPY", "ADD"):
            words = json.loads(arg) if arg.startswith("[") else shlex.split(arg)
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            if any(f.startswith("--from") for f in flags):
                fail(f"{ins} {arg}: copying from another stage is not emulated")
            *sources, dest = paths
            dest_abs = os.path.normpath(os.path.join(plan["workdir"], dest))
            plan["copies"].append((sources, dest_abs, dest.endswith("/") or len(sources) > 1))
        elif ins in ("ENTRYPOINT", "CMD"):
            try:
                value = json.loads(arg)
            except ValueError:
                fail(f"{ins} is not in exec form (a JSON array): {arg}")
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                fail(f"{ins} is not a JSON array of strings: {arg}")
            plan[ins.lower()] = value
    return plan


plan = parse(dockerfile)
argv = (plan["entrypoint"] or []) + (plan["cmd"] or [])
if not argv:
    fail("the Dockerfile has no exec-form ENTRYPOINT or CMD")
print(f"== start command from the Dockerfile: {json.dumps(argv)}")

# ------------------------------------------------------------------ temp area
tmp = tempfile.mkdtemp(prefix="docker-check-")
os.chmod(tmp, 0o755)  # the unprivileged server user must reach the venv
rootfs = os.path.join(tmp, "rootfs")
home = os.path.join(tmp, "home")
os.makedirs(rootfs)
os.makedirs(home)
server = None


def cleanup():
    if server is not None and server.poll() is None:
        stop(server)
    for dirpath, dirnames, _ in os.walk(tmp):
        os.chmod(dirpath, 0o755)
    shutil.rmtree(tmp, ignore_errors=True)


def stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)

try:
    # ------------------------------------------------------- stage the copies
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    print(f"== staging the files the image copies from {context}")
    for sources, dest_abs, dest_is_dir in plan["copies"]:
        target = rootfs + dest_abs
        for src in sources:
            matches = sorted(glob.glob(os.path.join(context, src)))
            if not matches:
                fail(f"COPY source {src!r} not found in {context} (docker build would fail)")
            for match in matches:
                if os.path.isdir(match):  # a directory's contents are copied
                    shutil.copytree(match, target, ignore=ignore, dirs_exist_ok=True)
                else:
                    if dest_is_dir or os.path.isdir(target):
                        os.makedirs(target, exist_ok=True)
                        shutil.copy2(match, os.path.join(target, os.path.basename(match)))
                    else:
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        shutil.copy2(match, target)
            print(f"   {src} -> {dest_abs}")
    workdir = rootfs + plan["workdir"]
    os.makedirs(workdir, exist_ok=True)
    subprocess.run(["chmod", "-R", "a-w", rootfs], check=True)

    # ------------------------------------------- whom the server runs as
    run_uid = None
    if os.geteuid() == 0:
        user = plan["user"] or "0"
        if user.isdigit():
            run_uid = int(user)
        else:
            run_uid = 65534  # a named user only exists in the image
            print(f"   USER {user} has no numeric id; running as uid {run_uid}")
        if run_uid == 0:
            run_uid = None

    def as_user(cmd):
        if run_uid is None:
            return cmd
        return ["setpriv", f"--reuid={run_uid}", f"--regid={run_uid}", "--clear-groups",
                "--inh-caps=-all"] + cmd

    def real_python(candidate):
        found = shutil.which(candidate)
        if not found:
            return None
        out = subprocess.run([found, "-c", "import sys; print(sys.executable)"],
                             capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else None

    # The venv's interpreter must be readable by the server user (a pyenv
    # Python under /root is not); fall back to the system one, then to root.
    interpreter = real_python(venv_python)
    if interpreter is None:
        fail(f"interpreter {venv_python!r} not found")
    if run_uid is not None:
        usable = [p for p in (interpreter, real_python("/usr/bin/python3")) if p]
        for cand in usable:
            probe = subprocess.run(as_user([cand, "-c", "import venv"]),
                                   capture_output=True, cwd="/")
            if probe.returncode == 0:
                interpreter = cand
                break
        else:
            print(f"   no interpreter usable by uid {run_uid}; running the server as root "
                  "(the read-only copy then does not stop writes)")
            run_uid = None
    if run_uid is not None:
        os.chown(home, run_uid, run_uid)

    version = subprocess.run([interpreter, "-c",
                              "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    tag = re.search(r"python:(\d+\.\d+)", plan["from"] or "")
    if tag and tag.group(1) != version:
        print(f"   warning: image uses Python {tag.group(1)}, this check uses {version}")

    # ---------------------------------------------------------- the venv
    venv = os.path.join(tmp, "venv")
    requirements = os.path.join(context, "requirements.lock")
    if not os.path.isfile(requirements):
        fail(f"no {requirements}: generate it from requirements.txt with 'make lock'")
    print(f"== clean virtualenv ({interpreter}, Python {version}) with {requirements}")
    t0 = time.monotonic()
    subprocess.run([interpreter, "-m", "venv", venv], check=True)
    pip = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
                          "--disable-pip-version-check", "--require-hashes", "-r", requirements],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if pip.returncode != 0:
        print(pip.stdout[-4000:], file=sys.stderr)
        fail("pip install --require-hashes -r requirements.lock failed in the clean virtualenv")
    print(f"   installed in {time.monotonic() - t0:.1f} s")

    # ---------------------------------------------------------- start it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd, replaced = [], False
    it = iter(argv)
    for word in it:
        if word.startswith("--server.port="):
            cmd.append(f"--server.port={port}")
            replaced = True
        elif word == "--server.port":
            next(it, None)
            cmd += [word, str(port)]
            replaced = True
        else:
            cmd.append(word)
    if not replaced:
        cmd.append(f"--server.port={port}")

    env = {
        "PATH": os.path.join(venv, "bin") + ":/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }
    image_home = plan["env"].get("HOME", "/root")
    for key, value in plan["env"].items():
        # paths under the image's HOME or /tmp go to our private writable home
        for prefix in (image_home, "/tmp"):
            if value == prefix or value.startswith(prefix.rstrip("/") + "/"):
                value = home + value[len(prefix):]
                break
        env[key] = value
    env["HOME"] = home

    log_path = os.path.join(tmp, "server.log")
    who = f"uid {run_uid}" if run_uid is not None else f"uid {os.geteuid()}"
    print(f"== starting in {plan['workdir']} (read-only copy) as {who}: {' '.join(cmd)}")
    with open(log_path, "wb") as log:
        t_start = time.monotonic()
        server = subprocess.Popen(as_user(cmd), cwd=workdir, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)

    # ---------------------------------------------------------- poll health
    url = f"http://127.0.0.1:{port}/_stcore/health"
    healthy_after = None
    while time.monotonic() - t_start < timeout:
        if server.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200 and resp.read().strip() == b"ok":
                    healthy_after = time.monotonic() - t_start
                    break
        except OSError:
            pass
        time.sleep(0.2)

    page_ok = False
    if healthy_after is not None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                page_ok = resp.status == 200 and b"<html" in resp.read().lower()
        except OSError:
            page_ok = False

    exited = server.poll()
    stop(server)
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        log_text = fh.read()

    if healthy_after is None:
        why = (f"the server exited with code {exited}" if exited is not None
               else f"no healthy answer within {timeout:.0f} s")
        print(f"docker_check: FAILED: {why}. Server output:", file=sys.stderr)
        print(log_text[-4000:] or "(no output)", file=sys.stderr)
        sys.exit(1)
    if not page_ok:
        print("docker_check: FAILED: healthy, but / did not serve the app page. Server output:",
              file=sys.stderr)
        print(log_text[-4000:] or "(no output)", file=sys.stderr)
        sys.exit(1)
    print(f"healthy after {healthy_after:.2f} s on port {port}; / serves the app page")

    # The health endpoint answers before any script runs: also run the main
    # script once, headless, with the same user, environment and read-only copy.
    if (len(cmd) >= 3 and os.path.basename(cmd[0]) == "streamlit" and cmd[1] == "run"
            and os.environ.get("DOCKER_CHECK_SKIP_APPTEST") != "1"):
        script = os.path.join(workdir, cmd[2])
        probe = (
            "import sys\n"
            "from streamlit.testing.v1 import AppTest\n"
            "at = AppTest.from_file(sys.argv[1], default_timeout=60).run()\n"
            "for exc in at.exception:\n"
            "    print(exc.message)\n"
            "    print('\\n'.join(exc.stack_trace))\n"
            "sys.exit(1 if len(at.exception) else 0)\n"
        )
        print(f"== one headless run of {cmd[2]} (DOCKER_CHECK_SKIP_APPTEST=1 skips it)")
        t0 = time.monotonic()
        venv_py = os.path.join(venv, "bin", "python")
        run = subprocess.run(as_user([venv_py, "-c", probe, script]), cwd=workdir, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             stdin=subprocess.DEVNULL, timeout=120)
        if run.returncode != 0:
            print(f"docker_check: FAILED: {cmd[2]} raised when run headless:", file=sys.stderr)
            print(run.stdout[-4000:], file=sys.stderr)
            sys.exit(1)
        print(f"   ran without exceptions in {time.monotonic() - t0:.1f} s")
    print("docker_check: passed")
finally:
    cleanup()
PY
