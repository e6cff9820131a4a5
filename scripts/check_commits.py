"""Commit subjects added since SINCE are at most 72 characters (run by `make lint`).

Why: a subject says what changed in a line a log can show; the why and how go in the body.
History before SINCE is left as it was. Outside a git checkout, or in a shallow clone
without SINCE, there is nothing to check and the script says so.
"""

from __future__ import annotations

import subprocess
import sys

SINCE = "cf266664e8a017ca98da6dfcd5b30de051f0e360"
LIMIT = 72


def main() -> int:
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False)

    if git("rev-parse", "--git-dir").returncode != 0:
        print("check_commits: not a git checkout, nothing to check")
        return 0
    if git("cat-file", "-e", f"{SINCE}^{{commit}}").returncode != 0:
        print(f"check_commits: {SINCE[:7]} is not in this clone (shallow?), nothing to check")
        return 0
    log = git("log", "--format=%h%x00%s", f"{SINCE}..HEAD")
    long = []
    for line in log.stdout.splitlines():
        commit, _, subject = line.partition("\0")
        if len(subject) > LIMIT:
            long.append(f"  {commit} ({len(subject)} characters): {subject}")
    if long:
        print(f"check_commits: commit subjects longer than {LIMIT} characters:", *long, sep="\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
