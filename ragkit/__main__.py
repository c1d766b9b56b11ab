"""``python -m ragkit``: the ``ragkit`` command (:mod:`ragkit.cli`), for an environment whose
scripts folder is not on ``PATH``.

Example:
    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, "-m", "ragkit", "--help"]).returncode  # doctest: +SKIP
    0
"""

from ragkit.cli import app

if __name__ == "__main__":
    app(prog_name="ragkit")
