#!/usr/bin/env bash
# npm test's first step (package.json "pretest"): the Debian packages the
# browser and cluster tests drive, Chromium (/usr/bin/chromium, never a
# downloaded one) and nginx, installed when missing and this user may (root,
# or sudo without a password). Where it may not, mocha leaves those tests out
# and says so (.mocharc.cjs); under CI a missing package fails the run instead.
set -uo pipefail

missing() {
  [ -x /usr/bin/chromium ] || echo chromium
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || echo nginx
}

packages=$(missing)
[ -z "$packages" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo -n)
  if [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
    echo "test set-up: installing $(echo $packages) (apt-get)"
    # shellcheck disable=SC2086
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq $(echo $packages) >/dev/null" ||
      echo "test set-up: apt-get could not install $(echo $packages)"
  fi
fi

packages=$(missing)
[ -z "$packages" ] && exit 0
for package in $packages; do
  case $package in
    chromium) echo "test set-up: no /usr/bin/chromium: the browser tests (test/browser) will be skipped; apt-get install chromium runs them" ;;
    nginx) echo "test set-up: no nginx: the cluster tests (test/cluster/cluster.test.ts, launcher.test.ts) will be skipped; apt-get install nginx runs them" ;;
  esac
done
if [ -n "${CI:-}" ]; then
  echo "test set-up: CI runs every test: failing"
  exit 1
fi
exit 0
