#!/usr/bin/env bash
# Installs the Debian tools the tests use, only when missing (idempotent; quiet when all are there).
# libxml2-utils: xmllint, an independent check that published KML and RSS are well-formed.
# netcdf-bin: ncgen/ncdump, to make NetCDF-3 fixtures and check the NetCDF-4 we generate.
# gdal-bin: ogrinfo, a real KML reader, and gdal_contour, the contouring peer of the benchmark.
# chromium: the headless browser the viewer tests drive through playwright-core (never a downloaded one).
# redis-server: a real Redis for the shared-throttle tests (two servers, one limit); tests start their own on a free port.
# varnish, varnish-modules: a real Varnish (with vmod xkey) in front of the server, for the CDN tests of deploy/varnish/ashcast.vcl.
set -euo pipefail
packages=(libxml2-utils netcdf-bin gdal-bin chromium redis-server varnish varnish-modules)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing test tools from Debian: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
