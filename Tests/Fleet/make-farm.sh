#!/bin/sh
# A device farm's captures for the fleet tests and the benchmark, from btlens-scenario:
#   make-farm.sh SCENARIO_BINARY OUTDIR
# writes OUTDIR/build-411/ and OUTDIR/build-412/, each holding <test>-<serial>-btsnoop_hci.log per test and
# device (the name Android's test harness gives them), and OUTDIR/truth/ with each ground-truth capture's manifest
# (build-N--<test>-<serial>-btsnoop_hci.log.truth.json). Five tests play a fixed list of ground-truth episodes (planted problems and
# controls), each device with its own seed; two tests are named scenarios. The builds are the same except that
# build 412's sync_sensor test plays one more episode after the others, a link left connected while idle
# (lingering-idle): the one planted waste the build diff must find. build-412 also holds a truncated capture and a
# file that is no capture at all, which the export must turn into captures rows with their errors.
set -eu
scenario=$1
out=$2
rm -rf "$out"
mkdir -p "$out/build-411" "$out/build-412" "$out/truth"

# test name : episodes
tests="sync_sensor:poll-interleaved,discover-characteristics-used,prompt-disconnect
pair_device:discover-all-services,scan-stopped-on-connect,fast-then-relaxed
reconnect:reconnect-by-scan,spread-reconnections,disconnect-after-unsubscribe
firmware_update:fast-and-busy,att-slow-response,redundant-discovery
background_scan:duplicate-scans,scan-after-connect,advertising-stopped-by-connect"
serials="R58M41ABCDE 1A2B3C4D5E6F emulator-5554 HT7A1B2C3D"
extra=lingering-idle

n=0
echo "$tests" | while IFS=: read -r test episodes; do
  n=$((n + 1))
  s=0
  for serial in $serials; do
    s=$((s + 1))
    seed=$((100 * n + s))
    for build in 411 412; do
      list=$episodes
      if [ "$build" = 412 ] && [ "$test" = sync_sensor ]; then list="$episodes,$extra"; fi
      file="$out/build-$build/$test-$serial-btsnoop_hci.log"
      "$scenario" truth --seed "$seed" --episodes "$list" "$file"
      mv "$file.truth.json" "$out/truth/build-$build--$test-$serial-btsnoop_hci.log.truth.json"
    done
  done
done

# Named scenarios: a heart-rate session and a beacon scan, on two devices each, the same in both builds.
for test in heart-rate-session beacons; do
  for serial in R58M41ABCDE emulator-5554; do
    name=$(echo "$test" | tr '-' '_')
    "$scenario" write "$test" "$out/build-411/$name-$serial-btsnoop_hci.log"
    cp "$out/build-411/$name-$serial-btsnoop_hci.log" "$out/build-412/$name-$serial-btsnoop_hci.log"
  done
done

# What a farm also collects: a capture cut short mid-record, and a file that is not a capture.
head -c 1000 "$out/build-411/sync_sensor-R58M41ABCDE-btsnoop_hci.log" > "$out/build-412/cut-short.btsnoop"
printf 'device log rotated\n' > "$out/build-412/logcat-R58M41ABCDE.txt"
