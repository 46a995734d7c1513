#!/bin/sh
# Seeds for each fuzz target, from the project's own captures only (samples/, written by btlens-scenario, and the
# scenario-written air and btsnooz captures of Tests/Fuzz/Seeds), in the shape each target reads:
#   readers, archive, pipeline   whole files; archive and pipeline also gzip, xz, zstd, bzip2, a tar.gz of rotated
#                        logs, a zip with a bug report's text
#   btsnoop pcap pcapng pklg monitor   the choice byte (datalink, linktype, byte order) then the records
#   btsnooz              a summary's records, a btsnoop-headed log, a bug report's text
#   decode l2cap ll tracker anonymizer addata   records framed as RecordFrames (`btlens-fuzz --frames`)
# Usage: seed-corpora.sh HARNESS OUTDIR   (never seeded from third-party captures: /work/shared is not read)
set -eu
harness=$1 out=$2
rm -rf "$out"
for t in readers btsnoop pcap pcapng pklg monitor btsnooz archive decode l2cap ll addata tracker anonymizer pipeline; do
  mkdir -p "$out/$t"
done
captures="samples/*.btsnoop samples/*.pcap samples/*.pklg Tests/Fuzz/Seeds/*.pcap Tests/Fuzz/Seeds/*.pcapng Tests/Fuzz/Seeds/*.btsnoop"
# A capture's bytes after its file header, behind the choice byte $2.
body() { printf "\\$(printf '%03o' "$2")"; tail -c +"$3" "$1"; }
for f in $captures Tests/Fuzz/Seeds/*.btsnooz_hci.log*; do
  n=${f##*/}
  head -c 16384 "$f" > "$out/readers/$n"
  head -c 16384 "$f" > "$out/pipeline/$n"
done
for f in samples/*.btsnoop Tests/Fuzz/Seeds/*.btsnoop; do
  n=${f##*/}
  case $(od -An -tu1 -j15 -N1 "$f" | tr -d ' ') in
    233) choice=0 ;;   # 1001 (H1)
    234) choice=1 ;;   # 1002 (H4)
    *) choice=2 ;;     # 2001 (monitor)
  esac
  body "$f" $choice 17 | head -c 16384 > "$out/btsnoop/$n"
  [ $choice -ne 2 ] || body "$f" 0 17 | head -c 16384 > "$out/monitor/$n"
done
for f in samples/*.pcap Tests/Fuzz/Seeds/*.pcap; do
  n=${f##*/}
  linktype=$(od -An -tu4 -j20 -N4 "$f" | tr -d ' ')
  i=0
  for l in 187 201 254 251 256 272 192; do [ "$l" = "$linktype" ] && break; i=$((i + 1)); done
  body "$f" $i 25 | head -c 16384 > "$out/pcap/$n"
  [ "$linktype" != 254 ] || body "$f" 1 25 | head -c 16384 > "$out/monitor/$n"
  [ "$linktype" = 187 ] || [ "$linktype" = 201 ] || [ "$linktype" = 254 ] || "$harness" --frames "$f" "$out/ll"
done
for f in Tests/Fuzz/Seeds/*.pcapng; do body "$f" 5 1 | head -c 16384 > "$out/pcapng/${f##*/}"; done
for f in samples/*.pklg; do
  case $f in *.be.pklg) choice=1 ;; *) choice=0 ;; esac
  body "$f" $choice 1 | head -c 16384 > "$out/pklg/${f##*/}"
done
# btsnooz: the btsnoop-headed log's records as a summary's (0x0C: records, version 2) and as a log's (1).
for f in Tests/Fuzz/Seeds/heart-rate-session.btsnooz-records.btsnooz_hci.log; do
  body "$f" 12 17 | head -c 16384 > "$out/btsnooz/summary-records"
  body "$f" 1 17 | head -c 16384 > "$out/btsnooz/log-records"
  python3 - "$f" "$out" <<'PY'
import base64, struct, sys, zlib
records = open(sys.argv[1], "rb").read()[16:][:8192]
summary = bytes([2]) + struct.pack("<Q", 1_700_000_000_000_000) + zlib.compress(records)
encoded = base64.b64encode(summary).decode()
text = "== dumpsys bluetooth_manager\n--- BEGIN:BTSNOOP_LOG_SUMMARY (%d bytes in) ---\n" % len(summary)
text += "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76)) + "\n--- END:BTSNOOP_LOG_SUMMARY ---\n"
out = sys.argv[2]
open(out + "/btsnooz/bugreport-text", "wb").write(b"\x02" + text.encode())
open(out + "/archive/bugreport-1.txt", "w").write(text)
PY
done
# Archives: a capture compressed each way, a tar.gz of two, a zip of a bug report's text and a capture.
tmp=$(mktemp -d)
cp samples/heart-rate-session.btsnoop "$tmp/btsnoop_hci.log"
cp samples/connection-churn.btsnoop "$tmp/btsnoop_hci.log.last"
gzip -9 -n -c "$tmp/btsnoop_hci.log" > "$out/archive/capture.gz"
xz -c "$tmp/btsnoop_hci.log" > "$out/archive/capture.xz"
zstd -q -c "$tmp/btsnoop_hci.log" > "$out/archive/capture.zst"
bzip2 -c "$tmp/btsnoop_hci.log" > "$out/archive/capture.bz2"
tar -czf "$out/archive/two.tar.gz" -C "$tmp" btsnoop_hci.log btsnoop_hci.log.last
cp "$out/archive/bugreport-1.txt" "$tmp/bugreport-1.txt"
(cd "$tmp" && zip -q -X "$OLDPWD/$out/archive/bugreport.zip" bugreport-1.txt btsnoop_hci.log.last)
rm -rf "$tmp"
cp "$out/readers/"*.btsnooz_hci.log* "$out/archive/"
# The whole pipeline opens archives and bug reports by path too (rotated logs in one joined, a bug report's text).
cp "$out/archive/"* "$out/pipeline/"
# Framed records of every HCI sample, for the decoder, L2CAP, tracker and anonymizer targets.
"$harness" --frames samples/*.btsnoop samples/*.pklg samples/heart-rate-session.pcap samples/fragmented-acl.monitor.pcap "$out/decode"
for t in l2cap tracker anonymizer addata; do cp "$out/decode/"* "$out/$t/"; done
echo "seeds: $(for t in $(ls "$out"); do printf '%s %s, ' "$t" "$(ls "$out/$t" | wc -l)"; done)"
