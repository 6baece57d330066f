"""Stand-in for the get-pip.py script ansible-test downloads to bootstrap pip.

ansible-test fetches get-pip from a host this network cannot reach. This
script does the same job from the standard library (ensurepip) and PyPI:
it is copied to ~/.ansible/test/cache/get_pip_<version>.py by `make sanity`.
"""
import ensurepip
import os
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
cert = "/etc/ssl/certs/ca-certificates.crt"
cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
if os.path.exists(cert):
    cmd += ["--cert", cert]
sys.exit(subprocess.call(cmd + args))
