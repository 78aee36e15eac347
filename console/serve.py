"""Serve Docket for real: check the environment, migrate, collect the static files, then run the
Procfile's web (gunicorn), worker and beat (Celery) under honcho, which stops all of them when one
ends and passes SIGTERM and Ctrl-C on. `make serve` runs it; so can a service manager:

    python -m console.serve [--port 8000] [web worker beat]

Only the named processes run when some are named (a second machine: `web worker`, no beat).
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# What serving needs from the environment, and why: nothing here falls back to a default.
REQUIRED = {
    "DATABASE_URL": "the PostgreSQL database, postgres://USER:PASSWORD@HOST:5432/NAME",
    "CELERY_BROKER_URL": "the broker the web processes and workers share, redis://HOST:6379/0",
    "DJANGO_SECRET_KEY": "a long random string, the same on every machine",
    "DJANGO_ALLOWED_HOSTS": "the host names the console answers to, comma-separated",
}
PROCESSES = ("web", "worker", "beat")


def missing(env: dict) -> list[str]:
    """Return one line per variable that is unset or wrong (empty when serving can start)."""
    out = [f"{name}: not set ({why})" for name, why in REQUIRED.items() if not env.get(name)]
    url = env.get("DATABASE_URL", "")
    if url and not url.startswith(("postgres://", "postgresql://")):
        scheme = url.split(":")[0]
        out.append(f"DATABASE_URL: must be a PostgreSQL URL (postgres://...), not {scheme}")
    if env.get("DJANGO_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}:
        out.append("DJANGO_DEBUG: must be off to serve (it is for make run)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m console.serve", description=__doc__)
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("PORT") or 8000), help="the web port"
    )
    parser.add_argument("processes", nargs="*", metavar="PROCESS", help="web, worker, beat")
    args = parser.parse_args(argv)
    unknown = [p for p in args.processes if p not in PROCESSES]
    if unknown:
        parser.error(f"unknown process {unknown[0]!r} (the Procfile has {', '.join(PROCESSES)})")
    problems = missing(dict(os.environ))
    if problems:
        print("Cannot serve Docket:", *(f"  {p}" for p in problems), sep="\n", file=sys.stderr)
        print("See docs/operations.md (and .env.example).", file=sys.stderr)
        return 2
    # Beat keeps its schedule in the var folder, which settings create only for SQLite.
    Path(os.environ.get("DOCKET_VAR_DIR") or BASE_DIR / "var").mkdir(parents=True, exist_ok=True)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    manage = [sys.executable, str(BASE_DIR / "manage.py")]
    if not args.processes or "web" in args.processes:
        for step in (["migrate", "--noinput"], ["collectstatic", "--noinput", "--verbosity", "0"]):
            done = subprocess.run([*manage, *step], env=env, cwd=BASE_DIR, check=False)
            if done.returncode:
                print(f"Cannot serve Docket: manage.py {step[0]} failed.", file=sys.stderr)
                return done.returncode
    honcho = [
        str(bin_dir / "honcho"),
        "--no-colour",
        # The environment is the settings' only source: no .env file is read here either.
        "--env",
        os.devnull,
        "--app-root",
        str(BASE_DIR),
        "start",
        "--port",
        str(args.port),
        *args.processes,
    ]
    # Replace this process: SIGTERM from a service manager (or make) reaches honcho itself.
    os.chdir(BASE_DIR)
    os.execve(honcho[0], honcho, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
