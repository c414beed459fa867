# bench-journal.awk turns BenchmarkWorkers's live PostgreSQL lines into
# make bench-journal's table; every other line passes through.
BEGIN { printf "%-8s %7s %9s %6s %10s %10s %7s %5s\n", "rtt", "workers", "docs/s", "held", "locked/doc", "claims/doc", "rtt_ms", "cpu" }
/^BenchmarkWorkers\/postgres\/live\// {
  split($1, name, "/"); sub(/^rtt=/, "", name[4]); sub(/^workers=/, "", name[5]); sub(/-[0-9]+$/, "", name[5])
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  printf "%-8s %7s %9.1f %6.2f %10.2f %10.2f %7.2f %5.2f\n", name[4], name[5], m["docs/s"], m["held"], m["locked/doc"], m["claims/doc"], m["rtt_ms"], m["cpu"]
  next
}
/^(goos|goarch|pkg|cpu):/ || /^ok / || /^PASS$/ { next }
{ print }
