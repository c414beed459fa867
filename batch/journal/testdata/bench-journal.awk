# bench-journal.awk turns BenchmarkWorkers's live PostgreSQL lines into
# make bench-journal's table; every other line passes through. A line
# prefixed "before " or "after " (bench-journal.sh with a revision to
# compare) is a row of the build it names. ms/hold, the mean hold of the
# custody lock, is held / (locked/doc × docs/s); events/hold is "-" for
# a build that chained one transaction's events per hold.
BEGIN { printf "%-6s %-6s %7s %8s %5s %10s %7s %11s %10s %6s %5s\n", "build", "rtt", "workers", "docs/s", "held", "locked/doc", "ms/hold", "events/hold", "claims/doc", "rtt_ms", "cpu" }
/^(before|after) BenchmarkWorkers\/postgres\/live\// { build = $1; $0 = substr($0, length($1) + 2) }
/^BenchmarkWorkers\/postgres\/live\// {
  split($1, name, "/"); sub(/^rtt=/, "", name[4]); sub(/^workers=/, "", name[5]); sub(/-[0-9]+$/, "", name[5])
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  hold = m["locked/doc"] * m["docs/s"] > 0 ? 1000 * m["held"] / (m["locked/doc"] * m["docs/s"]) : 0
  batch = ("events/hold" in m) ? sprintf("%.1f", m["events/hold"]) : "-"
  printf "%-6s %-6s %7s %8.1f %5.2f %10.2f %7.2f %11s %10.2f %6.2f %5.2f\n", (build == "" ? "this" : build), name[4], name[5], m["docs/s"], m["held"], m["locked/doc"], hold, batch, m["claims/doc"], m["rtt_ms"], m["cpu"]
  build = ""
  next
}
/^(goos|goarch|pkg|cpu):/ || /^ok / || /^PASS$/ { next }
{ print }
