#!/usr/bin/env bash
# seedance-certs.sh OUT [--namespace NS] [--service NAME] [--san SAN]... [--days N] [--client-cn CN]
#
# The openssl recipe for Seedance's mutual TLS (deploy/README.md, step 2; docs/SECURITY.md): into
# directory OUT it writes
#   ca.crt, ca.key              a CA of Seedance's own (EC P-256), kept if OUT already has one, so
#                               that re-running the script renews the two leaf certificates only;
#   tls.crt, tls.key            the server's certificate (extendedKeyUsage serverAuth) for
#                               NAME.NS.svc and NAME.NS.svc.cluster.local, plus every --san;
#   scheduler.crt, scheduler.key kube-scheduler's client certificate (extendedKeyUsage clientAuth,
#                               CN --client-cn, default seedance-scheduler): the extender's
#                               tlsConfig.certFile / keyFile.
# The server runs with --tls-cert tls.crt --tls-key tls.key --client-ca ca.crt; the same CA signs
# both leaves, so kube-scheduler's tlsConfig.caFile is ca.crt too. Keys are written 0600.
# Defaults: NS seedance-system, NAME seedance, 365 days. --san takes openssl's form (DNS:host,
# IP:127.0.0.1). Exit 2 on a bad argument or when openssl fails (nothing is left half-written:
# the files are made in a temporary directory and moved into OUT at the end).
set -euo pipefail

usage() { echo "usage: seedance-certs.sh OUT [--namespace NS] [--service NAME] [--san SAN]... [--days N] [--client-cn CN]" >&2; exit 2; }

[ $# -ge 1 ] || usage
OUT=$1
shift
NS=seedance-system
NAME=seedance
DAYS=365
CLIENT_CN=seedance-scheduler
SANS=()
while [ $# -gt 0 ]; do
  case $1 in
    --namespace) [ $# -ge 2 ] || usage; NS=$2; shift 2 ;;
    --service) [ $# -ge 2 ] || usage; NAME=$2; shift 2 ;;
    --san) [ $# -ge 2 ] || usage; SANS+=("$2"); shift 2 ;;
    --days) [ $# -ge 2 ] || usage; DAYS=$2; shift 2 ;;
    --client-cn) [ $# -ge 2 ] || usage; CLIENT_CN=$2; shift 2 ;;
    *) echo "seedance-certs.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
case $DAYS in ''|*[!0-9]*) echo "seedance-certs.sh: --days '$DAYS' is not a whole number of days" >&2; exit 2 ;; esac
for s in "${SANS[@]+"${SANS[@]}"}"; do
  case $s in DNS:?*|IP:?*) ;; *) echo "seedance-certs.sh: --san '$s' is not DNS:name or IP:address" >&2; exit 2 ;; esac
done
command -v openssl >/dev/null || { echo "seedance-certs.sh: openssl is not on PATH" >&2; exit 2; }

mkdir -p "$OUT"
TMP=$(mktemp -d "$OUT/.certs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
umask 077

fail() { echo "seedance-certs.sh: $1 failed (openssl's message above)" >&2; exit 2; }
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

if [ -s "$OUT/ca.crt" ] && [ -s "$OUT/ca.key" ]; then
  cp "$OUT/ca.crt" "$OUT/ca.key" "$TMP/"
else
  openssl req -x509 "${newkey[@]}" -days "$DAYS" -subj "/CN=seedance-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$TMP/ca.key" -out "$TMP/ca.crt" 2>"$TMP/log" ||
    { cat "$TMP/log" >&2; fail "the CA"; }
fi

san="DNS:$NAME.$NS.svc,DNS:$NAME.$NS.svc.cluster.local"
for s in "${SANS[@]+"${SANS[@]}"}"; do san+=",$s"; done
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' \
  "$san" > "$TMP/server.ext"
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' > "$TMP/client.ext"

leaf() {  # leaf NAME CN EXT
  openssl req "${newkey[@]}" -subj "/CN=$2" -keyout "$TMP/$1.key" -out "$TMP/$1.csr" 2>"$TMP/log" ||
    { cat "$TMP/log" >&2; fail "the $1 key"; }
  openssl x509 -req -days "$DAYS" -CA "$TMP/ca.crt" -CAkey "$TMP/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -in "$TMP/$1.csr" -extfile "$TMP/$3" -out "$TMP/$1.crt" 2>"$TMP/log" ||
    { cat "$TMP/log" >&2; fail "signing the $1 certificate"; }
  openssl verify -CAfile "$TMP/ca.crt" "$TMP/$1.crt" >/dev/null 2>"$TMP/log" ||
    { cat "$TMP/log" >&2; fail "verifying the $1 certificate"; }
}
leaf tls "$NAME.$NS.svc" server.ext
leaf scheduler "$CLIENT_CN" client.ext

chmod 0644 "$TMP/ca.crt" "$TMP/tls.crt" "$TMP/scheduler.crt"
for f in ca.crt ca.key tls.crt tls.key scheduler.crt scheduler.key; do mv -f "$TMP/$f" "$OUT/$f"; done
cat <<EOF
wrote $OUT/{ca.crt,ca.key,tls.crt,tls.key,scheduler.crt,scheduler.key} (server: $san; client CN=$CLIENT_CN; $DAYS days)
the server's Secret:  kubectl -n $NS create secret generic seedance-tls --from-file=$OUT/tls.crt --from-file=$OUT/tls.key --from-file=$OUT/ca.crt
kube-scheduler's:     kubectl -n $NS create secret tls seedance-scheduler-client --cert=$OUT/scheduler.crt --key=$OUT/scheduler.key
keep $OUT/ca.key off the cluster.
EOF
