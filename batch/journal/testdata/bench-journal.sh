#!/usr/bin/env bash
# bench-journal.sh DOCS [BEFORE]: make bench-journal's runs, inside
# .ci/with-postgres. Without BEFORE, BenchmarkWorkers's live PostgreSQL
# cases of this tree, one after the other. With BEFORE (a git revision),
# each case runs for BEFORE's journal and then for this tree's, on the
# same cluster, before the next case: the two side by side in one run,
# under the same load. Each output line of a case is prefixed with
# "before " or "after " then (bench-journal.awk reads it).
set -euo pipefail
docs=$1
before=${2:-}
go=${GO:-go}
if [ -z "$before" ]; then
  exec "$go" test ./batch/journal -run '^$' -bench 'BenchmarkWorkers/postgres/live/' -benchtime "${docs}x" -count 1 -timeout 60m
fi
dir=$(mktemp -d /tmp/refbatch-bench-journal.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/before"
git archive "$before" | tar -x -C "$dir/before"
(cd "$dir/before" && "$go" test -c -o "$dir/before.test" ./batch/journal)
"$go" test -c -o "$dir/after.test" ./batch/journal
cd batch/journal
for rtt in 0ms 0.5ms 1ms; do
  for workers in 4 16 64; do
    for v in before after; do
      "$dir/$v.test" -test.run '^$' -test.bench "BenchmarkWorkers/postgres/live/rtt=$rtt/workers=$workers\$" \
        -test.benchtime "${docs}x" -test.count 1 -test.timeout 60m | sed "s/^Benchmark/$v Benchmark/"
    done
  done
done
