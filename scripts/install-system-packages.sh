#!/bin/sh
# Debian packages the test suite uses: bubblewrap (the sandbox of the `python` code verifier),
# util-linux (prlimit), Python with the libraries GDPval code rules read deliverables with, and
# torch (CPU), onnx and pytest for the training sidecar (python/rubric-trainer; PyPI is not reachable),
# pip, setuptools and wheel to install the reward client (python/rubric-reward) the way users do,
# and chromium, the real browser the report page's tests drive through playwright-core (never a
# browser playwright downloads).
# Installs them when run as root; otherwise says what is missing and how to install it.
set -eu
PACKAGES="bubblewrap util-linux python3 python3-pip python3-setuptools python3-wheel python3-numpy python3-pandas python3-openpyxl python3-pdfminer python3-xlrd python3-torch python3-onnx python3-pytest chromium"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "system packages: all present"; exit 0; }
if [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  echo "system packages: installed$missing"
else
  echo "system packages missing:$missing" >&2
  echo "install them with: sudo apt-get install -y --no-install-recommends$missing" >&2
  exit 1
fi
